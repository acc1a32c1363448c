"""``symmetric: x`` — no preferred direction along x: terms odd in x leave the library."""

import pytest
import sympy

from symweak import GrammarError
from symweak.discover._library import kept_by_filters
from symweak.grammar import parse_constraints, parse_terms
from symweak.rules import apply_rules

t, x, y = sympy.symbols("t x y")


def test_symmetric_is_a_mirror_filter_per_coordinate():
    c = parse_constraints("symmetric: x, y", coords=["t", "x", "y"], fields=["u"])
    assert [r.name for r in c.rules] == ["symmetric(x)", "symmetric(y)"]
    assert c.rules[0].substitutions == ((x, -x),)
    assert {r.action for r in c.rules} == {"filter"}


def test_symmetric_removes_the_terms_odd_in_x():
    u = sympy.Function("u")(t, x)
    c = parse_constraints("symmetric: x", coords=["t", "x"], fields=["u"])
    lib = parse_terms("u, u^2, u_x, u_xx, u_xxx, d_x(u^2), d_xx(u^2), u_x^2, u*u_x^2, u_x^3")
    lhs = parse_terms("u_t")[0]
    libs, reports = apply_rules({lhs: lib}, c.rules, (t, x), (u,))
    assert [s.short() for s in libs[lhs]] == [
        "u", "u^2", "u_xx", "d_xx(u^2)", "u_x^2", "u*u_x^2",
    ]  # fmt: skip
    assert reports[0].removed == {"u_t": ["u_x", "u_xxx", "d_x(u^2)", "u_x^3"]}


class _Problem:
    """What kept_by_filters reads of a problem."""

    def __init__(self, constraints):
        self.constraints = constraints
        self.rules = ()
        self.coords = (t, x)
        self.fields = (sympy.Function("u")(t, x),)


def test_product_terms_joining_later_are_filtered_too():
    c = parse_constraints("symmetric: x", coords=["t", "x"], fields=["u"])
    lhs = parse_terms("u_t")[0]
    products = parse_terms("u_x^2, u*u_x^2, u_x^3, d_x(u_x^2)")
    kept = kept_by_filters(_Problem(c), lhs, products)
    assert [s.short() for s in kept] == ["u_x^2", "u*u_x^2"]
    assert kept_by_filters(_Problem(None), lhs, products) == products


@pytest.mark.parametrize(
    "text, message",
    [
        ("symmetric: t", "`symmetric:` takes space coordinates (here: x); not t (time has a "
         "direction)."),
        ("symmetric: q", "`symmetric:` takes space coordinates (here: x); `q` is not one."),
        ("symmetric: x, x", "`x` is listed twice in `symmetric:`."),
        ("symmetric:", "A statement has nothing after `:`."),
    ],
)  # fmt: skip
def test_symmetric_errors(text, message):
    with pytest.raises(GrammarError) as err:
        parse_constraints(text, coords=["t", "x"], fields=["u"])
    assert str(err.value).startswith(message)

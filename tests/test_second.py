"""Equations of second order in time: the lower time derivatives of the left-hand side's
field join both libraries (a damping u_t beside u_tt), and the bench's 1-D cases."""

import pytest
import sympy

import symweak
from symweak.bench import columns, generate
from symweak.bench._second import SECOND_ORDER
from symweak.bench._strong import strong_form_fit
from symweak.discover._library import time_terms
from symweak.grammar._parser import parse_equation


def _lhs(*names):
    return [parse_equation(f"{n} = u").lhs for n in names]


@pytest.mark.parametrize(
    "lhs, held, expected",
    [
        (("u_tt",), "", ["u_t"]),
        (("u_ttt",), "", ["u_t", "u_tt"]),
        (("u_tt",), "u_t", []),
        (("u_t",), "", []),
        (("u_tt", "v_tt"), "", ["u_t", "v_t"]),
        (("u_txx",), "", []),
    ],
)
def test_the_lower_time_derivatives_of_each_left_hand_side(lhs, held, expected):
    library = list(parse_equation(f"w_tt = {held}").terms) if held else []
    assert [t.short() for t in time_terms(_lhs(*lhs), library)] == expected


def test_time_terms_differentiate_the_field_along_t_only():
    (term,) = time_terms(_lhs("u_tt"))
    t = sympy.Symbol("t")
    assert term.alpha == ((t, 1),)
    assert term.orders(("t", "x")) == (1, 0)


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_order_cases_obey_their_equations(name):
    obs = generate(name, cache=False)
    assert obs.field_names == ("u",)
    for eq in SECOND_ORDER[name].true_equations():
        fit = strong_form_fit(obs, eq, {"t": False, "x": True})
        for term, coef in eq.coefficients.items():
            assert fit[term] == pytest.approx(float(coef), rel=0.01), term.short()


def test_the_full_grid_finds_a_damping_term():
    res = symweak.discover(generate("telegraph"), ops="+,-,*", lhs="u_tt", seed=0, progress=False)
    assert res.method == "grid"
    coefs = {t.short(): float(c) for t, c in res.system[0].coefficients.items()}
    assert set(coefs) == {"u_t", "u_xx"}
    assert coefs["u_t"] == pytest.approx(-0.3, rel=0.01)
    assert coefs["u_xx"] == pytest.approx(1.0, rel=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, expected, rel",
    [
        ("telegraph", {"u_t": -0.3, "u_xx": 1.0}, 0.05),
        ("klein_gordon", {"u": -1.0, "u^3": -1.0, "u_xx": 0.5}, 0.03),
    ],
)
def test_the_network_path_on_point_columns(name, expected, rel):
    system = SECOND_ORDER[name]
    obs = columns(generate(name).sample(0.1, seed=0), seed=0)
    res = symweak.discover(obs, ops=system.ops, lhs="u_tt", seed=0, progress=False)
    coefs = {t.short(): float(c) for t, c in res.system[0].coefficients.items()}
    assert set(coefs) == set(expected)
    for term, value in expected.items():
        assert coefs[term] == pytest.approx(value, rel=rel), term
    assert set(res.verdicts) == set(expected)
    assert set(res.verdicts.values()) == {"determined"}

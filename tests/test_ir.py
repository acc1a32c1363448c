import math

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from symweak import Equation, IRError, System, Term, parse_equation
from symweak.ir import coords, field, strong_monomials, to_weak_terms

t, x, y = sympy.symbols("t x y")
U = sympy.Function("u")(t, x)
V = sympy.Function("v")(t, x)


# ----------------------------------------------------------------- symbols
def test_field_and_coords_are_plain_sympy_objects():
    assert coords("t, x") == (t, x)
    assert coords(["t", "x", "y"]) == (t, x, y)
    assert field("u", "tx") == sympy.Function("u")(t, x)
    with pytest.raises(IRError, match="not a single letter"):
        coords("t, xx")
    with pytest.raises(IRError, match="no underscores"):
        field("u_x", "tx")
    with pytest.raises(IRError, match="reserved"):
        field("sin", "tx")
    with pytest.raises(IRError, match="duplicate"):
        coords("t, x, x")


# ----------------------------------------------------------------- terms
def test_term_maps_to_unevaluated_derivative():
    term = Term(U**2, "x")
    expr = term.to_sympy()
    assert isinstance(expr, sympy.Derivative)
    assert expr == sympy.Derivative(U**2, x)
    assert expr.doit() == 2 * U * sympy.Derivative(U, x)
    assert Term(U**3).to_sympy() == U**3


def test_term_accepts_alpha_in_several_spellings():
    expected = Term(U, {x: 2})
    for alpha in ("xx", {"x": 2}, [x, x], ((x, 2),), {x: 1, "x": 1}):
        assert Term(U, alpha) == expected
    assert Term(U, "xx").orders((t, x)) == (0, 2)
    assert Term(U, "tx").total_order == 2


def test_numeric_factor_and_constant_do_not_change_the_term():
    assert Term(U**2, "x") == Term(-3 * U**2, "x") == Term(U**2 / 2 + 7, "x")
    assert hash(Term(U**2, "x")) == hash(Term(U**2 / 2 + 7, "x"))
    assert Term(U**2) != Term(U**2 + 1)  # undifferentiated: a constant matters
    factor, canon = Term(-6 * U**2 + 1, "x").canonical()
    assert factor == -6 and canon.F == U**2


def test_term_keeps_what_the_user_gave():
    term = Term(-3 * U**2, "x")
    assert term.F == -3 * U**2
    assert term.short() == "d_x(-3*u^2)"


@pytest.mark.parametrize(
    "F, alpha, message",
    [
        (sympy.Derivative(U**2, x) * U, None, "only derivatives of a field"),
        (sympy.Integer(3), "x", "identically zero"),
        (U, "y", "no field in F depends on that coordinate"),
        (U * t, None, "free symbol"),
        ("u**2", None, "must be a SymPy expression"),
    ],
)
def test_bad_terms_are_rejected_with_reason(F, alpha, message):
    with pytest.raises(IRError, match=message):
        Term(F, alpha)


def test_negative_order_rejected():
    with pytest.raises(IRError, match="not a non-negative integer"):
        Term(U, {x: -1})


def test_printing():
    assert Term(U**2, "x").short() == "d_x(u^2)"
    assert Term(U, "xx").short() == "u_xx"
    assert Term(U * V, "tx").short() == "d_tx(u*v)"
    assert Term(sympy.sin(U)).short() == "sin(u)"
    assert Term(U**2, "x").latex() == r"\partial_{x}\left(u^{2}\right)"
    assert Term(U, "xx").latex() == r"\partial_{xx} u"
    assert repr(Term(U, "xx")) == "Term('u_xx')"
    omega = sympy.Function("omega")(t, x)
    assert Term(omega, "x").latex() == r"\partial_{x} \omega"


def test_strong_form_recognises_equal_terms():
    assert Term(U**2, "x").strong() == sympy.expand(2 * U * sympy.Derivative(U, x))
    pairs = to_weak_terms(U * sympy.Derivative(U, x))
    assert len(pairs) == 1
    coeff, term = pairs[0]
    assert term == Term(U**2, "x")
    assert sympy.simplify(coeff * term.strong() - U * sympy.Derivative(U, x)) == 0


def test_to_weak_terms_handles_functions_and_keeps_products_of_derivatives():
    ((coeff, term),) = to_weak_terms(sympy.sin(U) * sympy.Derivative(U, x))
    assert term == Term(sympy.cos(U), "x")
    assert sympy.simplify(coeff * term.strong() - sympy.sin(U) * sympy.Derivative(U, x)) == 0
    # u_x^2 is no total derivative: it stays a product term (issue 25)
    ((coeff, term),) = to_weak_terms(sympy.Derivative(U, x) ** 2)
    assert (coeff, term.short()) == (1, "u_x^2")


def test_term_from_sympy_round_trip():
    for term in [Term(U**2, "x"), Term(U, "xxx"), Term(U * V, "tx"), Term(U**3)]:
        assert Term.from_sympy(term.to_sympy()) == term
    nested = sympy.Derivative(sympy.Derivative(U**2, x, evaluate=False), x, evaluate=False)
    assert Term.from_sympy(nested) == Term(U**2, "xx")
    assert Term.from_sympy(-2 * sympy.Derivative(U**2, x)).F == -2 * U**2


# ----------------------------------------------------------------- equations
def burgers():
    return Equation(Term(U, "t"), {Term(U**2, "x"): -0.5, Term(U, "xx"): 0.1})


def test_equation_contract_objects():
    eq = burgers().to_sympy()
    assert isinstance(eq, sympy.Eq)
    assert eq.lhs == sympy.Derivative(U, t)
    assert eq.rhs == sympy.Float(-0.5) * sympy.Derivative(U**2, x) + sympy.Float(
        0.1
    ) * sympy.Derivative(U, (x, 2))
    strong = sympy.expand(eq.rhs.doit())
    assert strong == sympy.expand(
        -1.0 * U * sympy.Derivative(U, x) + 0.1 * sympy.Derivative(U, (x, 2))
    )


def test_equation_canonical_form_merges_scaled_duplicates():
    eq = Equation(
        Term(U, "t"),
        [(Term(2 * U**2, "x"), -0.25), (Term(U, "xx"), 0.1), (Term(U**2, "x"), 0.0)],
    )
    assert eq == burgers()
    assert eq.coefficients == {Term(U**2, "x"): -0.5, Term(U, "xx"): 0.1}
    assert [t.short() for t in eq.terms] == ["d_x(u^2)", "u_xx"]
    # terms cancelling to zero are dropped
    eq2 = Equation(Term(U, "t"), [(Term(U, "xx"), 1.0), (Term(-U, "xx"), 1.0)])
    assert len(eq2) == 0
    assert eq2.short() == "u_t = 0"


def test_equation_order_independent_and_lhs_factor():
    a = Equation(Term(U, "t"), [(Term(U, "xx"), 0.1), (Term(U**2, "x"), -0.5)])
    b = Equation(Term(2 * U, "t"), [(Term(U**2, "x"), -1.0), (Term(U, "xx"), 0.2)])
    assert a == b == burgers()
    assert hash(a) == hash(b)


def test_equation_rejects_lhs_on_both_sides_and_bad_coefficients():
    with pytest.raises(IRError, match="also appears on the right-hand side"):
        Equation(Term(U, "t"), {Term(U, "t"): 1.0})
    with pytest.raises(IRError, match="not a number"):
        Equation(Term(U, "t"), {Term(U, "xx"): "nu"})
    with pytest.raises(IRError, match="must be finite"):
        Equation(Term(U, "t"), {Term(U, "xx"): math.nan})


def test_equation_from_sympy_reads_strong_products():
    strong = sympy.Eq(
        sympy.Derivative(U, t), -U * sympy.Derivative(U, x) + 0.1 * sympy.Derivative(U, (x, 2))
    )
    eq = Equation.from_sympy(strong)
    assert eq == burgers()
    assert Equation.from_sympy(burgers().to_sympy()) == burgers()


def test_equation_isclose_compares_strong_forms():
    other = Equation(Term(U, "t"), {Term(U**2, "x"): -0.5000000001, Term(U, "xx"): 0.1})
    assert other.isclose(burgers(), rtol=1e-8)
    assert not other.isclose(burgers(), rtol=1e-12)
    assert burgers().strong_coefficients() == {
        U * sympy.Derivative(U, x): -1.0,
        sympy.Derivative(U, (x, 2)): 0.1,
    }


def test_equation_printing():
    assert burgers().short() == "u_t = -0.5*d_x(u^2) + 0.1*u_xx"
    assert (
        burgers().latex()
        == r"\partial_{t} u = -0.5 \partial_{x}\left(u^{2}\right) + 0.1 \partial_{xx} u"
    )
    ci = Equation(Term(U, "t"), {Term(U, "xx"): 1.0, Term(U): -1.0, Term(U**3): 1.0})
    assert ci.short() == "u_t = -u + u^3 + u_xx"


def test_system_second_order_and_2d():
    T, X, Y = sympy.symbols("t x y")
    w = sympy.Function("u")(T, X, Y)
    wave = Equation(Term(w, "tt"), {Term(w, "xx"): 1.0, Term(w, "yy"): 1.0})
    assert wave.short() == "u_tt = u_xx + u_yy"
    assert wave.to_sympy().lhs == sympy.Derivative(w, (T, 2))
    nls = System(
        [
            Equation(Term(U, "t"), {Term(V, "xx"): 0.5, Term(U**2 * V): 1.0, Term(V**3): 1.0}),
            Equation(Term(V, "t"), {Term(U, "xx"): -0.5, Term(U * V**2): -1.0, Term(U**3): -1.0}),
        ]
    )
    assert len(nls) == 2
    assert nls.short().splitlines()[1] == "v_t = -u*v^2 - u^3 - 0.5*u_xx"
    assert nls.latex().startswith(r"\begin{cases}")
    with pytest.raises(IRError, match="share a left-hand side"):
        System([wave, wave])


def test_strong_monomials():
    assert strong_monomials(2 * U * sympy.Derivative(U, x) - U * sympy.Derivative(U, x)) == {
        U * sympy.Derivative(U, x): 1.0
    }


# ----------------------------------------------------------------- properties
_atoms = [U, V, U**2, U * V, V**3, sympy.sin(U), U**2 * V]
_alphas = ["", "x", "xx", "t", "xxx", "tx"]


@st.composite
def terms(draw):
    F = draw(st.sampled_from(_atoms))
    extra = draw(st.sampled_from(_atoms))
    if draw(st.booleans()):
        F = F + extra
    factor = draw(st.sampled_from([1, -1, 2, sympy.Rational(1, 3), -5]))
    return Term(factor * F, draw(st.sampled_from(_alphas)))


@given(terms(), terms())
def test_term_equality_iff_strong_forms_proportional(a, b):
    sa, sb = a.strong(), b.strong()
    ratio = sympy.simplify(sa / sb) if sb != 0 else None
    proportional = ratio is not None and ratio.is_number and ratio != 0
    assert (a == b) == bool(proportional)
    if a == b:
        assert hash(a) == hash(b)


@given(terms())
def test_canonical_is_idempotent(term):
    factor, canon = term.canonical()
    factor2, canon2 = canon.canonical()
    assert factor2 == 1 and canon2.F == canon.F
    assert sympy.expand(factor * canon.to_sympy().doit() - term.to_sympy().doit()) == 0


@given(
    st.lists(
        st.tuples(terms(), st.floats(-5, 5, allow_nan=False).filter(lambda c: c != 0)), max_size=5
    ),
    st.randoms(),
)
def test_equation_canonical_form_is_order_independent(items, rnd):
    shuffled = list(items)
    rnd.shuffle(shuffled)
    lhs = Term(sympy.Function("w")(t, x), "t")
    a, b = Equation(lhs, items), Equation(lhs, shuffled)
    assert a.terms == b.terms
    for term in a.terms:
        assert math.isclose(a.rhs[term], b.rhs[term], rel_tol=1e-12, abs_tol=1e-12)
    # canonical again changes nothing
    assert Equation(lhs, a.rhs) == a


def test_a_constant_term_prints_as_its_coefficient_and_reads_back():
    eq = parse_equation("u_t = 0.2 - 0.2*exp(u) + 0.1*u_xx")
    assert eq.short() == "u_t = 0.2 - 0.2*exp(u) + 0.1*u_xx"
    assert eq.latex() == r"\partial_{t} u = 0.2 - 0.2 e^{u} + 0.1 \partial_{xx} u"
    assert parse_equation(eq.short()) == eq
    assert parse_equation("u_t = 1 - u").short() == "u_t = 1 - u"

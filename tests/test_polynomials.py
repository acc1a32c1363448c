"""A function term must explain the weak form clearly better than its polynomial expansion."""

import numpy as np
import sympy

from symweak.discover._shared import polynomial_alternatives
from symweak.ir import Term, field
from symweak.regress import mstls, prefer_polynomials

u, v = field("u", "tx"), field("v", "tx")


def test_polynomial_alternatives_are_the_monomials_under_the_same_derivative():
    lib = [
        Term(u),
        Term(u**2),
        Term(u**3),
        Term(sympy.sin(u)),
        Term(u, "xx"),
        Term(sympy.sin(u), "xx"),
        Term(v * sympy.sin(u)),
        Term(u * v),
        Term(v),
        Term(u**4),
    ]
    alts = polynomial_alternatives(lib)
    assert alts[3] == [0, 1, 2]  # sin u: u, u², u³ (not u⁴, not under d_xx)
    assert alts[5] == [4]  # d_xx(sin u): u_xx
    assert alts[6] == [0, 1, 2, 7, 8]  # v·sin u: monomials of u and v up to degree 3
    assert set(alts) == {3, 5, 6}


def test_sin_standing_in_for_a_cubic_is_replaced():
    """b = 1.2 u − 1.2 u³ on |u| <= 0.8: u and sin u together fit it as well as u, u³."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.8, 0.8, 400)
    G = np.column_stack([x, x**2, x**3, np.sin(x)])
    b = 1.2 * x - 1.2 * x**3 + 1e-3 * rng.normal(size=x.size)
    disguised = mstls(G[:, [0, 3]], b, criterion="log")
    assert disguised.residual < 0.01  # the disguise fits: −6.x u + 7.x sin u
    fit = mstls(G, b, criterion="log")
    fit.coef[:] = 0.0
    fit.coef[[0, 3]] = disguised.coef
    fit.residual = disguised.residual

    def select(Gs, bs, cols):
        return mstls(Gs, bs, criterion="log")

    out = prefer_polynomials(G, b, fit, {3: [0, 1, 2]}, select, slack=0.25)
    assert out.support.tolist() == [0, 2]
    assert np.allclose(out.coef[[0, 2]], [1.2, -1.2], atol=0.01)
    assert out.method.endswith("+poly")


def test_a_function_the_data_need_stays():
    """b = sin(u) on |u| <= 3: no cubic comes within 25 %."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-3, 3, 400)
    G = np.column_stack([x, x**2, x**3, np.sin(x)])
    b = np.sin(x) + 1e-3 * rng.normal(size=x.size)
    fit = mstls(G, b, criterion="log")
    assert fit.support.tolist() == [3]

    def select(Gs, bs, cols):
        return mstls(Gs, bs, criterion="log")

    out = prefer_polynomials(G, b, fit, {3: [0, 1, 2]}, select, slack=0.25)
    assert out is fit

import math

import numpy as np
import pytest
import sympy
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad

from symweak import SymweakError
from symweak.weak import (
    ExpBump,
    PolyBump,
    TestFunctionSet,
    WeakAssembler,
    corner_wavenumber,
    make_bump,
    trapezoid_weights,
)
from symweak.weak._supports import isotropic_base

S = sympy.Symbol("s")


# ----------------------------------------------------------------- bumps
@pytest.mark.parametrize("bump", [PolyBump(5), PolyBump(9), ExpBump()], ids=repr)
@pytest.mark.parametrize("order", [0, 1, 2, 3, 4])
def test_derivatives_are_exact(bump, order):
    expr = sympy.diff(bump.sympy_expr(S), S, order)
    fn = sympy.lambdify(S, expr, "mpmath")
    xs = np.linspace(-0.995, 0.995, 37)
    ref = np.array([float(fn(sympy.Float(v, 40))) for v in xs])
    got = bump.derivative(xs, order)
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-12 * np.abs(ref).max())


def test_bumps_vanish_outside_support():
    for bump in (PolyBump(6), ExpBump()):
        assert np.all(bump.derivative(np.array([-1.5, -1.0, 1.0, 2.0]), 2) == 0.0)
        assert bump(np.array([0.0]))[0] > 0


def test_poly_bump_refuses_orders_it_cannot_support():
    PolyBump(5).derivative(np.array([0.1]), 4)
    with pytest.raises(SymweakError, match=r"PolyBump\(p=5\) cannot carry derivatives of order 5"):
        PolyBump(5).derivative(np.array([0.1]), 5)
    with pytest.raises(SymweakError, match="integer power p >= 1"):
        PolyBump(0)


def test_make_bump():
    assert make_bump("poly:12") == PolyBump(12)
    assert make_bump("exp") == ExpBump()
    with pytest.raises(SymweakError, match="Unknown test function 'gauss'"):
        make_bump("gauss")


# ----------------------------------------------------------------- supports
BOUNDS = {"t": (0.0, 10.0), "x": (-8.0, 8.0)}


def test_random_supports_follow_the_paper():
    tf = TestFunctionSet.random(BOUNDS, 500, eta=(0.2, 0.4), seed=3)
    r = tf.radii[:, 0]
    assert np.all(tf.radii[:, 0] == tf.radii[:, 1])  # one radius for every axis
    assert r.min() >= 0.2 * 10 and r.max() <= 0.4 * 10  # fractions of L_min = 10
    lo = np.array([0.0, -8.0])
    hi = np.array([10.0, 8.0])
    assert np.all(tf.centers - tf.radii >= lo - 1e-12) and np.all(
        tf.centers + tf.radii <= hi + 1e-12
    )
    again = TestFunctionSet.random(BOUNDS, 500, eta=(0.2, 0.4), seed=3)
    np.testing.assert_array_equal(again.centers, tf.centers)


def test_axis_scaled_and_lattice_supports():
    tf = TestFunctionSet.random(BOUNDS, 50, seed=0, scale="axis")
    np.testing.assert_allclose(tf.radii[:, 1] / tf.radii[:, 0], 1.6)
    lat = TestFunctionSet.lattice(BOUNDS, {"t": 2.0, "x": 2.0}, overlap=0.5)
    assert len(lat) == len(np.unique(lat.centers[:, 0])) * len(np.unique(lat.centers[:, 1]))
    assert np.all(lat.centers[:, 0] - 2.0 >= -1e-12) and np.all(
        lat.centers[:, 0] + 2.0 <= 10 + 1e-12
    )
    with pytest.raises(SymweakError, match="eta"):
        TestFunctionSet.random(BOUNDS, 10, eta=(0.3, 0.6))


def test_cap_radii_do_not_depend_on_the_units_of_a_short_time_axis():
    # time in tenths, then in hundredths of the unit: the same supports, every t radius (and
    # the t spectral radius) scaled alike; x (more than 8 times longer) keeps its radii
    def draw(scale):
        return TestFunctionSet.random(
            {"t": (0.0, 1.0 * scale), "x": (-8.0, 8.0)}, 200, seed=3, scale="cap",
            radius={"t": 0.2 * scale, "x": 5.0},
        )  # fmt: skip

    tenths, hundredths = draw(0.1), draw(0.01)
    np.testing.assert_allclose(hundredths.radii[:, 0], tenths.radii[:, 0] / 10, rtol=1e-12)
    np.testing.assert_allclose(hundredths.radii[:, 1], tenths.radii[:, 1], rtol=1e-12)
    # x: η·L_x/8 = 0.4 .. 0.8 (below 0.8 x its spectral radius), not η·L_t
    assert tenths.radii[:, 1].min() >= 0.2 * 16 / 8 - 1e-12
    assert tenths.radii[:, 1].max() <= 0.4 * 16 / 8 + 1e-12


def test_paper_radii_on_axes_of_very_different_length():
    tf = TestFunctionSet.random({"t": (0.0, 0.2), "x": (0.0, 100.0)}, 50, seed=0)
    # x is 500 times longer than t: η·L_x/8 there instead of η·L_t (too few grid points)
    np.testing.assert_allclose(tf.radii[:, 1] / tf.radii[:, 0], 100.0 / 8 / 0.2)
    assert isotropic_base(np.array([10.0, 16.0])).tolist() == [10.0, 10.0]
    assert isotropic_base(np.array([0.2, 100.0])).tolist() == [0.2, 12.5]


def test_radii_floor_keeps_supports_wider_than_the_quadrature_grid():
    from symweak.discover._testfunctions import support_floor

    floor = support_floor({"t": np.linspace(0.0, 2000.0, 51), "x": np.linspace(0, 100, 86)})
    assert floor == pytest.approx({"t": 60.0, "x": 1.5 * 100 / 85})
    plain = TestFunctionSet.random({"t": (0.0, 2000.0), "x": (0.0, 100.0)}, 300, seed=1)
    floored = TestFunctionSet.random(
        {"t": (0.0, 2000.0), "x": (0.0, 100.0)}, 300, seed=1, floor=floor
    )
    assert plain.radii[:, 0].min() < 60.0  # η·2000/8 = 50 .. 100
    assert floored.radii[:, 0].min() == pytest.approx(60.0)
    raised = plain.radii[:, 0] < 60.0
    np.testing.assert_array_equal(floored.radii[~raised], plain.radii[~raised])
    assert floored.how == "paper, floored" and plain.how == "paper"


def test_corner_wavenumber_separates_signal_from_noise():
    x = np.linspace(0, 2 * np.pi, 512, endpoint=False)
    rng = np.random.default_rng(0)
    clean = np.sin(3 * x) + 0.5 * np.cos(7 * x)
    kc = corner_wavenumber(np.tile(clean + 0.05 * rng.standard_normal((64, 512)), 1), x[1] - x[0])
    assert 5 <= kc <= 60


# ----------------------------------------------------------------- quadrature
def test_trapezoid_weights_nonuniform():
    x = np.array([0.0, 0.1, 0.4, 1.0])
    np.testing.assert_allclose(trapezoid_weights(x), [0.05, 0.2, 0.45, 0.3])


def _assembler(nt, nx, centers, radius, bump, order=4):
    t = np.linspace(0.0, 1.0, nt)
    x = np.linspace(0.0, 2.0, nx)
    tf = TestFunctionSet(
        ("t", "x"), np.array(centers, float), np.full((len(centers), 2), radius), bump
    )
    return WeakAssembler({"t": t, "x": x}, tf, {"t": 2, "x": order}), t, x


@pytest.mark.parametrize("alpha", [(0, 1), (0, 2), (1, 0), (0, 3), (1, 2), (0, 4)])
def test_integration_by_parts_converges(alpha):
    # ∫Φ ∂^α f = (-1)^|α| ∫ ∂^αΦ f for f = sin(2x + t) e^{t}; compare with the exact left side.
    def f(T, X):
        return np.sin(2 * X + T) * np.exp(T)

    def d_alpha_f(T, X):
        a, b = alpha
        # ∂_t^a ∂_x^b of sin(2x+t) e^t, computed with sympy
        tt, xx = sympy.symbols("t x")
        expr = sympy.diff(sympy.sin(2 * xx + tt) * sympy.exp(tt), tt, a, xx, b)
        return sympy.lambdify((tt, xx), expr, "numpy")(T, X)

    errors = []
    for n in (41, 81, 161):
        A, t, x = _assembler(n, 2 * n, [[0.5, 1.0], [0.45, 0.8]], 0.3, PolyBump(8))
        T, X = np.meshgrid(t, x, indexing="ij")
        lhs = A.integrate(d_alpha_f(T, X)[None], [(0, 0)]).numpy()[:, 0]
        rhs = A.integrate(f(T, X)[None], [alpha]).numpy()[:, 0]
        errors.append(np.abs(lhs - rhs).max())
    # Euler-Maclaurin: with PolyBump(p) the integrand is C^{p-1-n} at the support's edge, so
    # the trapezoid error falls like h^{p+1-n} for the highest order n (p = 8 here).
    expected = 9 - max(alpha)
    rate = np.log2(errors[1] / errors[2])
    assert rate > expected - 0.6, (errors, rate)
    assert errors[-1] < 1e-3 * 2.0 ** (-4 * (4 - max(alpha)))


def test_constant_against_derivative_is_zero():
    A, t, x = _assembler(101, 201, [[0.5, 1.0], [0.35, 0.6], [0.6, 1.3]], 0.3, PolyBump(12))
    ones = np.ones((1, t.size, x.size))
    # exact in theory; the quadrature error is O(h^{p+1-n}) (h = 0.01, p = 12, n <= 4)
    for alpha, tol in [
        ((1, 0), 1e-15),
        ((0, 1), 1e-15),
        ((0, 2), 1e-12),
        ((1, 1), 1e-15),
        ((0, 4), 1e-7),
    ]:
        assert np.abs(A.integrate(ones, [alpha]).numpy()).max() < tol


def test_single_integral_matches_scipy_quad():
    bump = PolyBump(8)
    A, t, x = _assembler(401, 801, [[0.5, 1.0]], 0.4, bump)
    T, X = np.meshgrid(t, x, indexing="ij")
    val = A.integrate((np.cos(X) * T**2)[None], [(0, 1)]).numpy()[0, 0]
    it = quad(lambda s: bump(np.array([(s - 0.5) / 0.4]))[0] * s**2, 0.1, 0.9, epsabs=1e-13)[0]
    ix = quad(
        lambda s: bump.derivative(np.array([(s - 1.0) / 0.4]), 1)[0] / 0.4 * np.cos(s),
        0.6,
        1.4,
        epsabs=1e-13,
    )[0]
    assert val == pytest.approx(-it * ix, rel=1e-9, abs=1e-12)


def test_dense_and_windowed_paths_agree_and_3d():
    t = np.linspace(0, 1, 21)
    x = np.linspace(0, 1, 24)
    y = np.linspace(-1, 1, 18)
    tf = TestFunctionSet.random(
        {"t": (0, 1), "x": (0, 1), "y": (-1, 1)}, 30, seed=1, bump=PolyBump(8), scale="axis"
    )
    A = WeakAssembler({"t": t, "x": x, "y": y}, tf, {"t": 1, "x": 2, "y": 2})
    F = np.random.default_rng(0).standard_normal((4, 21, 24, 18))
    alphas = [(0, 0, 0), (1, 0, 0), (0, 2, 0), (0, 1, 1)]
    dense = A.integrate(F, alphas)
    A.dense_limit = 0
    windowed = A.integrate(F, alphas)
    torch.testing.assert_close(dense, windowed, rtol=1e-12, atol=1e-12)
    # over the limit, wide supports go through the dense contraction in blocks of tests
    # (here 8 at a time: 4 blocks for 30 tests), small ones through the windows
    A.dense_limit = 4 * 24 * 18 * 8
    assert A.window_fraction > 1 / 30
    calls = []
    dense_block = A._dense
    A._dense = lambda F, al, step=None: calls.append(step) or dense_block(F, al, step)
    A._windowed = None  # not taken
    blocked = A.integrate(F, alphas)
    assert calls == [8]  # 8 test functions at a time: 4 blocks, the last of 6
    torch.testing.assert_close(blocked, dense, rtol=1e-12, atol=1e-12)
    # blocks that do not divide the test functions (integrate applies the signs (-1)^|α|)
    odd = dense_block(torch.as_tensor(F), alphas, 7) * torch.tensor([1.0, -1.0, 1.0, 1.0])
    torch.testing.assert_close(odd, dense, rtol=1e-12, atol=1e-12)
    small = TestFunctionSet.random(
        {"t": (0, 1), "x": (0, 1), "y": (-1, 1)},
        30,
        eta=(0.1, 0.12),
        seed=1,
        bump=PolyBump(8),
        scale="axis",
    )
    B = WeakAssembler({"t": t, "x": x, "y": y}, small, {"t": 1, "x": 2, "y": 2})
    B.dense_limit = 4 * 24 * 18 * 8
    assert B.window_fraction < 1 / 30
    B._dense = None  # not taken
    assert B.integrate(F, alphas).shape == (30, 4)
    # with gradients the blocks are taken even for small supports (the per-window loop's
    # backward is far slower); values and gradients as the windows give them
    del B._dense
    Fw = torch.tensor(F, requires_grad=True)
    windowed = B._windowed(Fw, [tuple(a) for a in alphas])
    windowed.square().sum().backward()
    B._windowed = None  # not taken
    Fb = torch.tensor(F, requires_grad=True)
    signs = torch.tensor([1.0, -1.0, 1.0, 1.0], dtype=torch.float64)
    blocked = B.integrate(Fb, alphas)
    torch.testing.assert_close(blocked, windowed * signs, rtol=1e-12, atol=1e-12)
    blocked.square().sum().backward()
    torch.testing.assert_close(Fb.grad, Fw.grad, rtol=1e-10, atol=1e-12)


def test_gradients_flow_through_assembly():
    A, _, _ = _assembler(41, 61, [[0.5, 1.0], [0.4, 0.8]], 0.3, PolyBump(8))
    F = torch.randn(1, 41, 61, dtype=torch.float64, requires_grad=True)
    G = A.integrate(F, [(0, 2)])
    G.sum().backward()
    assert F.grad is not None and torch.isfinite(F.grad).all() and F.grad.abs().sum() > 0
    assert G.dtype == torch.float64


def test_assembler_rejects_bad_requests():
    A, _, _ = _assembler(41, 61, [[0.5, 1.0]], 0.3, PolyBump(8), order=2)
    with pytest.raises(SymweakError, match="exceeds this assembler's maximum"):
        A.integrate(np.zeros((1, 41, 61)), [(0, 3)])
    with pytest.raises(SymweakError, match="Field values have shape"):
        A.integrate(np.zeros((1, 40, 61)), [(0, 1)])
    with pytest.raises(SymweakError, match="cannot carry derivatives of order 5"):
        _assembler(41, 61, [[0.5, 1.0]], 0.3, PolyBump(5), order=5)


@given(st.integers(1, 4), st.floats(0.15, 0.45))
def test_polynomial_moments_exact(order, radius):
    # ∫ φ^{(n)}(s) s^n ds = (-1)^n n! ∫ φ(s) ds (integration by parts), on a fine grid
    s = np.linspace(-1, 1, 4001)
    w = trapezoid_weights(s)
    bump = PolyBump(8)
    lhs = np.sum(w * bump.derivative(s, order) * s**order)
    rhs = (-1) ** order * math.factorial(order) * np.sum(w * bump(s))
    assert lhs == pytest.approx(rhs, rel=1e-9)


def test_derivative_rows_integrate_constants_and_lines_to_zero():
    # ∫ D^n φ · 1 = 0 (and · x for n >= 2) hold to rounding, so a field's offset (a
    # temperature of 300 K) does not leak into its derivative columns
    t = np.linspace(0.0, 20.0, 101)
    x = np.linspace(0.0, 100.0, 256, endpoint=False)
    tests = TestFunctionSet.random({"t": (0.0, 20.0), "x": (0.0, 99.6)}, 100, seed=0, bump="poly:8")
    asm = WeakAssembler({"t": t, "x": x}, tests, {"t": 1, "x": 2})
    T, X = np.meshgrid(t, x, indexing="ij")
    one = torch.ones(len(t), len(x), dtype=torch.float64)
    line = torch.as_tensor(X)
    scale = asm.integrate(torch.as_tensor(np.cos(X / 5.0))[None], [(0, 2)]).abs().max()
    assert asm.integrate(one[None], [(0, 2)]).abs().max() < 1e-12 * scale
    assert asm.integrate(one[None], [(1, 0)]).abs().max() < 1e-12 * scale
    assert asm.integrate(line[None], [(0, 2)]).abs().max() < 1e-12 * scale
    field = np.exp(-(((X - 30 - 0.5 * T) / 6) ** 2))
    cols = [
        asm.integrate(torch.as_tensor(field + c)[None], [(0, 2)]).numpy().ravel()
        for c in (0.0, 300.0)
    ]
    np.testing.assert_allclose(cols[1], cols[0], rtol=0, atol=1e-12 * np.abs(cols[0]).max())

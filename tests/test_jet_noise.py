"""Noise in derivatives taken of the data on the full-grid path (product terms, issue 25):
its level after the Savitzky–Golay filters, and the bias it puts into their powers, removed
as the fields' own powers are (Hermite polynomials)."""

import numpy as np
import pytest
import sympy

from symweak.discover._grid import data_jets, evaluate_functions, jet_noise
from symweak.ir import field

t, x = sympy.symbols("t x")
U = field("u", "tx")
D = sympy.Derivative


def _noisy(sigma=0.05, nt=200, nx=400, seed=0):
    ta = np.linspace(0.0, 1.0, nt)
    xa = np.linspace(0.0, 2 * np.pi, nx, endpoint=False)
    clean = np.sin(xa)[None, :] * np.ones((nt, 1))
    rng = np.random.default_rng(seed)
    return ta, xa, clean, clean + sigma * rng.standard_normal(clean.shape)


def test_jet_noise_is_the_filtered_noise_level():
    ta, xa, _, _ = _noisy()
    rng = np.random.default_rng(1)
    noise = 0.05 * rng.standard_normal((200, 400))
    derivs = [D(U, x), D(U, x, 2)]
    jets = data_jets({"u": noise}, {"t": ta, "x": xa}, derivs)
    levels = jet_noise({"t": ta, "x": xa}, derivs, {"u": 0.05})
    for name in ("u_x", "u_xx"):
        inner = jets[name][:, 10:-10]  # the filters differ at the grid's ends
        assert inner.std() == pytest.approx(levels[name], rel=0.02)
    # the first derivative of a quartic least-squares fit over 11 points, at the centre:
    # row 1 of the Vandermonde pseudo-inverse, divided by h
    h = xa[1] - xa[0]
    row = np.linalg.pinv(np.vander(np.arange(-5, 6) * h, 5, increasing=True))[1]
    assert levels["u_x"] == pytest.approx(0.05 * np.linalg.norm(row), rel=1e-9)


def test_squares_of_data_derivatives_are_debiased():
    ta, xa, _, noisy = _noisy()
    derivs = [D(U, x)]
    axes = {"t": ta, "x": xa}
    sigma = {"u": 0.05}
    grids = {"u": noisy, **data_jets({"u": noisy}, axes, derivs)}
    level = jet_noise(axes, derivs, sigma)["u_x"]
    F = D(U, x) ** 2
    raw = evaluate_functions([F], grids)[0][:, 10:-10].mean()
    fixed = evaluate_functions([F], grids, {**sigma, "u_x": level})[0][:, 10:-10].mean()
    truth = (np.cos(xa) ** 2)[10:-10].mean()  # E[u_x²] over the same points
    assert raw - truth == pytest.approx(level**2, rel=0.05)  # the bias: the filtered variance
    assert abs(fixed - truth) < 0.01 * truth
    # u·u_x² too: u's noise and u_x's are uncorrelated (odd filter), Hermite in each
    G = U * D(U, x) ** 2
    prod = evaluate_functions([G], grids, {**sigma, "u_x": level})[0][:, 10:-10].mean()
    want = (np.sin(xa) * np.cos(xa) ** 2)[10:-10].mean()
    assert abs(prod - want) < 0.01


def test_correlated_factors_are_left_as_they_are():
    ta, xa, _, noisy = _noisy()
    derivs = [D(U, x, 2)]
    axes = {"t": ta, "x": xa}
    grids = {"u": noisy, **data_jets({"u": noisy}, axes, derivs)}
    sigma = {"u": 0.05, **jet_noise(axes, derivs, {"u": 0.05})}
    F = U * D(U, x, 2)  # u's noise is in u_xx's filter centre: no unbiased product of the two
    np.testing.assert_array_equal(
        evaluate_functions([F], grids, sigma)[0], evaluate_functions([F], grids)[0]
    )

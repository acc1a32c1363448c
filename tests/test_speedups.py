"""Result-preserving speed-ups: the compressed sparse fits, the cached bump spectrum, the
stacked quadrature weights and glibc's thresholds (issue 53)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from symweak.regress._mstls import compress, mstls
from symweak.regress._sparse import _residual, _scales, _solve
from symweak.weak import WeakAssembler
from symweak.weak._supports import TestFunctionSet
from symweak.weak._testfunctions import make_bump


def _system(K=300, S=8, seed=0):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(K, S)) * rng.uniform(0.1, 10.0, size=S)
    b = G[:, [1, 4]] @ np.array([0.7, -2.0]) + 0.05 * rng.normal(size=K)
    return G, b


def test_compress_keeps_every_least_squares_quantity():
    G, b = _system()
    Gc, bc = compress(G, b)
    assert Gc.shape == (9, 8) and bc.shape == (9,)
    np.testing.assert_allclose(_scales(Gc), _scales(G), rtol=1e-12)
    assert np.linalg.norm(bc) == pytest.approx(np.linalg.norm(b), rel=1e-12)
    for cols in ([1, 4], [0, 2, 5, 7], list(range(8))):
        cols = np.array(cols)
        coef, coef_c = _solve(G, b, cols, _scales(G)), _solve(Gc, bc, cols, _scales(Gc))
        np.testing.assert_allclose(coef_c, coef, rtol=1e-9, atol=1e-12)
        assert _residual(Gc, bc, coef) == pytest.approx(_residual(G, b, coef), rel=1e-9)


def test_compress_leaves_short_systems_alone():
    G, b = _system(K=18, S=8)
    Gc, bc = compress(G, b)
    assert Gc.shape == (18, 8) and np.array_equal(Gc, G) and np.array_equal(bc, b)


@pytest.mark.parametrize("criterion", ["log", "bic", "wsindy"])
def test_mstls_on_the_compressed_system_finds_the_truth(criterion):
    G, b = _system()
    fit = mstls(G, b, criterion=criterion)
    assert list(np.flatnonzero(fit.coef)) == [1, 4]
    np.testing.assert_allclose(fit.coef[[1, 4]], [0.7, -2.0], rtol=0.02)
    # the relative residual is the one of the uncompressed system
    assert fit.residual == pytest.approx(_residual(G, b, fit.coef), rel=1e-9)


def test_spectrum_cutoff_value_and_cache():
    bump = make_bump("exp")
    s = np.linspace(-1.0, 1.0, 4097)
    kappa = np.linspace(0.0, 200.0, 4001)
    ft = np.abs(np.trapezoid(bump(s)[None, :] * np.cos(kappa[:, None] * s[None, :]), s, axis=1))
    ft /= ft[0]
    reference = float(kappa[np.flatnonzero(ft > 1e-3)[-1] + 1])
    assert bump.spectrum_cutoff() == reference == 32.75
    assert make_bump("exp").spectrum_cutoff(1e-3) == reference  # an equal bump: the cache
    assert make_bump("exp").spectrum_cutoff(1e-2) < reference


def test_stacked_weights_are_built_once_and_integrate_as_before():
    t, x = np.linspace(0, 2, 41), np.linspace(-1, 1, 57)
    tests = TestFunctionSet.random({"t": (0, 2), "x": (-1, 1)}, n=30, seed=1)
    asm = WeakAssembler({"t": t, "x": x}, tests, {"t": 1, "x": 3})
    W = asm.stacked(1, [0, 2, 3])
    assert W.shape == (30, 3, 57) and asm.stacked(1, [0, 2, 3]) is W
    assert torch.equal(W[:, 1], asm.weight(1, 2))
    F = torch.as_tensor(np.random.default_rng(2).normal(size=(3, 41, 57)))
    alphas = [(0, 0), (1, 2), (0, 3)]
    G = asm.integrate(F, alphas)
    outer = asm.integrate_outer(F, alphas)  # (K, S, A)
    for s, (a0, a1) in enumerate(alphas):
        ref = np.einsum("kt,kx,tx->k", asm.weight(0, a0), asm.weight(1, a1), F[s]) * (-1) ** (
            a0 + a1
        )
        np.testing.assert_allclose(G[:, s], ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(outer[:, s, s], ref, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
@pytest.mark.parametrize("setting, expected", [("", "True"), ("default", "False")])
def test_keep_freed_memory_on_glibc(setting, expected):
    code = "from symweak._memory import keep_freed_memory as k; print(k(), k())"
    env = {**os.environ, "SYMWEAK_MALLOC": setting}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [expected, expected]


@pytest.mark.parametrize("step", [None, 5])
def test_three_dimensional_assembly_in_blocks_and_outer(step):
    axes = {"t": np.linspace(0, 1, 21), "x": np.linspace(0, 1, 23), "y": np.linspace(0, 1, 19)}
    tests = TestFunctionSet.random({n: (0, 1) for n in axes}, n=12, seed=0)
    asm = WeakAssembler(axes, tests, {"t": 1, "x": 2, "y": 2})
    F = torch.as_tensor(np.random.default_rng(0).normal(size=(3, 21, 23, 19)))
    alphas = [(0, 1, 0), (1, 0, 2), (0, 2, 1)]
    G = asm._dense(F, alphas, step=step)  # without the signs
    outer = asm.integrate_outer(F, alphas)
    for s, al in enumerate(alphas):
        W = [asm.weight(i, a) for i, a in enumerate(al)]
        ref = np.einsum("kt,kx,ky,txy->k", *W, F[s])
        np.testing.assert_allclose(G[:, s], ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(outer[:, s, s], ref * (-1) ** sum(al), rtol=1e-10, atol=1e-12)


def test_compress_keeps_small_columns_beside_huge_ones():
    """Columns 1e12 apart (u beside u² in µm units): Householder QR's backward error is
    column by column, so the small column keeps its digits in the R factor."""
    G, b = _system()
    G = G * np.array([1e-6, 1.0, 1e6, 1.0, 1e-6, 1e3, 1.0, 1e6])
    b = G[:, [0, 2]] @ np.array([2e6, 3e-6]) + 1e-3 * np.random.default_rng(3).normal(size=300)
    Gc, bc = compress(G, b)
    cols = np.array([0, 2, 4])
    coef, coef_c = _solve(G, b, cols, _scales(G)), _solve(Gc, bc, cols, _scales(Gc))
    np.testing.assert_allclose(coef_c[cols], coef[cols], rtol=1e-8)
    assert _residual(Gc, bc, coef) == pytest.approx(_residual(G, b, coef), rel=1e-8)

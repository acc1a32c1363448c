"""Rows whose errors correlate (test functions with overlapping supports): the overlap of a
test-function set, the design effect, and bootstrap intervals widened by it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from symweak import SymweakError
from symweak.regress import bootstrap_intervals, design_effect
from symweak.weak import TestFunctionSet
from symweak.weak._testfunctions import make_bump

TRUE = np.array([1.0, -0.5])


def one_axis(centers, radii, bump="poly:8"):
    c = np.asarray(centers, dtype=float)[:, None]
    return TestFunctionSet(("x",), c, np.asarray(radii, dtype=float)[:, None], make_bump(bump))


def test_overlap_is_the_normalised_inner_product_of_the_bumps():
    ts = one_axis([0.0, 0.5, 3.0, 0.2], [1.0, 0.8, 1.0, 0.6])
    W = ts.overlap()
    phi = ts.bump

    def inner(i, j):
        def f(x):
            si = (x - ts.centers[i, 0]) / ts.radii[i, 0]
            sj = (x - ts.centers[j, 0]) / ts.radii[j, 0]
            return float(phi(np.array([si]))[0] * phi(np.array([sj]))[0])

        return quad(f, -2, 5, points=[-1, 0, 1, 2, 4])[0]

    ref = inner(0, 1) / np.sqrt(inner(0, 0) * inner(1, 1))
    assert W[0, 1] == pytest.approx(ref, rel=2e-3)
    assert np.allclose(np.diag(W), 1.0)
    assert W[0, 2] == W[2, 0] == 0.0  # disjoint supports
    assert np.allclose(W, W.T)
    assert np.linalg.eigvalsh(W).min() > -1e-10
    assert np.allclose(ts.overlap(rows=[3, 1]), W[[3, 1]])


def test_overlap_is_a_product_over_axes():
    c = np.array([[0.0, 0.0], [0.3, 0.5], [0.1, -0.4]])
    r = np.array([[1.0, 0.7], [0.9, 1.0], [0.5, 0.6]])
    both = TestFunctionSet(("t", "x"), c, r, make_bump("poly:8")).overlap()
    t = one_axis(c[:, 0], r[:, 0]).overlap()
    x = one_axis(c[:, 1], r[:, 1]).overlap()
    assert np.allclose(both, t * x)


def blocks(rng, k=400, m=10, common=0.1, own=0.01):
    """Rows in blocks of m that share a regressor value and an error (near-replicates, as
    test functions with one support), and the blocks' indicator as their overlap."""
    n = k // m
    G = np.repeat(rng.standard_normal((n, 2)), m, axis=0) + 0.05 * rng.standard_normal((k, 2))
    e = np.repeat(common * rng.standard_normal(n), m) + own * rng.standard_normal(k)
    W = np.kron(np.eye(n), np.ones((m, m)))
    return G, G @ TRUE + e, W


def test_design_effect_is_one_for_independent_rows_and_near_the_block_size_for_blocks():
    rng = np.random.default_rng(3)
    G, b, W = blocks(rng)
    assert np.allclose(design_effect(G, b, [0, 1], np.eye(len(b))), 1.0)
    # a block of 10 near-copies with a shared error counts once: about 10× the variance
    assert np.all((design_effect(G, b, [0, 1], W) > 6) & (design_effect(G, b, [0, 1], W) < 14))
    by_rows = design_effect(G, b, [0, 1], lambda rows: W[rows])
    assert np.allclose(by_rows, design_effect(G, b, [0, 1], W))


def test_overlap_brings_interval_coverage_back_when_rows_are_not_independent():
    rng = np.random.default_rng(4)
    plain, widened = [], []
    for seed in range(60):
        G, b, W = blocks(rng)
        for hits, overlap in ((plain, None), (widened, W)):
            lo, hi = bootstrap_intervals(
                G, b, [0, 1], resamples=100, seed=seed, tls=False, overlap=overlap
            )
            hits.extend(bool(lo[j] <= TRUE[j] <= hi[j]) for j in (0, 1))
    assert np.mean(plain) < 0.6  # rows resampled as if independent: far too narrow
    assert 0.9 <= np.mean(widened) <= 1.0


def test_independent_overlap_changes_nothing_and_bad_shapes_are_named():
    rng = np.random.default_rng(5)
    G, b, _ = blocks(rng, k=100)
    lo, hi = bootstrap_intervals(G, b, [0, 1], resamples=50, tls=False)
    lo1, hi1 = bootstrap_intervals(G, b, [0, 1], resamples=50, tls=False, overlap=np.eye(100))
    assert np.array_equal(lo, lo1) and np.array_equal(hi, hi1)
    with pytest.raises(SymweakError, match=r"overlap must be \(100, 100\).*got \(99, 99\)"):
        design_effect(G, b, [0, 1], np.eye(99))
    with pytest.raises(SymweakError, match=r"overlap must give \(100, 100\) for 100 rows"):
        design_effect(G, b, [0, 1], lambda rows: np.eye(100)[:, :50])

"""Bootstrap intervals and the Pareto front on synthetic weak systems with known support."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from symweak import SymweakError
from symweak.regress import bootstrap_intervals, pareto_front

TRUE = np.array([1.0, -0.5, 0.1, 0.0, 0.0, 0.0])


def draw(rng, k=120, noise=0.05):
    G = rng.standard_normal((k, TRUE.size))
    G[:, 3] = G[:, 0] + 0.3 * rng.standard_normal(k)  # a spurious column close to a true one
    return G, G @ TRUE + noise * rng.standard_normal(k)


def test_intervals_cover_the_true_coefficients():
    rng = np.random.default_rng(0)
    hits = []
    for draw_seed in range(200):
        G, b = draw(rng)
        lo, hi = bootstrap_intervals(G, b, [0, 1, 2], resamples=100, seed=draw_seed, tls=False)
        hits.extend((lo[j] <= TRUE[j] <= hi[j]) for j in (0, 1, 2))
        assert lo[3] == hi[3] == 0.0  # outside the support
    coverage = np.mean(hits)
    assert 0.90 <= coverage <= 0.99, coverage  # 95 % intervals: neither too narrow nor vacuous


def test_pareto_front_is_monotone_and_holds_the_true_support():
    rng = np.random.default_rng(1)
    G, b = draw(rng, k=200)
    front = pareto_front(G, b, chosen=[0, 1, 2], seed=0)
    sizes = [p.complexity for p in front]
    held = [p.held_out for p in front]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert all(a > b for a, b in itertools.pairwise(held))  # each step earns its term
    assert [p.support for p in front if p.chosen] == [(0, 1, 2)]
    true = next(p for p in front if p.chosen)
    # larger supports fit the held-out rows' noise only: less than 2 % better
    assert all(p.held_out > 0.98 * true.held_out for p in front if p.complexity > 3)
    np.testing.assert_allclose(true.coef[:3], TRUE[:3], atol=0.02)
    assert [p.support for p in front][:2] == [(0,), (0, 1)]


def test_bad_settings_are_named():
    G, b = draw(np.random.default_rng(2))
    with pytest.raises(SymweakError, match=r"level must be in \(0, 1\), got 1.5"):
        bootstrap_intervals(G, b, [0], level=1.5)
    with pytest.raises(SymweakError, match="resamples must be at least 10, got 3"):
        bootstrap_intervals(G, b, [0], resamples=3)

"""Stability selection on weak systems with a known support."""

import numpy as np
import pytest

import symweak
from symweak.regress import Fit, mstls, stability_selection


def _system(seed=0, K=300, S=12, noise=0.02):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((K, S))
    G[:, 5] = G[:, 4] + 0.3 * rng.standard_normal(K)  # a correlated decoy of a true column
    xi = np.zeros(S)
    xi[[1, 4, 8]] = [1.0, -0.5, 0.25]
    b = G @ xi + noise * np.linalg.norm(G @ xi) / np.sqrt(K) * rng.standard_normal(K)
    return G, b, xi


def _select(G, b):
    return mstls(G, b, criterion="log")


def test_stability_selection_keeps_the_true_support_with_probabilities_near_one():
    G, b, xi = _system()
    fit = stability_selection(G, b, _select, resamples=20, threshold=0.6, seed=0)
    assert list(fit.support) == [1, 4, 8]
    p = fit.probabilities
    assert p.shape == (12,) and np.all(p[[1, 4, 8]] == 1.0)
    assert np.max(np.delete(p, [1, 4, 8])) <= 0.3
    np.testing.assert_allclose(fit.coef[[1, 4, 8]], xi[[1, 4, 8]], rtol=0.05)
    assert fit.method == "stability[20x0.5, p>=0.6]" and len(fit.path) == 20
    # same seed, same result; another seed, the same support
    again = stability_selection(G, b, _select, resamples=20, threshold=0.6, seed=0)
    np.testing.assert_array_equal(again.probabilities, p)
    other = stability_selection(G, b, _select, resamples=20, threshold=0.6, seed=5)
    assert list(other.support) == [1, 4, 8]


def test_a_term_only_some_halves_want_is_dropped():
    G, b, _ = _system(noise=0.0)
    calls = {"n": 0}

    def flaky(Gs, bs):  # a selector that adds a spurious column on every third half
        fit = mstls(Gs, bs, criterion="log")
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            coef = fit.coef.copy()
            coef[10] = 1e-3
            return Fit(coef, fit.residual)
        return fit

    fit = stability_selection(G, b, flaky, resamples=12, threshold=0.6, seed=1)
    assert fit.probabilities[10] == pytest.approx(4 / 12)
    assert 10 not in fit.support and list(fit.support) == [1, 4, 8]
    kept = stability_selection(G, b, flaky, resamples=12, threshold=0.6, keep=[10], seed=1)
    assert 10 in kept.support  # constraints' keep: terms survive


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"resamples": 0}, "resamples must be an integer >= 1, got 0"),
        ({"threshold": 1.5}, r"threshold must be in \(0, 1\], got 1.5"),
        ({"fraction": 1.0}, r"fraction must be in \(0, 1\), got 1.0"),
    ],
)
def test_bad_stability_settings_are_named(kwargs, message):
    G, b, _ = _system()
    with pytest.raises(symweak.SymweakError, match=message):
        stability_selection(G, b, _select, **kwargs)


def test_stacked_scales_keep_a_term_that_matters_at_one_scale_only():
    """Two test-function scales of one equation b = c0 + 0.1 c1: under the first, c1 carries
    30 % of b; under the second, 0.5 % with 6 % noise, and a fit there alone drops it. The
    stacked system (each scale's rows divided by |b|) keeps it with its coefficient."""
    import torch

    from symweak.discover.network._final import _stacked

    rng = np.random.default_rng(0)

    def scale(weight, noise, k=200):
        G = rng.standard_normal((k, 4))
        G[:, 1] *= weight
        return G, G[:, 0] + 0.1 * G[:, 1] + noise * rng.standard_normal(k)

    (GA, bA), (GB, bB) = scale(3.0, 0.15), scale(0.05, 0.06)
    assert mstls(GA, bA, criterion="log").support.tolist() == [0, 1]
    assert mstls(GB, bB, criterion="log").support.tolist() == [0]
    variants = {
        name: (torch.as_tensor(G), torch.as_tensor(b)[:, None])
        for name, (G, b) in {"cap": (GA, bA), "axis": (GB, bB)}.items()
    }
    out = _stacked(variants, ["cap", "axis"])
    assert list(out) == ["cap&axis"]  # no "+data" variants given, none made
    G, b = out["cap&axis"]
    np.testing.assert_allclose(G[:200].numpy(), GA / np.linalg.norm(bA), rtol=1e-12)
    np.testing.assert_allclose(b[200:, 0].numpy(), bB / np.linalg.norm(bB), rtol=1e-12)
    fit = mstls(G.numpy(), b[:, 0].numpy(), criterion="log")
    assert fit.support.tolist() == [0, 1]
    np.testing.assert_allclose(fit.coef[:2], [1.0, 0.1], atol=0.006)


def test_stability_penalty_is_checked_before_anything_runs():
    with pytest.raises(symweak.SymweakError, match=r"stability_penalty must be a number > 0"):
        symweak.Config.preset("network", stability_penalty=0)

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


def _two_models(first: int):
    """A selector that returns one coherent support ([1, 4, 8], the truth of :func:`_system`)
    on the first ``first`` halves and another ([1, 5, 10]) on the rest."""
    calls = {"n": 0}

    def select(Gs, bs):
        calls["n"] += 1
        sup = [1, 4, 8] if calls["n"] <= first else [1, 5, 10]
        coef = np.zeros(Gs.shape[1])
        coef[sup] = np.linalg.lstsq(Gs[:, sup], bs, rcond=None)[0]
        return Fit(coef, 0.0)

    return select


def test_a_support_most_halves_chose_is_not_split_by_the_threshold():
    G, b, xi = _system(noise=0.0)
    # 11 of 20 halves choose the truth, 9 a second coherent model: each term but the shared
    # one stands at 0.55 or 0.45, and a per-term threshold of 0.6 keeps column 1 alone
    split = stability_selection(G, b, _two_models(11), resamples=20, majority=False)
    assert list(split.support) == [1]
    np.testing.assert_allclose(split.probabilities[[1, 4, 5, 8, 10]], [1, 0.55, 0.45, 0.55, 0.45])
    whole = stability_selection(G, b, _two_models(11), resamples=20)
    assert list(whole.support) == [1, 4, 8]
    np.testing.assert_allclose(whole.coef[[1, 4, 8]], xi[[1, 4, 8]], rtol=1e-9)
    # half the halves is no majority: the threshold alone decides
    tie = stability_selection(G, b, _two_models(10), resamples=20)
    assert list(tie.support) == [1]


def test_majority_support_needs_more_than_half():
    from symweak.regress._stability import majority_support

    assert majority_support([[2, 1], [1, 2], [3]]) == {1, 2}
    assert majority_support([[1, 2], [3], [1, 2], [3]]) == set()
    assert majority_support([]) == set()


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


def _minor_system(seed=0, K=250):
    # b = G ξ plus a structured error (a smooth function of the row index, as a surrogate's
    # error is) that a spurious column follows a little
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((K, 4))
    smooth = np.sin(np.linspace(0, 6, K))
    G[:, 3] += 0.1 * smooth
    b = 1.5 * G[:, 0] - 0.5 * G[:, 1] + 0.3 * smooth
    return G, b


def test_a_term_that_explains_less_than_the_residual_leaves_is_dropped():
    from symweak.regress import drop_minor_terms, lstsq

    G, b = _minor_system()
    full = lstsq(G[:, [0, 1, 3]], b).coef
    coef = np.zeros(4)
    coef[[0, 1, 3]] = full
    fit = Fit(coef, 0.0, None, "stability")
    fit.probabilities = np.array([1.0, 1.0, 0.0, 0.6])
    r = np.linalg.norm(G @ coef - b)
    part = abs(coef[3]) * np.linalg.norm(G[:, 3])
    assert 0.1 < part / r < 0.15  # the spurious column's part of the fit (0.121)
    out = drop_minor_terms(G, b, fit, 0.25)
    assert out.support.tolist() == [0, 1]
    np.testing.assert_allclose(out.coef[[0, 1]], [1.5, -0.5], rtol=0.03)
    assert out.method == "stability+minor"
    np.testing.assert_array_equal(out.probabilities, fit.probabilities)
    # a smaller ratio keeps it; 0 is off; a kept term stays; the last term stays
    assert drop_minor_terms(G, b, fit, 0.05) is fit
    assert drop_minor_terms(G, b, fit, 0) is fit
    assert drop_minor_terms(G, b, fit, 0.25, keep=[3]).support.tolist() == [0, 1, 3]
    lone = Fit(np.array([0.0, 0.0, 0.0, 0.01]), 1.0, None, "x")
    assert drop_minor_terms(G, b, lone, 0.25) is lone
    with pytest.raises(symweak.SymweakError, match=r"ratio must be a number >= 0, got -1"):
        drop_minor_terms(G, b, fit, -1)


def test_minor_ratio_is_checked_before_anything_runs():
    with pytest.raises(symweak.SymweakError, match=r"minor_ratio must be a number >= 0"):
        symweak.Config.preset("network", minor_ratio=-0.1)

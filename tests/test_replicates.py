"""Repeated measurements: points that share coordinates are replicates, their spread the noise."""

import numpy as np
import pytest

from symweak import Observations
from symweak.data._replicates import find_replicates
from symweak.surrogate import estimate_noise
from symweak.surrogate._data import split_points


def _assay(reps: int = 3, sigma: float = 0.05, seed: int = 0):
    """A smooth field on a 6 × 40 lattice measured ``reps`` times with noise ``sigma``."""
    t, x = np.meshgrid(np.linspace(0, 1, 6), np.linspace(0, 2, 40), indexing="ij")
    t, x = np.tile(t.ravel(), reps), np.tile(x.ravel(), reps)
    rng = np.random.default_rng(seed)
    u = np.exp(-t) * np.sin(np.pi * x) + sigma * rng.standard_normal(t.size)
    return t, x, u


def test_replicates_are_accepted_and_described():
    t, x, u = _assay()
    obs = Observations({"t": t, "x": x}, {"u": u})
    assert len(obs) == 720
    assert obs.replicates.distinct == 240
    assert obs.grid is None  # a grid index is one point's; replicates stay point columns
    assert repr(obs).startswith(
        "<Observations 720 points at 240 distinct coordinates, 3 replicates each; t in [0, 1]"
    )
    np.testing.assert_array_equal(obs.fields["u"], u)  # kept as given, never averaged


def test_spread_is_the_pooled_standard_deviation():
    # measured twice: (1, 3); three times: (2, 4, 6); once: 5 — deviations² 1+1 and
    # 4+0+4 over 1 + 2 degrees of freedom
    values = np.array([1.0, 2, 3, 4, 6, 5])
    obs = Observations(
        {"t": np.array([0.0, 1, 0, 1, 1, 0]), "x": np.array([0.0, 2, 0, 2, 2, 1])},
        {"u": values},
    )
    assert obs.replicates.describe(6) == "6 points at 3 distinct coordinates, 1–3 replicates each"
    assert obs.replicates.spread(values) == pytest.approx(np.sqrt(10 / 3), rel=1e-12)
    assert obs.replicate_noise()["u"] == pytest.approx(np.sqrt(10 / 3) / np.std(values), rel=1e-12)


def test_replicate_noise_measures_the_noise():
    """The noise the replicates give is within 10 % of the noise added (σ = 0.05 on 720
    points: 480 degrees of freedom), and estimate_noise returns it."""
    t, x, u = _assay(sigma=0.05, seed=3)
    obs = Observations({"t": t, "x": x}, {"u": u})
    sigma = obs.replicates.spread(obs.fields["u"])
    assert sigma == pytest.approx(0.05, rel=0.1)
    assert estimate_noise(obs) == pytest.approx(obs.replicate_noise(), rel=1e-12)
    assert "replicate spread: u 0.0491 (10.3% of its std)" in obs.describe()


def test_held_out_split_keeps_replicates_together():
    t, x, u = _assay()
    obs = Observations({"t": t, "x": x}, {"u": u})
    train, held = split_points(obs, 0.2, seed=1)
    assert len(held) == 3 * 48  # 20 % of the 240 coordinates, all three replicates of each
    seen = {(a, b) for a, b in zip(train.coords["t"], train.coords["x"])}
    assert not any((a, b) in seen for a, b in zip(held.coords["t"], held.coords["x"]))
    assert held.replicates.distinct == 48


def test_groups_follow_the_users_order():
    reps = find_replicates({"t": np.array([2.0, 1, 2, 0]), "x": np.array([0.0, 0, 0, 0])})
    np.testing.assert_array_equal(reps.group, [0, 1, 0, 2])
    np.testing.assert_array_equal(reps.counts, [2, 1, 1])
    assert find_replicates({"t": np.array([0.0, 1]), "x": np.array([0.0, 0])}) is None


# ----------------------------------------------------------------- few snapshots
def test_what_the_log_says_of_snapshots(caplog):
    from symweak.discover._snapshots import say_snapshots
    from symweak.grammar import parse_terms

    t, x, u = _assay()  # 6 snapshots 0.2 apart, 40 places, 3 replicates
    obs = Observations({"t": t, "x": x}, {"u": u})
    with caplog.at_level("INFO", logger="symweak"):
        text = say_snapshots(obs, parse_terms("u_t"), 3)
    assert text == (
        "symweak: the data are 6 snapshots in t (every 0.2, about 120 points each): time "
        "derivatives up to order 3 can be identified (u_t asked); between snapshots the "
        "network method's surrogate interpolates (its Gaussians start at least 3/4 of a gap "
        "wide along t)"
    )
    assert text in caplog.text
    dense = Observations({"t": np.repeat(np.arange(11.0), 3), "x": np.tile([0.0, 1, 2], 11)},
                         {"u": np.arange(33.0)})  # fmt: skip
    assert say_snapshots(dense, parse_terms("u_t"), 3) is None

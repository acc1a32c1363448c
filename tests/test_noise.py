"""The model-free noise estimate behind kernels="auto"."""

import numpy as np
import pytest

import symweak
from symweak.surrogate._noise import estimate_noise


def _field(n=3000, sigma=0.0, seed=0, dim=2):
    rng = np.random.default_rng(seed)
    coords = {"t": rng.uniform(0, 1, n), "x": rng.uniform(-1, 1, n)}
    if dim == 3:
        coords["y"] = rng.uniform(-1, 1, n)
    u = np.sin(2 * coords["x"] + coords["t"]) + 0.5 * np.cos(coords["t"] * 3)
    if dim == 3:
        u = u * np.cos(coords["y"])
    u = u + sigma * np.std(u) * rng.standard_normal(n)
    return symweak.Observations(coords=coords, fields={"u": u})


@pytest.mark.parametrize("dim", [2, 3])
def test_noise_estimate_reads_clean_as_small_and_noise_near_its_level(dim):
    assert estimate_noise(_field(dim=dim))["u"] < 0.01
    for sigma in (0.1, 0.3):
        est = estimate_noise(_field(sigma=sigma, dim=dim))["u"]
        # the leave-one-out residual of a local quadratic inflates the noise by ~20-40 %
        assert sigma * 0.9 < est < sigma * 1.6, (sigma, est)


def test_a_field_fast_along_one_axis_is_not_read_as_noise():
    """Eight wavelengths along x over a slow change in t: a round neighbourhood spans a third
    of a wavelength of x and its quadratic misses (0.12 of the spread), one stretched along
    x does not (0.015); noise of 0.1 on the same field reads 0.12 (0.17 round)."""
    rng = np.random.default_rng(3)
    t, x = rng.uniform(0, 3, 2600), rng.uniform(0, 20 * np.pi, 2600)
    u = np.cos(0.8 * x) * np.exp(-0.2 * t) + 0.3 * np.sin(0.3 * x + t)
    clean = symweak.Observations(coords={"t": t, "x": x}, fields={"u": u})
    round_only = estimate_noise(clean, stretches=())["u"]
    assert round_only > 0.1, round_only
    assert estimate_noise(clean)["u"] < 0.03
    noisy = symweak.Observations(
        coords={"t": t, "x": x}, fields={"u": u + 0.1 * np.std(u) * rng.standard_normal(2600)}
    )
    assert 0.09 < estimate_noise(noisy)["u"] < 0.16


def test_noise_estimate_is_seeded_and_handles_small_and_constant_data():
    obs = _field(n=30000, sigma=0.2)
    a = estimate_noise(obs, max_points=2000, seed=1)
    assert a == estimate_noise(obs, max_points=2000, seed=1)
    assert abs(a["u"] - estimate_noise(obs)["u"]) < 0.03
    tiny = symweak.Observations(
        coords={"t": [0.0, 1.0, 2.0], "x": [0.0, 1.0, 0.5]}, fields={"u": [1.0, 2.0, 3.0]}
    )
    assert np.isnan(estimate_noise(tiny)["u"])
    flat = _field(n=200)
    flat = symweak.Observations(coords=flat.coords, fields={"u": np.ones(200)})
    assert estimate_noise(flat)["u"] == 0.0


def test_an_equation_fitted_to_pure_noise_is_flagged(caplog):
    """A field of independent draws obeys no PDE: whatever the fit returns, it leaves most
    of u_t unexplained, and discover says so (logged, in warnings() and in the summary)."""
    import logging

    u = np.random.default_rng(0).normal(size=(41, 64))
    obs = symweak.Observations.from_grid(
        u, t=np.linspace(0, 1, 41), x=np.linspace(0, 2 * np.pi, 64, endpoint=False)
    )
    with caplog.at_level(logging.WARNING, logger="symweak"):
        res = symweak.discover(obs, ops="+,-,*", lhs="u_t", seed=0, progress=False)
    assert 0.9 < res.unexplained <= 1.0
    warning, nothing = res.warnings()
    assert warning.startswith(f"u_t: the equation leaves {100 * res.unexplained:.0f} % of u_t")
    # and the data determine no term and exclude none
    assert nothing.startswith("u_t: these data determine no term and exclude none of ")
    assert set(res.verdicts.values()) == {"uncertain"}
    assert warning in caplog.text
    assert "warning: " + warning in res.summary().splitlines()


def test_noise_readings_give_the_estimate_and_the_round_reading():
    """``noise_readings`` = (estimate_noise, the round neighbourhood's reading); too few
    points read NaN in both, a constant field 0 in both."""
    from symweak.surrogate import noise_readings

    obs = _field(sigma=0.1)
    lowest, round_ = noise_readings(obs)
    assert lowest == estimate_noise(obs)
    assert round_ == estimate_noise(obs, stretches=())
    assert round_["u"] >= lowest["u"]
    tiny = symweak.Observations(
        coords={"t": [0.0, 1.0, 2.0], "x": [0.0, 1.0, 0.5]}, fields={"u": [1.0, 2.0, 3.0]}
    )
    a, b = noise_readings(tiny)
    assert np.isnan(a["u"]) and np.isnan(b["u"])
    flat = symweak.Observations(coords=_field(n=200).coords, fields={"u": np.ones(200)})
    assert noise_readings(flat) == ({"u": 0.0}, {"u": 0.0})


def test_neighbour_correlation_tells_a_smooth_misfit_from_noise():
    from symweak.surrogate import neighbour_correlation

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (3000, 2))
    smooth = np.sin(2 * X[:, 0]) * np.cos(X[:, 1])
    assert neighbour_correlation(X, smooth) > 0.95
    assert abs(neighbour_correlation(X, rng.normal(size=3000))) < 0.06
    # replicates: each coordinate twice, independent noise at each (the nearest neighbour
    # at distance 0 is the other replicate, never the point itself)
    twice = np.concatenate([X, X])
    assert abs(neighbour_correlation(twice, rng.normal(size=6000))) < 0.06
    assert neighbour_correlation(twice, np.concatenate([smooth, smooth])) > 0.99
    assert neighbour_correlation(X[:2], smooth[:2]) == 0.0
    assert neighbour_correlation(X, np.zeros(3000)) == 0.0

"""An equation that couples no points, checked on the data's own time series at the places
they follow through time (symweak.discover._pointwise)."""

import numpy as np
import pytest

import symweak
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.discover._pointwise import (
    CONTRADICTED,
    WORSE_THAN_NONE,
    check_pointwise,
    contradicted,
    time_series_check,
)
from symweak.grammar import parse_equation
from symweak.ir import System


def _observations(u, noise: float = 0.0, seed: int = 0):
    """30 places × 40 times (t in [0, 1], x in [0, 2π)), as scattered points in shuffled
    order; ``u(t, x)`` the field."""
    t, x = np.meshgrid(np.linspace(0, 1, 40), np.linspace(0, 2 * np.pi, 30, endpoint=False))
    t, x = t.ravel(), x.ravel()
    order = np.random.default_rng(seed).permutation(t.size)
    t, x = t[order], x[order]
    values = u(t, x)
    values = values + noise * np.std(values) * np.random.default_rng(seed + 1).normal(size=t.size)
    return symweak.Observations(coords={"t": t, "x": x}, fields={"u": values})


def _check(obs, text):
    eq = parse_equation(text, coords="t,x")
    return time_series_check(obs, eq.lhs, eq.coefficients)


def decay(t, x):
    return np.exp(-0.5 * t) * (1.5 + np.sin(x))


def two_modes(t, x):  # u_t = u_xx: no function of u alone gives its time derivative
    return np.exp(-t) * np.sin(x) + np.exp(-9 * t) * np.sin(3 * x)


def test_a_pointwise_truth_is_explained_at_every_place():
    found = _check(_observations(decay), "u_t = -0.5*u")
    assert found["places"] == 30
    assert found["unexplained"] < 1e-3 and found["noise"] < 1e-3
    noisy = _check(_observations(decay, noise=0.02), "u_t = -0.5*u")
    assert noisy["unexplained"] < 2 * noisy["noise"]  # what is left is the noise
    assert 0.05 < noisy["noise"] < 1.0


def test_a_diffusing_field_contradicts_a_pointwise_equation():
    obs = _observations(two_modes)
    found = _check(obs, "u_t = -1*u")
    assert found["unexplained"] > CONTRADICTED and found["unexplained"] > 10 * found["noise"]
    assert _check(obs, "u_t = 1*u_xx") is None  # a term that couples points: not read here


def test_nothing_is_read_without_places_followed_through_time():
    rng = np.random.default_rng(0)
    t, x = rng.uniform(0, 1, 500), rng.uniform(0, 6, 500)  # every point its own place
    obs = symweak.Observations(coords={"t": t, "x": x}, fields={"u": decay(t, x)})
    assert _check(obs, "u_t = -0.5*u") is None


def _result(obs_u, text):
    record = FitRecord(
        lhs="u_t",
        residual=0.02,
        method="mstls",
        verdicts={"u": "determined"},
        alternatives=[{"terms": {"u": -1.0}, "held_out": 0.02, "margin": 0.0, "reason": "fit"}],
        excluded={"u_xx": 0.3, "u^2": 0.1},
    )
    system = System([parse_equation(text, coords="t,x")])
    check_pointwise(_observations(obs_u), system, [record])
    return Discovery(system, history=History(fits=[record]), settings={"coords": ["t", "x"]})


def test_a_contradicted_equation_determines_nothing_and_says_why(tmp_path):
    res = _result(two_modes, "u_t = -1*u")
    found = res.history.fits[0].time_series
    assert res.verdicts == {"u": "uncertain", "u_xx": "uncertain", "u^2": "uncertain"}
    assert res.excluded == {}
    assert res.warnings()[0] == (
        f"u_t: the equation couples no neighbouring points, and at the 30 places the data "
        f"follow through time it leaves {100 * found['unexplained']:.0f} % of u_t unexplained "
        f"(the reading's own error accounts for {100 * found['noise']:.0f} %): the data need "
        "terms this run did not resolve (the surrogate may not follow the field between those "
        "places), so they determine none of its terms."
    )
    res.save(tmp_path / "run.json")
    back = Discovery.load(tmp_path / "run.json")
    assert back.history.fits[0].time_series == pytest.approx(found)
    assert back.warnings()[0] == res.warnings()[0]


def test_an_equation_the_time_series_bear_out_keeps_its_verdicts():
    res = _result(decay, "u_t = -0.5*u")
    assert res.verdicts == {"u": "determined"}
    assert res.excluded == {"u_xx": 0.3, "u^2": 0.1}
    assert res.history.fits[0].time_series["unexplained"] < 1e-3
    assert not any("couples no neighbouring points" in w for w in res.warnings())


def test_an_equation_worse_than_none_is_contradicted_at_any_noise():
    """At 30 % noise the reading's error accounts for more than the whole derivative, yet
    u_t = +0.5 u leaves more unexplained than u_t = 0 does: contradicted; the truth not."""
    obs = _observations(decay, noise=0.3)
    wrong, right = _check(obs, "u_t = 0.5*u"), _check(obs, "u_t = -0.5*u")
    assert wrong["unexplained"] < 2 * wrong["noise"]  # the noise rule alone would pass it
    assert wrong["unexplained"] > WORSE_THAN_NONE and contradicted(wrong)
    assert right["unexplained"] < 1.0 and not contradicted(right)

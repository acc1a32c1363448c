"""Ill-posed equations (symweak.discover._posed): backward diffusion or an anti-dissipative
highest even-order term at the observed values, beyond the noise, is said in words."""

import numpy as np
import pytest

from symweak import Observations, parse_equation
from symweak.discover import Discovery
from symweak.discover._history import History, WarmupRecord
from symweak.discover._posed import QUANTILES, ill_posed, observed_values
from symweak.ir import System


def _values(lo, hi, noise=0.0):
    return {"u": {"quantiles": np.linspace(lo, hi, QUANTILES).tolist(), "noise": noise}}


def _said(text, observed, coords="t,x,y"):
    return ill_posed(parse_equation(text, coords, "u,v"), observed)


@pytest.mark.parametrize(
    "text",
    [
        "u_t = 0.1*u_xx",
        "u_t = -u_xx - u_xxxx",  # Kuramoto-Sivashinsky: the fourth order damps
        "u_t = -0.5*d_x(u^2) + 0.02*u_xx - u_xxx",
        "u_t = 0.1*u_xx + 0.1*u_yy - u",
        "u_t = 0.05*d_xx(u^3) - 2*u",  # degenerate at u = 0 only
        "u_t = d_xx(u*v)",  # cross-diffusion: not judged
        "u_t = -0.1*u_xx + u_xy",  # a mixed derivative of the same order: not judged
        "u_t = 0.5*u_x^2 + 0.1*u_xx",  # KPZ: the product of derivatives is first order
    ],
)
def test_well_posed_or_not_judged(text):
    assert _said(text, _values(-1.0, 1.0)) is None


def test_only_even_orders_count_a_dispersion_does_not_save_backward_diffusion():
    said = _said("u_t = -0.5*d_x(u^2) - 0.01*u_xx - u_xxx", _values(0.0, 1.0))
    assert said.startswith("u_t: the equation is ill-posed: its diffusion along x, D(u) = -0.01")


def test_backward_diffusion_is_ill_posed_everywhere():
    assert _said("u_t = u - u^2 - 0.5*u_xx", _values(0.0, 1.0)) == (
        "u_t: the equation is ill-posed: its diffusion along x, D(u) = -0.5, is negative at "
        "every observed value, so short waves grow without bound there and it cannot be "
        "integrated forward. The data rarely determine the terms that do this; read "
        "res.verdicts and res.alternatives before using it."
    )


def test_an_amplifying_fourth_order_term_is_named():
    said = _said("u_t = -u_xx + 2*u_xxxx", _values(-1.0, 1.0))
    assert said.startswith(
        "u_t: the equation is ill-posed: its order-4 term along x, D(u) ∂x^4 with D(u) = 2, "
        "has the sign that amplifies short waves at every observed value"
    )


def test_a_density_dependent_diffusion_negative_at_low_density():
    """The 10 000-cell scratch assay's equation on two threads (docs/real-data.md):
    D(u) = -44.2 + 9.2e4 u, negative below u = 4.8e-4."""
    said = _said(
        "u_t = 0.0646*u - 49.3*u^2 - 44.2*u_xx + 4.6e4*d_xx(u^2)", _values(0.0, 1.2e-3, 1e-5)
    )
    assert said.startswith(
        "u_t: the equation is ill-posed: its diffusion along x, D(u) = -44.2 + 9.2e4*u, is "
        "negative where u < 4.8e-4 (about 38 % of the observed values, beyond the noise)"
    )
    # with noise of 1e-4 the margin is 3e-4: only values below 1.8e-4 count
    wide = _said(
        "u_t = 0.0646*u - 49.3*u^2 - 44.2*u_xx + 4.6e4*d_xx(u^2)", _values(0.0, 1.2e-3, 1e-4)
    )
    assert "where u < 4.8e-4 (about 16 % of the observed values, beyond the noise)" in wide


def test_noise_around_zero_does_not_make_a_porous_medium_ill_posed():
    """0.5 d_xx(u²) has D = u: negative at the noisy readings below zero, within the noise."""
    assert _said("u_t = 0.5*d_xx(u^2)", _values(-0.1, 1.0, noise=0.04)) is None
    assert _said("u_t = 0.5*d_xx(u^2)", _values(-0.1, 1.0, noise=0.0)) is not None


def test_the_other_axis_and_a_system_s_second_field():
    assert "along y, D(u) = -0.2" in _said("u_t = 0.1*u_xx - 0.2*u_yy", _values(0.0, 1.0))
    eq = parse_equation("v_t = -0.3*v_xx", "t,x", "u,v")
    assert ill_posed(eq, _values(0.0, 1.0)) is None  # no values of v
    both = {**_values(0.0, 1.0), "v": _values(0.0, 1.0)["u"]}
    assert ill_posed(eq, both).startswith("v_t: the equation is ill-posed: its diffusion")


def test_observed_values_keep_quantiles_and_the_noise_in_the_field_s_units():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.0, 2.0, 1000)
    obs = Observations(coords={"t": rng.uniform(0, 1, 1000), "x": rng.uniform(0, 1, 1000)},
                       fields={"u": u})  # fmt: skip
    history = History()
    history.phases["warmup"] = WarmupRecord(1.0, None, 64, noise={"u": 0.1})
    got = observed_values(obs, history)
    assert got["u"]["quantiles"][0] == u.min() and got["u"]["quantiles"][-1] == u.max()
    assert got["u"]["quantiles"][50] == pytest.approx(np.median(u))
    assert got["u"]["noise"] == pytest.approx(0.1 * np.std(u))
    assert observed_values(obs, History())["u"]["noise"] == 0.0


def test_the_result_warns_and_keeps_the_values_when_saved(tmp_path):
    history = History(observed=_values(0.0, 1.0))
    res = Discovery(System([parse_equation("u_t = -0.5*u_xx", "t,x", "u")]), history=history)
    said = [w for w in res.warnings() if "ill-posed" in w]
    assert len(said) == 1 and said[0].startswith("u_t: the equation is ill-posed")
    res.save(tmp_path / "run.json")
    again = Discovery.load(tmp_path / "run.json")
    assert again.history.observed == history.observed
    assert [w for w in again.warnings() if "ill-posed" in w] == said


def test_a_failed_simulation_of_an_ill_posed_equation_says_why():
    import symweak

    t, x = np.linspace(0, 1, 21), np.linspace(0, 2 * np.pi, 64, endpoint=False)
    rng = np.random.default_rng(0)
    u = np.sin(x)[None, :] + 0 * t[:, None] + 0.01 * rng.standard_normal((21, 64))
    obs = Observations.from_grid(t=t, x=x, fields={"u": u})
    history = History(observed=_values(-1.0, 1.0))
    res = Discovery(System([parse_equation("u_t = -0.5*u_xx", "t,x", "u")]), history=history,
                    coords=("t", "x"), fields=("u",))  # fmt: skip
    with pytest.raises(symweak.SymweakError) as info:
        res.simulate(obs, periodic=["x"])
    said = str(info.value)
    assert said.startswith("The simulation failed: ")
    assert "u_t: the equation is ill-posed: its diffusion along x, D(u) = -0.5" in said


def test_the_warning_names_the_closest_alternative_that_is_not_ill_posed():
    """The 10 000-cell assay (two threads): of the equations the data cannot tell apart,
    the logistic one without diffusion is well posed."""
    from symweak.discover._history import FitRecord

    returned = {"u": 0.06458, "u^2": -49.28, "u_xx": -44.21, "d_xx(u^2)": 46024.0}
    alternatives = [
        {"terms": returned, "held_out": 0.2244, "margin": 0.296, "reason": "fit"},
        {"terms": {"u": 0.05522, "u^2": -33.58}, "held_out": 0.2145, "margin": 0.0,
         "reason": "fit"},
    ]  # fmt: skip
    fit = FitRecord(lhs="u_t", residual=0.2, method="mstls+tls", alternatives=alternatives)
    history = History(observed=_values(0.0, 1.2e-3, 1e-5), fits=[fit])
    eq = parse_equation("u_t = 0.06458*u - 49.28*u^2 - 44.21*u_xx + 46024*d_xx(u^2)", "t,x", "u")
    res = Discovery(System([eq]), history=history, coords=("t", "x"), fields=("u",))
    said = [w for w in res.warnings() if "ill-posed" in w]
    assert len(said) == 1
    assert said[0].endswith(
        "before using it. Of the equations these data cannot tell apart from it, "
        "u_t = 0.05522*u - 33.58*u^2 is not ill-posed (res.alternatives)."
    )
    fit.alternatives = alternatives[:1]  # none other: nothing more is said
    assert res.warnings()[-1].endswith("read res.verdicts and res.alternatives before using it.")


@pytest.mark.parametrize(
    "text, ill",
    [
        ("u_tt = 1.2*u_xx - 0.3*u_t", False),  # the telegraph equation: u_t is lower order
        ("u_tt = u_xx + u_yy - sin(u)", False),  # sine-Gordon
        ("u_tt = -u_xxxx", False),  # a beam
        ("u_tt = -1.2*u_xx - 0.3*u_t", True),  # no real wave speed
        ("u_tt = u_xxxx", True),
    ],
)
def test_second_order_in_time(text, ill):
    said = _said(text, _values(-1.0, 1.0))
    assert (said is not None) == ill
    if text.startswith("u_tt = -1.2"):
        assert said.startswith(
            "u_tt: the equation is ill-posed: its wave term along x, c²(u) = -1.2, is negative "
            "at every observed value"
        )


def _judged(monkeypatch):
    """preferred_support with the verdicts' alternatives given: the selection's support
    (u, u², u_xx with a negative u_xx) and (u, u²), both within reach."""
    import importlib

    from symweak.regress._verdict import Alternative, Judgement

    functions = importlib.import_module("symweak.discover.network._functions")
    alts = [
        Alternative((0, 1, 2), np.array([0.065, -49.3, -44.2]), 0.224, 0.3, 1.0),
        Alternative((0, 1), np.array([0.055, -33.6, 0.0]), 0.215, 0.0, 0.9),
    ]
    monkeypatch.setattr(functions, "judge", lambda *a, **k: Judgement({}, alts))
    from symweak.grammar import parse_terms

    lib = parse_terms("u, u^2, u_xx", "t,x", "u")

    def choose(ill):
        return functions.preferred_support(
            lib, np.zeros((4, 3)), np.zeros(4), np.array([0.065, -49.3, -44.2]),
            how="terms", constraints=None, seed=0, ill=ill,
        )  # fmt: skip

    return choose


def test_an_ill_posed_support_within_reach_gives_way_to_a_well_posed_one(monkeypatch):
    choose = _judged(monkeypatch)
    assert choose(None) is None  # within reach: kept
    assert choose(lambda c: c[2] < 0) == [0, 1]  # ill-posed: the best well-posed one
    assert choose(lambda c: True) is None  # every one ill-posed: kept
    assert choose(lambda c: False) is None  # well posed: kept


def test_the_result_says_which_equation_was_replaced(tmp_path):
    from symweak.discover._posed import replaced

    eq = parse_equation("u_t = 0.0646*u - 49.3*u^2 - 44.2*u_xx + 4.6e4*d_xx(u^2)", "t,x", "u")
    record = replaced(eq.lhs, eq.rhs, _values(0.0, 1.2e-3, 1e-5))
    history = History(posed={"u_t": record})
    ret = parse_equation("u_t = 0.06519*u - 50.01*u^2", "t,x", "u")
    res = Discovery(System([ret]), history=history, coords=("t", "x"), fields=("u",))
    assert res.warnings()[-1] == (
        "u_t: the selection's equation, u_t = 0.0646*u - 49.3*u^2 - 44.2*u_xx + "
        "4.6e+04*d_xx(u^2), is ill-posed (its diffusion along x, D(u) = -44.2 + 9.2e4*u, is "
        "negative where u < 4.8e-4 (about 38 % of the observed values, beyond the noise)); "
        "the equation returned is the best-scoring of those these data cannot tell apart "
        "from it that is well posed."
    )
    res.save(tmp_path / "run.json")
    assert Discovery.load(tmp_path / "run.json").history.posed == {"u_t": record}

"""The warning of an equation that leaves most of its left-hand side unexplained names
lopsided units (symweak.discover._units)."""

import numpy as np
import pytest

import symweak
from symweak.discover._problem import Problem
from symweak.discover._units import lopsided, unexplained

LOPSIDED = {"spans": {"t": 480.0, "x": 3.0}, "scales": ["cap", "axis"]}


def test_lopsided_units_are_named_with_the_ratio_and_the_way_out():
    assert lopsided(LOPSIDED) == (
        "or its units lopsided: t spans 160 times the range of x here, and the test "
        "functions are isotropic (the paper's radius), so the units decide how far they reach "
        "along t; rescale t (minutes for seconds, say) or pass scales=('spectrum', 'cap') to "
        "size them by the field's spectrum"
    )
    assert unexplained("v_t", 0.721, LOPSIDED) == (
        "v_t: the equation leaves 72 % of v_t unexplained; the data may be too noisy or too "
        "sparse to determine it, " + lopsided(LOPSIDED) + ". Compare the Pareto front and "
        "the intervals before using it."
    )


@pytest.mark.parametrize(
    "settings",
    [
        {"spans": {"t": 10.0, "x": 16.0}, "scales": ["cap", "axis"]},  # aspect 1.6
        {"spans": {"t": 480.0, "x": 3.0}, "scales": ["axis", "cap"]},  # already per axis
        {"spans": {"t": 480.0, "x": 3.0}, "scales": ["spectrum", "cap"]},  # the user's spectrum
        {"scales": ["cap", "axis"]},  # saved before the spans were recorded
        {"spans": {"t": 480.0, "x": 0.0}},  # one place only
    ],
)
def test_nothing_is_said_of_units_that_are_not_lopsided_or_already_per_axis(settings):
    assert lopsided(settings) is None
    assert unexplained("u_t", 0.6, settings) == (
        "u_t: the equation leaves 60 % of u_t unexplained; the data may be too noisy or too "
        "sparse to determine it. Compare the Pareto front and the intervals before using it."
    )


def test_a_run_records_each_coordinates_range():
    t, x = np.meshgrid(np.linspace(0.0, 480.0, 5), np.linspace(-1.5, 1.5, 7), indexing="ij")
    obs = symweak.Observations({"t": t.ravel(), "x": x.ravel()}, {"u": np.sin(x - t / 100).ravel()})
    spans = Problem.build(obs, "+,-,*", "u_t", 0, None, None).record()["spans"]
    assert spans == {"t": pytest.approx(480.0), "x": pytest.approx(3.0)}


def test_a_contradicted_pointwise_equation_names_lopsided_units():
    from symweak.discover._pointwise import said

    found = {"places": 226, "unexplained": 2.16, "noise": 0.70}
    plain = (
        "u_t: the equation couples no neighbouring points, and at the 226 places the data "
        "follow through time it leaves 216 % of u_t unexplained (the reading's own error "
        "accounts for 70 %): the data need terms this run did not resolve (the surrogate may "
        "not follow the field between those places{}), so they determine none of its terms."
    )
    assert said("u_t", found) == plain.format("")
    spans = {"spans": {"t": 1800.0, "x": 160.0}, "scales": ["cap", "axis"]}
    assert said("u_t", found, lopsided(spans)) == plain.format(
        ", or its units lopsided: t spans 11.2 times the range of x here, and the test "
        "functions are isotropic (the paper's radius), so the units decide how far they reach "
        "along t; rescale t (minutes for seconds, say) or pass scales=('spectrum', 'cap') to "
        "size them by the field's spectrum"
    )


@pytest.mark.parametrize(
    ("spans", "ratio"),
    [
        ({"t": 600.0, "x": 20.0}, 30.0),  # time in hundredths of the unit
        ({"t": 100.0, "x": 20.0, "y": 5.0}, 20.0),  # the shortest space axis counts
        ({"t": 160.0, "x": 20.0}, None),  # exactly ISOTROPY_ASPECT: the paper's radius
        ({"t": 6.0, "x": 20000.0}, None),  # space is the long axis: the default stays
        ({"t": 480.0}, None),  # no space axis
    ],
)
def test_time_is_long_where_it_spans_more_than_eight_times_the_shortest_space_axis(spans, ratio):
    from symweak.discover._units import long_time

    assert long_time(spans) == (None if ratio is None else pytest.approx(ratio))


def _captured(monkeypatch, t_span: float, x_span: float = 3.0, times: int = 0, **kwargs):
    """The configuration and settings ``discover`` hands the network method for point
    columns whose time spans ``t_span`` against x over ``x_span`` (``times`` > 0: that
    many snapshots, each at 80 places)."""
    from symweak.discover import _api

    seen = {}

    def network(problem, cfg, progress, settings, rebuild):
        seen.update(cfg=cfg, settings=settings)
        raise KeyboardInterrupt  # stop before any training

    monkeypatch.setattr(_api, "_network", network)
    rng = np.random.default_rng(0)
    if times:
        t = np.repeat(np.linspace(0.0, t_span, times), 80)
        x = np.tile(np.linspace(-x_span / 2, x_span / 2, 80), times)
    else:
        t, x = rng.uniform(0.0, t_span, 400), rng.uniform(-x_span / 2, x_span / 2, 400)
    obs = symweak.Observations({"t": t, "x": x}, {"u": np.sin(x / x_span - t / t_span)})
    with pytest.raises(KeyboardInterrupt):
        symweak.discover(obs, ops="+,-,*", **kwargs)
    return seen["cfg"], seen["settings"]


def test_a_long_time_axis_takes_the_spectrums_radii_unless_the_user_chose_them(monkeypatch, caplog):
    with caplog.at_level("INFO", logger="symweak"):
        cfg, settings = _captured(monkeypatch, 480.0)
    assert cfg.tests.scales == ("spectrum", "cap") and settings["scales"] == ["spectrum", "cap"]
    assert (
        "symweak: t spans 160 times the range of x: the test functions take the radii the "
        "field's spectrum reads (scales=('spectrum', 'cap'); pass scales=... to choose)"
        in caplog.text
    )
    assert settings["spectral"] == "t" and "per_axis" not in settings
    assert _captured(monkeypatch, 6.0)[0].tests.scales == ("cap", "axis")  # aspect 2
    chosen = _captured(monkeypatch, 480.0, scales=("cap",))[0]
    assert chosen.tests.scales == ("cap",)  # the user's choice stands
    given = _captured(monkeypatch, 480.0, config={"scales": ["paper"]})[0]
    assert given.tests.scales == ("paper",)
    # five snapshots over a long time (an assay in hours and millimetres): the paper's radius
    cfg, settings = _captured(monkeypatch, 480.0, times=5)
    assert cfg.tests.scales == ("cap", "axis") and "spectral" not in settings
    assert settings["snapshots"] == "t"
    assert lopsided(settings) == (
        "or its units lopsided: t spans 160 times the range of x here, and the test functions "
        "are isotropic (the paper's radius, kept for a few snapshots), so the units decide how "
        "far they reach along t; rescale t (minutes for seconds, say) and compare"
    )


@pytest.mark.parametrize(
    ("spans", "found"),
    [
        ({"t": 6.0, "x": 200.0}, ("x", 200.0 / 6.0)),  # x in tenths of the model's unit
        ({"t": 3.0, "x": 40.0, "y": 10.0}, ("x", 40.0 / 3.0)),  # the longest space axis
        ({"x": 100.0, "y": 5.0}, ("x", 20.0)),  # no time: space against space
        ({"t": 6.0, "x": 48.0}, None),  # exactly ISOTROPY_ASPECT: the paper's radius
        ({"t": 600.0, "x": 20.0}, None),  # time is the long axis
    ],
)
def test_a_space_axis_is_long_where_it_spans_more_than_eight_times_the_shortest(spans, found):
    from symweak.discover._units import long_space

    got = long_space(spans)
    assert got is None if found is None else got == (found[0], pytest.approx(found[1]))


def test_a_long_space_axis_takes_the_spectrums_radii_unless_the_data_are_snapshots(
    monkeypatch, caplog
):
    with caplog.at_level("INFO", logger="symweak"):
        cfg, settings = _captured(monkeypatch, 3.0, x_span=300.0)
    assert cfg.tests.scales == ("spectrum", "cap") and settings["spectral"] == "x"
    assert "per_axis" not in settings
    assert (
        "symweak: x spans 99.8 times the range of t: the test functions take the radii the "
        "field's spectrum reads (scales=('spectrum', 'cap'); pass scales=... to choose)"
        in caplog.text
    )
    # five snapshots (a scratch assay's layout): the paper's radius stays
    cfg, settings = _captured(monkeypatch, 3.0, x_span=300.0, times=5)
    assert cfg.tests.scales == ("cap", "axis") and "spectral" not in settings
    # forty times: the data follow the field through time (a lattice: the network asked for)
    assert _captured(monkeypatch, 3.0, x_span=300.0, times=40, method="network")[
        0
    ].tests.scales == (
        "spectrum",
        "cap",
    )
    assert _captured(monkeypatch, 3.0, x_span=300.0, scales=("cap",))[0].tests.scales == ("cap",)


def test_a_run_that_took_the_spectrums_radii_for_a_long_space_axis_still_names_its_units():
    settings = {"spans": {"t": 3.0, "x": 40.0}, "scales": ["spectrum", "cap"], "spectral": "x"}
    assert lopsided(settings) == (
        "or its units lopsided: x spans 13.3 times the range of t here, so the test functions "
        "took the radii the field's spectrum reads; rescale x (millimetres for micrometres, "
        "say) and compare"
    )


def test_a_saved_run_that_scaled_a_long_time_per_axis_still_names_its_units():
    settings = {"spans": {"t": 1800.0, "x": 160.0}, "scales": ["axis", "cap"], "per_axis": "t"}
    assert lopsided(settings) == (
        "or its units lopsided: t spans 11.2 times the range of x here, so the test functions "
        "were scaled per axis; rescale t (minutes for seconds, say) and compare"
    )


def test_a_long_space_axis_is_named_with_a_change_of_length_units():
    settings = {"spans": {"t": 48.0, "x": 1900.0}, "scales": ["cap", "axis"]}
    assert lopsided(settings) == (
        "or its units lopsided: x spans 39.6 times the range of t here, and the test "
        "functions are isotropic (the paper's radius), so the units decide how far they reach "
        "along x; rescale x (millimetres for micrometres, say) or pass "
        "scales=('spectrum', 'cap') to size them by the field's spectrum"
    )


def _large(top: float) -> dict:
    return {"u": {"quantiles": list(np.linspace(-0.4 * top, top, 101)), "noise": 0.01}}


def test_a_function_of_a_field_in_large_units_is_named_in_the_warnings():
    """A sine damping handed over with u up to 1 250 came back as its Taylor stand-in:
    the candidate sin(u) takes u as given, and sin(u/500) is no candidate."""
    from symweak.discover._history import FitRecord, History
    from symweak.discover._result import Discovery
    from symweak.discover._units import functions_of_large_fields
    from symweak.grammar import parse_equation
    from symweak.ir import System

    text = (
        "sin(u), tanh(u): the candidate terms take u as given, and it reaches 1232 here; a "
        "function of a quantity in units needs a reference value inside it (sin(u/u0)): "
        "divide u by a typical value before discover if such a term is expected"
    )
    assert functions_of_large_fields({"ops": "+,-,*,sin,tanh"}, _large(1250.0)) == [text]
    assert functions_of_large_fields({"ops": "+,-,*"}, _large(1250.0)) == []  # no function
    assert functions_of_large_fields({"ops": "+,-,*,sin"}, _large(2.5)) == []  # |u| ≤ 2.5
    assert functions_of_large_fields({"ops": "+,-,*,sin"}, {}) == []  # saved without them
    eq = parse_equation("u_t = -0.4977*u + 0.1079*u_xx", coords="t,x")
    history = History(
        fits=[FitRecord(lhs="u_t", residual=0.01, method="mstls")], observed=_large(1250.0)
    )
    res = Discovery(System([eq]), settings={"ops": "+,-,*,sin,tanh"}, history=history)
    assert text in res.warnings()

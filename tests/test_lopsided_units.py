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
        "along t; rescale t (minutes for seconds, say) or pass scales=('axis', 'cap') to "
        "scale them per axis"
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
        "along t; rescale t (minutes for seconds, say) or pass scales=('axis', 'cap') to "
        "scale them per axis"
    )

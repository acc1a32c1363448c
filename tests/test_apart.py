"""The weak form's alternatives that the data tell apart from the returned equation
(discover/network/_apart.py)."""

import math

import pytest

from symweak.discover._history import FitRecord
from symweak.discover.network._apart import (
    APART,
    alternatives_to_refit,
    doubted,
    substituted,
    tell_apart,
)
from symweak.grammar import parse_terms

RETURNED = {"d_x(u^3)": -0.3017, "u_xx": 0.05446}
STAND_IN = {"d_x(u^3)": -0.3008, "d_xx(sin(u))": 0.06698}
KEY = ("d_x(u^3)", "d_xx(sin(u))")
NAGUMO = {"u": -0.3234, "u^2": 1.463, "u^3": -1.138, "u_xx": 0.1145}


def _record(*more) -> FitRecord:
    """Cubic flux at σ 0.05 (tuning half, seed 0): u_xx uncertain beside the weak form's
    alternative with d_xx(sin u) in its place, and the alternatives ``more``."""
    return FitRecord(
        lhs="u_t", residual=0.0422, method="mstls+tls",
        intervals={"d_x(u^3)": [-0.317, -0.2863], "u_xx": [0.05151, 0.06123]},
        verdicts={"d_x(u^3)": "determined", "u_xx": "uncertain", "d_xx(sin(u))": "uncertain"},
        alternatives=[
            {"terms": dict(RETURNED), "held_out": 0.0422, "margin": 0.0, "reason": "fit"},
            {"terms": dict(STAND_IN), "held_out": 0.0401, "margin": 0.005, "reason": "fit"},
            *more,
        ],
        floors={"u_xx": 0.12, "d_xx(sin(u))": 0.17},
        excluded={"u_x": 0.14},
    )  # fmt: skip


def _lib(names) -> dict:
    return {t.short(): t for t in parse_terms(", ".join(names), "t,x", "u")}


def test_the_weak_forms_alternatives_are_refitted_closest_first_but_not_the_returned_one():
    record = _record(
        {"terms": {"d_x(u^3)": -0.3, "u_xx": 0.05, "u_x": 0.01}, "held_out": 0.042,
         "margin": 0.001, "reason": "fit"},
        {"terms": {"d_x(u^3)": -0.3}, "held_out": 0.2, "margin": 0.0, "reason": "data"},
    )  # fmt: skip
    lib = _lib(["d_x(u^3)", "u_xx", "d_xx(sin(u))", "u_x"])
    assert alternatives_to_refit(record, lib) == [list(STAND_IN), ["d_x(u^3)", "u_xx", "u_x"]]
    # a term the candidates lack: not refitted
    assert alternatives_to_refit(record, _lib(["d_x(u^3)", "u_xx", "u_x"])) == [
        ["d_x(u^3)", "u_xx", "u_x"]
    ]
    supports = [["u_x"], ["u_xx"], ["d_x(u^3)", "u_x"], ["u_x", "u_xx"], ["d_x(u^3)"]]
    record.alternatives[1:] = [
        {"terms": dict.fromkeys(s, 0.1), "held_out": 0.05, "margin": 0.0, "reason": "fit"}
        for s in supports
    ]
    assert alternatives_to_refit(record, lib) == supports[:APART] and APART == 3


def test_an_alternative_the_data_fit_worse_leaves_with_the_verdicts_it_made():
    record = _record()
    fresh = tell_apart(record, {KEY: 14.34})
    assert fresh == {"u_xx": 0.12}
    assert record.verdicts == {"d_x(u^3)": "determined", "u_xx": "determined"}
    assert record.floors == {}
    assert record.excluded == {"u_x": 0.14, "d_xx(sin(u))": 0.17}
    assert [a["terms"] for a in record.alternatives] == [RETURNED]
    assert record.refits == {"= d_x(u^3) + d_xx(sin(u))": pytest.approx(14.34)}


@pytest.mark.parametrize("value", [10.0, 0.0, -30.0])
def test_an_alternative_the_data_fit_as_well_or_better_stays(value):
    record = _record()
    assert tell_apart(record, {KEY: value}) is None
    assert record.verdicts["u_xx"] == record.verdicts["d_xx(sin(u))"] == "uncertain"
    assert len(record.alternatives) == 2 and record.floors == {"u_xx": 0.12, "d_xx(sin(u))": 0.17}
    assert record.refits == {"= d_x(u^3) + d_xx(sin(u))": value}


def test_a_verdict_another_alternative_also_makes_stands():
    """The symmetry hypothesis's alternative also lacks u_xx (and holds d_xx(sin u)):
    telling the weak form's apart changes no verdict."""
    other = {"terms": dict(STAND_IN), "held_out": 0.05, "margin": 0.2, "reason": "symmetry"}
    record = _record(other)
    assert tell_apart(record, {KEY: 50.0}) is None
    assert record.verdicts["u_xx"] == record.verdicts["d_xx(sin(u))"] == "uncertain"
    assert [a["reason"] for a in record.alternatives] == ["fit", "symmetry"]


def test_the_surrogate_before_tunings_alternative_is_refitted_and_told_apart_too():
    """Nagumo at σ 0.05 (tuning half, seed 0): the surrogate before tuning saw
    0.2165 u − 0.2104 u², and u³, u_xx were uncertain; the data fit it worse by 163."""
    record = FitRecord(
        lhs="u_t", residual=0.0049, method="mstls+tls",
        intervals={t: [c - 0.1, c + 0.1] for t, c in NAGUMO.items()},
        verdicts={"u": "determined", "u^2": "determined", "u^3": "uncertain",
                  "u_xx": "uncertain"},
        alternatives=[
            {"terms": dict(NAGUMO), "held_out": 0.0049, "margin": 0.0, "reason": "fit"},
            {"terms": {"u": 0.2165, "u^2": -0.2104}, "held_out": 0.0106, "margin": 0.0,
             "reason": "untuned"},
        ],
        floors={"u^3": 0.4, "u_xx": 0.023},
        untuned={"phase": "search", "verdicts": {"u": "determined", "u^2": "determined"},
                 "disputed": ["u^3", "u_xx"]},
    )  # fmt: skip
    lib = _lib(["u", "u^2", "u^3", "u_xx"])
    assert alternatives_to_refit(record, lib) == [["u", "u^2"]]
    assert tell_apart(record, {("u", "u^2"): 162.9}) == {"u^3": 0.4, "u_xx": 0.023}
    assert set(record.verdicts.values()) == {"determined"} and len(record.alternatives) == 1
    assert record.untuned["disputed"] == []  # no warning names them


def test_a_term_it_determined_that_the_data_fit_better_without_is_uncertain_again():
    record = _record()
    fresh = tell_apart(record, {KEY: 14.34})
    doubted(record, "u_xx", 25.0, fresh)  # the data need it: determined
    assert record.verdicts["u_xx"] == "determined"
    doubted(record, "u_xx", -15.1, fresh)  # they fit the equation better without it
    assert record.verdicts["u_xx"] == "uncertain" and record.floors["u_xx"] == 0.12
    record.verdicts["d_x(u^3)"] = "determined"
    doubted(record, "d_x(u^3)", -15.1, fresh)  # not one it determined: the drop decides
    assert record.verdicts["d_x(u^3)"] == "determined"
    fresh = {"u": math.inf}
    record.verdicts["u"] = "determined"
    doubted(record, "u", -20.0, fresh)
    assert record.floors["u"] == math.inf


def test_substituted_alternatives_hold_the_swap_in_place_of_the_replaced_term():
    """Moved here from the check: the selected equation's data alternatives holding a
    replaced term, with the swap made in them, none equal to the swap."""
    record = _record(
        {"terms": {"d_x(u^3)": -0.3, "u_xx": 0.05, "u_x": 0.01}, "held_out": 0.042,
         "margin": 0.5, "reason": "data"},
        {"terms": {"u_xx": 0.05}, "held_out": 0.3, "margin": 0.1, "reason": "data"},
    )  # fmt: skip
    lib = _lib(["d_x(u^3)", "d_x(u^4)", "u_xx", "u_x"])
    mine = {"d_x(u^4)", "u_xx"}
    assert substituted(record, ("d_x(u^3)",), "d_x(u^4)", mine, lib) == [
        ["d_x(u^4)", "u_xx", "u_x"]
    ]

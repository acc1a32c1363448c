"""A determined term that an alternative holds below the size the data would detect
(discover/network/_faint.py)."""

import math

import pytest

from symweak.discover._history import FitRecord
from symweak.discover.network._faint import faint
from symweak.discover.network._refit import REFIT_CHI2

RETURNED = {"u": 0.0972, "u^2": 0.0166, "u^3": -0.1201}


def _record(alternative: dict, refit_u: float = 676.9) -> FitRecord:
    """The Zeldovich front's record (σ 0.1): u determined by a drop refit of ``refit_u``,
    one alternative from the data beside the returned equation."""
    return FitRecord(
        lhs="u_t", residual=0.2, method="mstls+tls",
        intervals={t: [c - 0.01, c + 0.01] for t, c in RETURNED.items()},
        verdicts={"u": "determined", "u^2": "uncertain", "u^3": "determined",
                  "u_xx": "uncertain"},
        alternatives=[
            {"terms": dict(RETURNED), "held_out": 0.2, "margin": 0.0, "reason": "fit"},
            {"terms": alternative, "held_out": 0.044, "margin": 21.5, "reason": "data"},
        ],
        refits={"u": refit_u, "u^2": 7900.0},
        floors={"u_xx": 0.0024},
        excluded={"u": 0.5},
    )  # fmt: skip


TRUTH = {"u": -0.00093, "u^2": 0.344, "u_xx": 0.0022, "u^3": -0.351}


def test_a_term_an_alternative_holds_below_its_floor_is_uncertain():
    record = _record(dict(TRUTH))
    assert faint(record) == ["u"]
    floor = 0.0972 * math.sqrt(REFIT_CHI2 / 676.9)
    assert record.verdicts == {"u": "uncertain", "u^2": "uncertain", "u^3": "determined",
                               "u_xx": "uncertain"}  # fmt: skip
    assert record.floors == {"u_xx": 0.0024, "u": pytest.approx(floor, rel=1e-12)}
    assert floor == pytest.approx(0.01229, abs=1e-5) and "u" not in record.excluded
    # the alternative without it joins, with the holder's misfit and margin
    assert record.alternatives[-1] == {
        "terms": {"u^2": 0.344, "u_xx": 0.0022, "u^3": -0.351},
        "held_out": 0.044,
        "margin": 21.5,
        "reason": "data",
    }
    assert len(record.alternatives) == 3  # fmt: skip


def test_a_term_every_alternative_holds_above_its_floor_stays_determined():
    # u at 0.02 is above the 0.0123 its drop says the data detect; u^3 has no drop refit
    record = _record({**TRUTH, "u": 0.02})
    assert faint(record) == []
    assert record.verdicts["u"] == "determined" and record.verdicts["u^3"] == "determined"
    assert len(record.alternatives) == 2 and "u" not in record.floors


def test_a_weak_drop_makes_the_floor_larger():
    # a drop of 1e6 puts the floor at 0.00032: u at -0.00093 is above it
    record = _record(dict(TRUTH), refit_u=1e6)
    assert faint(record) == [] and record.verdicts["u"] == "determined"
    # a drop below the cutoff has made it uncertain already: nothing more is done
    record = _record(dict(TRUTH), refit_u=5.0)
    record.verdicts["u"] = "uncertain"
    assert faint(record) == [] and len(record.alternatives) == 2


def test_only_the_data_refits_alternatives_are_weighed():
    # the surrogate before tuning (and the weak form) hold u at -0.00093: no evidence here
    for reason in ("untuned", "fit", "floor"):
        record = _record(dict(TRUTH))
        record.alternatives[1]["reason"] = reason
        assert faint(record) == [] and record.verdicts["u"] == "determined"

"""Verdicts checked on the surrogate before tuning (symweak.discover.network._untuned): a
term one of the two surrogates determines and the other excludes is uncertain, with its
floor and the other's equations, and the result says why."""

import re
from types import SimpleNamespace

import pytest

from symweak import parse_equation
from symweak.discover import Discovery
from symweak.discover._history import FitRecord, History
from symweak.discover._verdicts import merge_untuned
from symweak.discover.network._untuned import _rejected, recheck
from symweak.ir import System
from symweak.regress import MAX_ALTERNATIVES

TUNED = {"terms": {"u": -0.77, "u^3": 0.13, "u_xx": 0.086}, "held_out": 0.008, "margin": 0.0,
         "reason": "fit"}  # fmt: skip
BEFORE = {"terms": {"tanh(u)": -0.77, "u_xx": 0.16}, "held_out": 0.013, "margin": 0.0,
          "reason": "fit"}  # fmt: skip


def _tuned() -> FitRecord:
    return FitRecord(
        lhs="u_t", residual=0.008, method="mstls+tls",
        verdicts={"u": "determined", "u^3": "determined", "u_xx": "determined"},
        alternatives=[dict(TUNED)], excluded={"tanh(u)": 2.1, "u^2": 0.14},
    )  # fmt: skip


def _before() -> FitRecord:
    return FitRecord(
        lhs="u_t", residual=0.013, method="mstls+tls",
        verdicts={"tanh(u)": "determined", "u_xx": "determined"},
        alternatives=[dict(BEFORE)], excluded={"u": 0.22, "u^3": 0.067, "u^2": 0.2},
    )  # fmt: skip


def test_terms_the_two_surrogates_disagree_on_are_uncertain():
    record = _tuned()
    changed = merge_untuned(record, _before(), "search")
    assert changed == ["u", "u^3", "tanh(u)"]
    assert record.verdicts == {
        "u": "uncertain", "u^3": "uncertain", "u_xx": "determined", "tanh(u)": "uncertain",
    }  # fmt: skip
    # each keeps a floor: the tuned judgement's where it had one, else the other's
    assert record.floors == {"u": 0.22, "u^3": 0.067, "tanh(u)": 2.1}
    assert record.excluded == {"u^2": 0.14}
    assert record.alternatives == [TUNED, {**BEFORE, "reason": "untuned"}]
    assert record.untuned == {
        "phase": "search",
        "verdicts": {"tanh(u)": "determined", "u_xx": "determined"},
        "disputed": ["u", "u^3", "tanh(u)"],
    }


def test_agreeing_surrogates_change_nothing():
    record, other = _tuned(), _tuned()
    other.alternatives = [{**TUNED, "held_out": 0.01}]
    assert merge_untuned(record, other, "prune") == []
    assert record.verdicts == _tuned().verdicts
    assert record.alternatives == [TUNED] and record.floors == {}
    assert record.excluded == _tuned().excluded
    assert record.untuned["disputed"] == []


def test_only_a_term_one_determines_and_the_other_excludes_is_disputed():
    """Before tuning the surrogate may be unable to tell (uncertain) where the tuned one
    determines or excludes: no evidence against either; a term uncertain after tuning stays
    uncertain."""
    record, other = _tuned(), _tuned()
    record.verdicts["u^3"] = "uncertain"
    record.floors = {"u^3": 0.05}
    other.verdicts = {"u": "uncertain", "u^3": "determined", "u_xx": "determined",
                      "u^2": "uncertain"}  # fmt: skip
    assert merge_untuned(record, other, "search") == []
    assert record.verdicts == {"u": "determined", "u^3": "uncertain", "u_xx": "determined"}
    assert record.floors == {"u^3": 0.05} and record.excluded == _tuned().excluded
    assert record.alternatives == [TUNED]
    assert record.untuned["disputed"] == []


def test_the_alternatives_stay_within_the_cap():
    record, other = _tuned(), _before()
    other.alternatives = [
        {**BEFORE, "terms": {"tanh(u)": 1.0, f"u_{'x' * k}": 0.1}} for k in range(1, 12)
    ]
    merge_untuned(record, other, "search")
    assert len(record.alternatives) == MAX_ALTERNATIVES
    assert [a["reason"] for a in record.alternatives] == ["fit"] + ["untuned"] * (
        MAX_ALTERNATIVES - 1
    )


def _merged_result():
    """The tanh case merged, and a result holding it: (record, result)."""
    record = _tuned()
    merge_untuned(record, _before(), "search")
    res = Discovery(
        System([parse_equation("u_t = -0.77*u + 0.13*u^3 + 0.086*u_xx")]),
        history=History(fits=[record]), settings={"coords": ["t", "x"]},
    )  # fmt: skip
    return record, res


def test_the_result_says_why_and_keeps_it_through_save_and_load(tmp_path):
    record, res = _merged_result()
    expected = (
        "u_t: these data cannot tell whether u, u^3 and tanh(u) belong in the equation "
        "(2 equations fit about as well, see res.alternatives); they would not detect u with "
        "|coefficient| below 0.22, u^3 with |coefficient| below 0.067 and tanh(u) with "
        "|coefficient| below 2.1; the surrogate before tuning and the one tuned towards the "
        "candidate terms disagree on u, u^3 and tanh(u)."
    )
    assert res.warnings() == [expected]
    shown = res.summary().splitlines()
    assert (
        "  1.3 %  +0.000  u_t = -0.77*tanh(u) + 0.16*u_xx  (the surrogate before tuning)" in shown
    )
    assert "u_t: determined u_xx; uncertain u, u^3, tanh(u) (the data cannot tell)" in shown
    res.save(tmp_path / "run.json")
    back = Discovery.load(tmp_path / "run.json")
    assert back.history.fits[0].untuned == record.untuned
    assert back.warnings() == [expected]
    assert [a.reason for a in back.alternatives] == ["fit", "untuned"]


def test_the_verdict_chart_marks_the_equation_from_before_tuning():
    pytest.importorskip("matplotlib")
    from symweak.plot import plot_verdicts

    _, res = _merged_result()
    (ax,) = plot_verdicts(res).axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["#1\n0.008", "#2\n0.013\nbefore tuning"]


@pytest.mark.parametrize("phase, untuned", [("search", ("search", {})), ("tune", None)])
def test_nothing_is_judged_again_unless_the_final_surrogate_is_a_tuned_one(phase, untuned):
    """A final surrogate from before the tuning is the one the check would use; a run
    without a tuning phase has nothing to check against."""

    def fail():
        raise AssertionError("the system was assembled again")

    state = SimpleNamespace(untuned=untuned, best=SimpleNamespace(phase=phase))
    records = [_tuned()]
    recheck(state, SimpleNamespace(ties=[]), fail, {}, None, records)
    assert records[0].verdicts == _tuned().verdicts and records[0].untuned == {}


def _gate(before: float, final: float, held: int = 259):
    return SimpleNamespace(
        untuned=("prune", {}, before), best=SimpleNamespace(phase="tune", loss=final),
        check=[None] * held, problem=SimpleNamespace(lhs=["u_t"]),
    )  # fmt: skip


def test_a_surrogate_before_tuning_the_held_out_points_reject_is_not_weighed():
    """Clean FitzHugh–Nagumo built for tuning, seed 1: the surrogate before tuning misses
    the 259 held-out points by 2.132e-4 against the final one's 1.305e-4, a likelihood
    ratio of 164; the tanh damping at σ 0.05, seed 1: 0.003115 against 0.003071, 3.7."""
    assert _rejected(_gate(2.132e-4, 1.305e-4), ("prune", {}, 2.132e-4)) == pytest.approx(
        259 * (2.132e-4 / 1.305e-4 - 1), rel=1e-12
    )
    state = _gate(0.003115, 0.003071)
    assert _rejected(state, state.untuned) is None
    assert _rejected(SimpleNamespace(check=None), ("prune", {}, 1.0)) is None

    def fail():
        raise AssertionError("the system was assembled again")

    records = [_tuned()]
    recheck(_gate(2.132e-4, 1.305e-4), SimpleNamespace(ties=[]), fail, {}, None, records)
    assert records[0].verdicts == _tuned().verdicts and records[0].untuned == {}


@pytest.mark.slow  # one whole network run (about 20 s on 2 cores)
def test_tanh_damping_is_not_returned_as_its_cubic_stand_in_with_certainty():
    """The zoo's tanh damping (tuning half), r 10 %, σ 0.05, seed 1, as point columns: the
    tuning trains the surrogate towards u and u³, on which the weak form selects
    −0.768 u + 0.1323 u³ + 0.08402 u_xx; before tuning the surrogate determines tanh u and
    u_xx, so u, u³ and tanh u are uncertain, and the data themselves fit tanh u in place of
    u + u³ better (likelihood ratio 14.7): −0.7891 tanh u + 0.1208 u_xx is returned."""
    import symweak
    from symweak.bench import generate, get_system
    from symweak.bench._speed import columns

    system = get_system("tanh_damping")
    obs = columns(generate("tanh_damping").sample(0.1, seed=1).add_noise(0.05, seed=1), seed=1)
    res = symweak.discover(obs, ops=system.ops, lhs="u_t", seed=1, progress=False)
    fit = res.history.fits[0]
    assert fit.untuned["verdicts"]["tanh(u)"] == "determined"
    assert res.verdicts == {"u_xx": "determined", "tanh(u)": "determined"}
    coefs = {str(k): v for k, v in res.coefficients.items()}
    assert coefs["tanh(u(t, x))"] == pytest.approx(-0.8, abs=0.03)
    assert coefs["Derivative(u(t, x), (x, 2))"] == pytest.approx(0.1, abs=0.03)
    said = [w for w in res.warnings() if "the data fit tanh(u) in place of u + u^3 better" in w]
    assert len(said) == 1
    # the selected equation's digits follow the build's rounding (−0.768 u, −0.7653 u)
    selected = re.search(r"the weak form selected u_t = (-[0-9.]+)\*u \+", said[0])
    assert selected is not None and float(selected.group(1)) == pytest.approx(-0.77, abs=0.03)

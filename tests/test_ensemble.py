"""discover(..., surrogates=K, combine="vote"): members with child seeds folded into the shown run's
inclusion probabilities and intervals (issue 23)."""

import numpy as np
import pytest

import symweak
from symweak.discover._ensemble import combine, member_seeds
from symweak.discover._history import FitRecord, History
from symweak.discover.network._forking import torch_threads
from symweak.grammar import parse_equation


def test_combine_folds_members_into_probabilities_and_intervals():
    shown = parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx", coords="t,x")
    history = History(
        fits=[
            FitRecord(
                lhs="u_t",
                residual=0.01,
                method="mstls",
                probabilities={"d_x(u^2)": 1.0, "u_xx": 0.9, "u": 0.2},
                intervals={"d_x(u^2)": [-0.52, -0.48], "u_xx": [0.095, 0.105]},
            )
        ]
    )
    members = [
        (11, [parse_equation("u_t = -0.55*d_x(u^2) + 0.1*u_xx", coords="t,x")]),
        (12, [parse_equation("u_t = -0.49*d_x(u^2) + 0.2*u", coords="t,x")]),
    ]
    combine([shown], history, members)
    fit = history.fits[0]
    assert fit.probabilities["d_x(u^2)"] == 1.0
    assert fit.probabilities["u_xx"] == pytest.approx(2 / 3)
    assert fit.probabilities["u"] == 0.2  # not in the shown equation: left as it was
    assert fit.intervals["d_x(u^2)"] == [-0.55, -0.48]
    assert fit.intervals["u_xx"] == [0.095, 0.105]
    assert history.ensemble == [
        {"seed": 11, "equations": ["u_t = -0.55*d_x(u^2) + 0.1*u_xx"]},
        {"seed": 12, "equations": ["u_t = 0.2*u - 0.49*d_x(u^2)"]},
    ]


def test_member_seeds_are_distinct_and_reproducible():
    seeds = member_seeds(3, 4)
    assert seeds == member_seeds(3, 4)
    assert len(set(seeds)) == 3 and 3 not in seeds


@pytest.mark.parametrize(
    "options, method, message",
    [
        ({"combine": "all"}, "network", "combine must be 'mean' or 'vote', got 'all'"),
        ({"surrogates": True}, "network", "surrogates must be an integer >= 1 or 'auto', got True"),
        ({"combine": "vote"}, "grid", "Option `combine` is read by the network method only"),
        ({"ensemble": 2}, "network", "Option `ensemble` was removed: pass surrogates=K, combine"),
    ],
)
def test_bad_ensembles_are_refused(options, method, message):
    obs = symweak.Observations.from_grid(
        np.sin(np.linspace(0, 1, 12))[:, None] * np.ones((12, 16)),
        t=np.linspace(0, 1, 12),
        x=np.linspace(0, 1, 16),
    )
    with pytest.raises(symweak.SymweakError, match=message):
        symweak.discover(obs, ops="+,-,*", lhs="u_t", method=method, **options)


def test_network_ensemble_of_two(tmp_path):
    from symweak.bench import generate

    obs = generate("burgers", cache=False, nt=41, nx=96).sample(0.25, seed=0)
    fast = dict(kernels=200, warmup_epochs=300, search_epochs=80, prune_epochs=80, tune_epochs=30)
    fast.update(surrogates=2, combine="vote")
    res = symweak.discover(obs, ops="+,-,*", lhs="u_t", seed=0, progress=False, **fast)
    assert res.settings["ensemble"] == 2
    (member,) = res.history.ensemble
    assert member["seed"] == member_seeds(0, 2)[0]
    unc = res.uncertainty
    assert set(unc) == {"d_x(u^2)", "u_xx"}
    for info in unc.values():
        lo, hi = info["interval"]
        assert info["probability"] in (0.5, 1.0)
        assert lo <= info["coefficient"] <= hi
    res.save(tmp_path / "run.json")
    assert symweak.Discovery.load(tmp_path / "run.json").history.ensemble == res.history.ensemble


def _vote_of_three(monkeypatch, here: bool):
    """A small vote of three runs on two torch threads, the shown run on one thread while
    the others run (in two child processes, or with ``here`` in this process): (the
    members' equations, the shown run's coefficients, the child processes)."""
    import importlib

    from symweak.bench import generate

    ensemble = importlib.import_module("symweak.discover._ensemble")
    real_init = ensemble.Voters.__init__
    seen = {}

    def init(self, *args, **kw):
        real_init(self, *args, **kw)
        seen["children"] = 0 if self.children is None else len(self.children.children)
        self.threads = 1  # as with two children on two threads

    monkeypatch.setattr(ensemble.Voters, "__init__", init)
    if here:
        forking = importlib.import_module("symweak.discover.network._forking")
        monkeypatch.setattr(forking, "plan", lambda count, device: forking.Plan(0, 1, None))
    obs = generate("burgers", cache=False, nt=31, nx=64).sample(0.3, seed=0)
    fast = dict(kernels=64, warmup_epochs=60, search_epochs=20, prune_epochs=20, tune_epochs=10)
    try:
        with torch_threads(2):
            res = symweak.discover(
                obs, ops="+,-,*", lhs="u_t", seed=1, progress=False, surrogates=3,
                combine="vote", **fast,
            )  # fmt: skip
    finally:
        monkeypatch.undo()
    assert res.settings["ensemble"] == 3
    coefs = {t.short(): c for t, c in res.system[0].coefficients.items()}
    return res.history.ensemble, coefs, seen["children"]


@pytest.mark.slow  # two discoveries of three members each, end to end
def test_vote_members_from_child_processes_are_those_run_here(monkeypatch):
    from symweak.discover.network._forking import can_fork

    if not can_fork():
        pytest.skip("child processes are forked (Linux) only")
    forked, shown_forked, children = _vote_of_three(monkeypatch, here=False)
    here, shown_here, none = _vote_of_three(monkeypatch, here=True)
    assert (children, none) == (2, 0)
    assert [m["seed"] for m in forked] == member_seeds(1, 3)
    assert forked == here  # every member run on one thread: the same equations, digit for digit
    assert shown_forked == shown_here


def test_members_that_disagree_make_terms_uncertain():
    shown = parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx", coords="t,x")
    record = FitRecord(
        lhs="u_t",
        residual=0.01,
        method="mstls",
        verdicts={"d_x(u^2)": "determined", "u_xx": "determined"},
        alternatives=[
            {
                "terms": {"d_x(u^2)": -0.5, "u_xx": 0.1},
                "held_out": 0.02,
                "margin": 0.0,
                "reason": "fit",
            }
        ],
        excluded={"u": 0.3, "u_x": 0.01},
    )
    history = History(fits=[record])
    members = [
        (11, [parse_equation("u_t = -0.55*d_x(u^2) + 0.1*u_xx", coords="t,x")]),
        (12, [parse_equation("u_t = -0.49*d_x(u^2) + 0.2*u", coords="t,x")]),
    ]
    combine([shown], history, members)
    assert record.verdicts == {"d_x(u^2)": "determined", "u_xx": "uncertain", "u": "uncertain"}
    assert record.excluded == {"u_x": 0.01}  # u, held by a member, is no longer excluded
    assert [(a["terms"], a["reason"]) for a in record.alternatives] == [
        ({"d_x(u^2)": -0.5, "u_xx": 0.1}, "fit"),
        ({"u": 0.2, "d_x(u^2)": -0.49}, "surrogate"),
    ]

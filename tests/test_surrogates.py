"""discover(..., surrogates=K): the final fit integrates the mean of K surrogates; the
run's own is trained through phases 1-4, each other one by the warm-up and the tuning phase
on the run's candidate library, from its own child seed."""

import pytest
import torch

import symweak
from symweak._seeds import child_seed
from symweak.discover import Config
from symweak.discover.network._forking import Plan, torch_threads
from symweak.discover.network._state import NetworkState


class _Constant(torch.nn.Module):
    """A stand-in surrogate: the same value everywhere, derivatives ``slope`` × order."""

    def __init__(self, value: float, slope: float = 0.0) -> None:
        super().__init__()
        self.value, self.slope = value, slope

    def grid(self, axes):
        shape = tuple(len(a) for a in axes)
        return torch.full((*shape, 1), self.value, dtype=torch.float64)

    def grid_jets(self, axes, orders):
        shape = tuple(len(a) for a in axes)
        vals = [self.slope * sum(a) for a in orders]
        J = torch.tensor(vals, dtype=torch.float64).reshape(1, 1, len(orders), 1)
        return J.expand(*shape, len(orders), 1)


class _State:
    mean_grid = NetworkState.mean_grid
    mean_jets = NetworkState.mean_jets

    def __init__(self, own, members):
        self.surrogate, self.members = own, members


def test_mean_grid_averages_the_run_and_its_members():
    axes = [torch.linspace(0, 1, 3), torch.linspace(0, 1, 4)]
    state = _State(_Constant(1.0, 2.0), [_Constant(2.0, 4.0), _Constant(6.0, 9.0)])
    U = state.mean_grid(axes)
    assert U.shape == (3, 4, 1)
    assert torch.allclose(U, torch.full((3, 4, 1), 3.0, dtype=torch.float64))
    # members=False: the run's own surrogate (what the evidence check trains)
    assert torch.allclose(state.mean_grid(axes, members=False), torch.ones(3, 4, 1).double())
    J = state.mean_jets(axes, [(0, 1), (0, 2)])
    assert J.shape == (3, 4, 2, 1)
    assert J[0, 0, :, 0].tolist() == pytest.approx([5.0, 10.0])  # (2 + 4 + 9)/3 × order
    assert state.mean_jets(axes, [(0, 1)], members=False)[0, 0, 0, 0].item() == 2.0
    # without members the run's own values, unchanged
    alone = _State(_Constant(1.5), [])
    assert torch.equal(alone.mean_grid(axes), _Constant(1.5).grid(axes))


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True])
def test_surrogates_must_be_a_whole_number_of_at_least_one(value):
    with pytest.raises(
        symweak.SymweakError,
        match=r"config option surrogates must be an integer >= 1 or .auto., got ",
    ):
        Config.preset("network", surrogates=value)


def test_surrogates_is_refused_on_the_grid_method():
    import numpy as np

    obs = symweak.Observations.from_grid(
        np.sin(np.linspace(0, 1, 12))[:, None] * np.ones((12, 16)),
        t=np.linspace(0, 1, 12),
        x=np.linspace(0, 1, 16),
    )
    with pytest.raises(symweak.SymweakError, match="surrogates"):
        symweak.discover(obs, ops="+,-,*", lhs="u_t", method="grid", surrogates=2)


def test_network_run_on_the_mean_of_two_surrogates(tmp_path):
    from symweak.bench import generate

    obs = generate("burgers", cache=False, nt=41, nx=96).sample(0.25, seed=0)
    fast = dict(kernels=200, warmup_epochs=300, search_epochs=80, prune_epochs=80, tune_epochs=30)
    res = symweak.discover(
        obs, ops="+,-,*", lhs="u_t", seed=0, progress=False, surrogates=2, **fast
    )
    assert res.history.surrogates == 2
    assert res.settings["surrogates"] == 2
    coefs = {t.short(): c for t, c in res.system[0].coefficients.items()}
    assert set(coefs) == {"d_x(u^2)", "u_xx"}
    assert coefs["d_x(u^2)"] == pytest.approx(-0.5, abs=0.05)
    assert coefs["u_xx"] == pytest.approx(0.1, rel=0.2)
    res.save(tmp_path / "run.json")
    assert symweak.Discovery.load(tmp_path / "run.json").history.surrogates == 2
    assert child_seed(0, "surrogates") > 0


def test_members_are_warmed_up_and_tuned_on_the_run_s_candidates(monkeypatch):
    import importlib

    from symweak.bench import generate

    network = importlib.import_module("symweak.discover.network")
    calls = {"warmup": [], "search": 0, "prune": 0, "tune": []}
    real = {n: getattr(network, f"_{n}").run for n in ("warmup", "search", "prune", "tune")}

    def warmup(problem, *args, **kw):
        calls["warmup"].append(problem.seed)
        return real["warmup"](problem, *args, **kw)

    def counted(name):
        def run(*args, **kw):
            calls[name] += 1
            return real[name](*args, **kw)

        return run

    def tune(state, cands, progress):
        calls["tune"].append((state.problem.seed, cands))
        return real["tune"](state, cands, progress)

    monkeypatch.setattr(network._warmup, "run", warmup)
    monkeypatch.setattr(network._search, "run", counted("search"))
    monkeypatch.setattr(network._prune, "run", counted("prune"))
    monkeypatch.setattr(network._tune, "run", tune)
    # the members trained here, where these calls are seen (not in child processes)
    monkeypatch.setattr(network._members, "plan", lambda count, device: Plan(0, 1, None))
    obs = generate("burgers", cache=False, nt=31, nx=64).sample(0.3, seed=0)
    fast = dict(kernels=64, warmup_epochs=60, search_epochs=20, prune_epochs=20, tune_epochs=10)
    res = symweak.discover(
        obs, ops="+,-,*", lhs="u_t", seed=3, progress=False, surrogates=3, **fast
    )
    assert res.history.surrogates == 3
    base = child_seed(3, "surrogates")
    assert calls["warmup"] == [3, base + 7919, base + 2 * 7919]
    assert (calls["search"], calls["prune"]) == (1, 1)  # the run's own only
    assert [seed for seed, _ in calls["tune"]] == calls["warmup"]
    # every member tunes on the very candidate library the run extracted
    assert all(cands is calls["tune"][0][1] for _, cands in calls["tune"])


def _members_of(monkeypatch, network, workers, count=3):
    """A small run with surrogates=``count`` on two torch threads, the members in ``workers``
    child processes (0: here) while the run's own phases after its warm-up use one thread:
    (the members' parameters, the returned coefficients, child processes started)."""
    from symweak.bench import generate

    members = network._members
    real_init, real_collect = members.Members.__init__, members.Members.collect
    seen = {}

    def init(self, *args, **kw):
        real_init(self, *args, **kw)
        seen["children"] = len(self.children)
        self.threads = 1  # as with two children on two threads

    def collect(self, *args, **kw):
        out = real_collect(self, *args, **kw)
        seen["members"] = [{k: v.clone() for k, v in m.state_dict().items()} for m in out[0]]
        return out

    monkeypatch.setattr(members.Members, "__init__", init)
    monkeypatch.setattr(members.Members, "collect", collect)
    if workers == 0:  # here, on the children's one thread
        monkeypatch.setattr(members, "plan", lambda count, device: Plan(0, 1, None))
    elif workers == 1:  # one child and the run, one thread each
        monkeypatch.setattr(members, "plan", lambda count, device: Plan(1, 1, 1))
    obs = generate("burgers", cache=False, nt=31, nx=64).sample(0.3, seed=0)
    fast = dict(kernels=64, warmup_epochs=60, search_epochs=20, prune_epochs=20, tune_epochs=10)
    try:
        with torch_threads(2):
            res = symweak.discover(
                obs, ops="+,-,*", lhs="u_t", seed=3, progress=False, surrogates=count, **fast
            )
    finally:
        monkeypatch.undo()
    assert res.history.surrogates == count
    coefs = {t.short(): c for t, c in res.system[0].coefficients.items()}
    return seen["members"], coefs, seen["children"]


@pytest.mark.slow  # two discoveries of three members each, end to end
def test_members_from_child_processes_are_those_trained_here(monkeypatch):
    import importlib

    network = importlib.import_module("symweak.discover.network")
    if not network._forking.can_fork():
        pytest.skip("child processes are forked (Linux) only")
    forked, coefs_forked, children = _members_of(monkeypatch, network, workers=2)
    here, coefs_here, none = _members_of(monkeypatch, network, workers=0)
    assert (children, none) == (2, 0)
    assert len(forked) == len(here) == 2
    for a, b in zip(forked, here):  # bit for bit: every member trains on one thread
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert coefs_forked == coefs_here


@pytest.mark.slow  # two discoveries of three members each, end to end
def test_members_taken_by_whichever_process_is_free_are_those_trained_here(monkeypatch):
    """One child warms up its share (two of three members) while the run searches; the
    third goes to the run or the child, whichever is free first: the same members."""
    import importlib

    network = importlib.import_module("symweak.discover.network")
    if not network._forking.can_fork():
        pytest.skip("child processes are forked (Linux) only")
    shared, coefs_shared, children = _members_of(monkeypatch, network, workers=1, count=4)
    here, coefs_here, _ = _members_of(monkeypatch, network, workers=0, count=4)
    assert children == 1 and len(shared) == len(here) == 3
    for a, b in zip(shared, here):
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert coefs_shared == coefs_here


def test_each_member_is_taken_once():
    import importlib
    import multiprocessing

    forking = importlib.import_module("symweak.discover.network._forking")
    counter = multiprocessing.get_context("fork").Value("i", 1)
    taken = [forking.claim(counter, 4) for _ in range(5)]
    assert taken == [1, 2, 3, None, None] and counter.value == 4


def test_the_plan_shares_the_run_s_cores_among_children_and_the_run(monkeypatch):
    from symweak.discover.network import _forking
    from symweak.discover.network._forking import Plan

    monkeypatch.setattr(_forking, "can_fork", lambda: True)
    monkeypatch.setattr(_forking, "cores", lambda: 16)
    monkeypatch.setattr(_forking, "memory_room", lambda: 100)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(16)
        assert _forking.plan(3, "cpu") == Plan(2, 5, 6)  # 2 children of 5 threads, run 6
        assert _forking.plan(8, "cpu") == Plan(7, 2, 2)
        torch.set_num_threads(2)  # this machine's
        assert _forking.plan(8, "cpu") == Plan(2, 1, 1)
        assert _forking.plan(2, "cpu") == Plan(1, 1, 1)  # one member beside the run
        assert _forking.plan(1, "cpu") == Plan(0, 2, None)
        assert _forking.plan(8, "cuda") == Plan(0, 2, None)  # here, on the run's threads
        torch.set_num_threads(4)
        monkeypatch.setattr(_forking, "cores", lambda: 3)  # more threads than cores
        assert _forking.plan(8, "cpu") == Plan(3, 1, 1)
        monkeypatch.setattr(_forking, "memory_room", lambda: 2)  # room for two more runs
        assert _forking.plan(8, "cpu") == Plan(2, 1, 1)
        monkeypatch.setattr(_forking, "memory_room", lambda: 0)
        assert _forking.plan(8, "cpu") == Plan(0, 4, None)  # here
        monkeypatch.setattr(_forking, "memory_room", lambda: 100)
        torch.set_num_threads(1)
        assert _forking.plan(8, "cpu") == Plan(0, 1, None)
        monkeypatch.setattr(_forking, "can_fork", lambda: False)
        torch.set_num_threads(4)
        assert _forking.plan(8, "cpu") == Plan(0, 4, None)
        assert _forking.member_workers(8, "cpu") == 0
    finally:
        torch.set_num_threads(before)


def test_auto_uses_three_surrogates_from_the_noise_threshold():
    from types import SimpleNamespace

    from symweak.discover.network import AUTO_SURROGATES, how_many_surrogates

    def history(noise):
        return SimpleNamespace(phases={"warmup": SimpleNamespace(noise=noise)})

    auto = Config.preset("network", surrogates="auto").surrogate
    assert AUTO_SURROGATES == 3
    assert how_many_surrogates(auto, history({"u": 0.62, "v": 0.1}), None) == 3
    assert how_many_surrogates(auto, history({"u": 0.5}), None) == 3
    assert how_many_surrogates(auto, history({"u": 0.49, "v": float("nan")}), None) == 1
    fixed = Config.preset("network", surrogates=2).surrogate
    assert how_many_surrogates(fixed, history({"u": 0.0}), None) == 2


def test_auto_estimates_the_noise_when_the_warm_up_made_no_estimate():
    from types import SimpleNamespace

    import numpy as np

    from symweak.discover.network import how_many_surrogates

    rng = np.random.default_rng(0)
    t, x = np.meshgrid(np.linspace(0, 1, 40), np.linspace(0, 2 * np.pi, 64), indexing="ij")
    clean = np.sin(x - t)
    noisy = clean + 0.8 * clean.std() * rng.standard_normal(clean.shape)
    auto = Config.preset("network", surrogates="auto").surrogate
    empty = SimpleNamespace(phases={})
    for values, count in ((clean, 1), (noisy, 3)):
        obs = symweak.Observations(
            coords={"t": t.ravel(), "x": x.ravel()}, fields={"u": values.ravel()}
        )
        problem = SimpleNamespace(obs=obs, seed=0)
        assert how_many_surrogates(auto, empty, problem) == count


@pytest.mark.parametrize(
    "options, noise, count",
    [
        ({}, {"u": 0.9}, 1),
        ({"surrogates": 4}, {}, 4),
        ({"surrogates": "auto"}, {"u": 0.62, "v": 0.1}, 3),
        ({"surrogates": "auto"}, {"u": 0.3, "v": float("nan")}, 1),
        ({"surrogates": "auto"}, {}, 1),  # no estimate yet: settled after the warm-up
        ({"surrogates": 3, "combine": "vote"}, {}, 1),  # each vote member announces its own
    ],
)
def test_expected_surrogates_before_the_warm_up(options, noise, count):
    from symweak.discover.network._warmup import expected_surrogates

    cfg = Config.preset("network", **options).surrogate
    assert expected_surrogates(cfg, noise) == count


@pytest.mark.parametrize(
    "count, line",
    [
        (1, "network method: …: about 20 s on this machine"),
        # each more surrogate: a warm-up (800 epochs) and tuning (200 × 3): 7 s at 5 ms
        (3, "network method: …: about 34 s on this machine (3 surrogates)"),
    ],
)
def test_the_start_of_run_estimate_counts_the_more_surrogates(monkeypatch, count, line):
    from types import SimpleNamespace

    from symweak.discover.network import _warmup

    said = []
    clock = iter([0.0, _warmup.ESTIMATE_AFTER * 0.005])  # 5 ms a warm-up epoch
    monkeypatch.setattr(_warmup, "announce", lambda text, progress: said.append(text))
    monkeypatch.setattr(_warmup, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    config = Config.preset("network")  # 800 warm-up, 300 + 300 + 200 later epochs
    callback = _warmup._estimator("network method: …", config, 1, False, count)
    for epoch in range(_warmup.ESTIMATE_AFTER + 1):
        callback(epoch, None)
    assert said == [line]


def test_the_time_estimate_counts_members_and_the_runs_of_a_vote(monkeypatch):
    from symweak.discover.network import _forking, _warmup

    said = []
    monkeypatch.setattr(_warmup, "announce", lambda text, progress: said.append(text))

    def estimate(options, workers, along=0):
        ticks = iter([0.0, 0.01 * _warmup.ESTIMATE_AFTER])  # 10 ms a warm-up epoch
        monkeypatch.setattr(_warmup.time, "perf_counter", lambda: next(ticks))
        config = Config.preset("network", **options)
        count = config.surrogate.surrogates
        with _forking.beside(along, None):
            callback = _warmup._estimator("run", config, 1, True, count, workers)
        callback(0, None)
        callback(_warmup.ESTIMATE_AFTER, None)
        return said.pop()

    # own phases 800 + 3 × 800 + 800 = 4000 epochs' worth, a member 800 + 3 × 200 = 1400
    assert estimate({"surrogates": 1}, 0) == "run: about 40 s on this machine"
    assert estimate({"surrogates": 3}, 0) == "run: about 68 s on this machine (3 surrogates)"
    assert estimate({"surrogates": 3}, 2) == "run: about 54 s on this machine (3 surrogates)"
    vote = {"surrogates": 8, "combine": "vote"}
    # seven more whole runs in two children beside this one: 7 × 4000 / 2 epochs
    assert estimate(vote, 2, along=2) == "run: about 2 min on this machine (8 runs)"
    # after this one ("auto", once the count is known): 4000 + 7 × 4000 / 2
    assert estimate(vote, 2) == "run: about 3 min on this machine (8 runs)"


def test_memory_room_reads_this_machine(monkeypatch):
    import resource

    from symweak.discover.network import _forking

    room = _forking.memory_room()
    assert isinstance(room, int) and room >= 1  # this process is far smaller than the machine

    class _Usage:
        ru_maxrss = 10**12  # a peak of about a petabyte (kB): no room for another

    monkeypatch.setattr(resource, "getrusage", lambda who: _Usage())
    assert _forking.memory_room() == 0


def test_ctrl_c_during_the_read_back_returns_a_result(monkeypatch):
    import importlib
    import os
    import signal

    from symweak.bench import generate

    network = importlib.import_module("symweak.discover.network")
    real = network._extract.run

    def extract(state):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while SymPy reads the network back
        return real(state)

    monkeypatch.setattr(network._extract, "run", extract)
    obs = generate("burgers", cache=False, nt=31, nx=64).sample(0.3, seed=0)
    fast = dict(kernels=64, warmup_epochs=60, search_epochs=20, prune_epochs=20, tune_epochs=10)
    res = symweak.discover(obs, ops="+,-,*", lhs="u_t", seed=0, progress=False, **fast)
    assert res.history.interrupted is True
    assert res.history.phases["tune"].epochs == 0  # the tuning ran no epochs
    assert len(res.system[0].coefficients) >= 1  # and the final fit still returned

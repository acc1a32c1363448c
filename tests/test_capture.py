"""Training steps that a CUDA graph can hold (symweak._trainer.Step), checked on the CPU.

A step replayed as a CUDA graph must read nothing from the device on the host (``.item()``,
``float(t)``, ``int(t)``, a boolean mask) and build no tensor from Python values (a copy to
the device each step); the optimiser's own reads (non-capturable Adam on the CPU) are left
out. Each test watches every operation a step's body dispatches."""

from __future__ import annotations

import importlib
import traceback

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import symweak
from symweak import _trainer
from symweak._trainer import BestCheckpoint, Step, cosine_adam, cuda_graphs
from symweak.surrogate import Surrogate

#: operations a captured step may not dispatch: host reads, tensors from Python values,
#: shapes that depend on values
_HOST = {"_local_scalar_dense", "lift_fresh", "nonzero", "masked_select", "_unique2"}
#: ... and operations whose CUDA kernels read a status on the host (a dispatch on the CPU
#: does not show it): LAPACK-style least squares checks its ``info`` there
_HOST_ON_CUDA = {"linalg_lstsq"}


class _Watch(TorchDispatchMode):
    """Records (operation, where in symweak) for each operation a capture cannot hold."""

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[tuple[str, str]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__.split(".")[0]
        if name in _HOST or name in _HOST_ON_CUDA:
            stack = traceback.extract_stack()[:-1]
            if not any("torch/optim" in f.filename for f in stack):
                where = [
                    f"{f.filename.rsplit('/symweak/', 1)[-1]}:{f.lineno}"
                    for f in stack
                    if "/symweak/" in f.filename
                ]
                self.hits.append((name, " <- ".join(where[::-1][:3])))
        return func(*args, **(kwargs or {}))


@pytest.fixture
def watched(monkeypatch):
    """Every Step's body runs under :class:`_Watch` from its second call on (the first may
    make what later steps reuse); returns the hits and the number of bodies watched."""
    watch, seen = _Watch(), {"bodies": 0}
    made = Step.__init__

    def init(self, body, optimizer, device):
        calls = {"n": 0}

        def watched_body():
            calls["n"] += 1
            if calls["n"] == 1:
                return body()
            seen["bodies"] += 1
            with watch:
                return body()

        made(self, watched_body, optimizer, device)

    monkeypatch.setattr(Step, "__init__", init)
    return watch.hits, seen


def _lattice_columns(n_t=21, n_x=48, keep=0.35, seed=0):
    t = np.linspace(0.0, 1.0, n_t)
    x = np.linspace(-1.0, 1.0, n_x, endpoint=False)
    T, X = np.meshgrid(t, x, indexing="ij")
    u = np.exp(-0.5 * T) * np.sin(np.pi * X) + 0.3 * np.cos(2 * np.pi * X - T)
    rng = np.random.default_rng(seed)
    pick = rng.random(T.size) < keep
    return symweak.Observations(
        coords={"t": T.ravel()[pick], "x": X.ravel()[pick]}, fields={"u": u.ravel()[pick]}
    )


def test_the_surrogate_warmup_step_reads_nothing_from_the_host(watched):
    hits, seen = watched
    obs = _lattice_columns()
    model = Surrogate.for_observations(obs, kernels=24, seed=0)
    model.fit(obs, epochs=4, seed=0)
    assert seen["bodies"] == 3
    assert hits == []


def test_scattered_points_compared_with_every_gaussian_read_nothing(watched, monkeypatch):
    """Where steps are captured, scattered points skip the boxes' sparse evaluation (shapes
    that follow the Gaussians' reach, read on the host)."""
    hits, seen = watched
    rng = np.random.default_rng(1)
    t, x = rng.uniform(0, 1, 300), rng.uniform(-1, 1, 300)
    obs = symweak.Observations(coords={"t": t, "x": x}, fields={"u": np.sin(np.pi * x - t)})
    model = Surrogate.for_observations(obs, kernels=24, seed=0)
    model.fit(obs, epochs=3, seed=0)
    assert {name for name, _ in hits} >= {"_local_scalar_dense", "nonzero"}
    hits.clear()
    monkeypatch.setattr("symweak.surrogate._data._dense_fits", lambda model, n: True)
    model.fit(obs, epochs=3, seed=0)
    assert seen["bodies"] == 4
    assert hits == []


def test_a_whole_network_run_steps_read_nothing_from_the_host(watched, monkeypatch):
    """Search, prune and tune on point columns of a lattice (the data term on the grid),
    the tuning step's solve as where steps are captured."""
    hits, seen = watched
    tune = importlib.import_module("symweak.discover.network._tune")
    monkeypatch.setattr(tune, "_host_free", lambda device: True)
    obs = _lattice_columns()
    short = {"warmup_epochs": 6, "search_epochs": 4, "prune_epochs": 4, "tune_epochs": 4}
    symweak.discover(obs, ops="id,^2", lhs="u_t", seed=0, progress=False, **short)
    # the warm-up, search, prune and tune: all but each loop's first step watched
    assert seen["bodies"] >= 12
    assert hits == []


def test_the_tuning_solve_where_steps_are_captured_reads_nothing_and_agrees():
    """QR and a triangular solve in place of lstsq (whose CUDA kernel reads its status on
    the host): the same coefficients to rounding, on columns of scales 1e-3 … 1e3."""
    tune = importlib.import_module("symweak.discover.network._tune")
    gen = torch.Generator().manual_seed(0)
    G = torch.randn(200, 6, dtype=torch.float64, generator=gen)
    G = G * torch.logspace(-3, 3, 6, dtype=torch.float64)
    b = torch.randn(200, dtype=torch.float64, generator=gen)
    watch = _Watch()
    with watch:
        free = tune._lstsq(G, b, host_free=True)
    assert watch.hits == []
    with watch:
        eager = tune._lstsq(G, b)
    assert [name for name, _ in watch.hits] == ["linalg_lstsq"]
    reference = np.linalg.lstsq(G.numpy(), b.numpy(), rcond=None)[0]
    np.testing.assert_allclose(free.numpy(), reference, rtol=1e-9)
    np.testing.assert_allclose(eager.numpy(), reference, rtol=1e-9)


def test_eager_steps_zero_the_gradients_and_run_the_body_each_time():
    w = torch.nn.Parameter(torch.tensor([2.0]))
    opt = torch.optim.SGD([w], lr=0.25)

    def body():
        loss = (w**2).sum()
        loss.backward()
        opt.step()
        return loss.detach()

    step = Step(body, opt, "cpu")
    assert not step.graphed
    values = [float(step()) for _ in range(3)]
    # w ← w − 0.25·2w = w/2 each step: gradients did not accumulate
    assert values == [4.0, 1.0, 0.25]
    assert float(w.detach()) == 0.25


def test_cuda_graphs_are_on_for_cuda_devices_unless_the_environment_says_no(monkeypatch):
    monkeypatch.delenv("SYMWEAK_CUDA_GRAPHS", raising=False)
    assert cuda_graphs("cuda") is True
    assert cuda_graphs(torch.device("cuda:0")) is True
    assert cuda_graphs("cpu") is False
    for off in ("0", "off", "false"):
        monkeypatch.setenv("SYMWEAK_CUDA_GRAPHS", off)
        assert cuda_graphs("cuda") is False


def test_a_checkpoint_keeps_the_parameters_taken_before_the_step():
    model = torch.nn.Linear(2, 1)
    best = BestCheckpoint(model)
    taken = best.buffers()
    with torch.no_grad():
        model.weight.fill_(1.0)
    best.take(taken)  # the parameters whose loss the step computed
    with torch.no_grad():
        model.weight.fill_(5.0)  # the optimiser's step
    assert best.offer(0.5, "search", 7, taken=taken)
    assert (best.phase, best.epoch, best.loss) == ("search", 7, 0.5)
    best.restore()
    assert model.weight.tolist() == [[1.0, 1.0]]
    assert not best.offer(0.6, "search", 8, taken=taken)


def test_the_cosine_schedule_of_an_eager_step_is_the_optimisers_own():
    model = Surrogate.for_observations(_lattice_columns(), kernels=8, seed=0)
    opt, advance = cosine_adam(model, 0.01, 10, graphed=False)
    rates = []
    for _ in range(10):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()  # no gradients: nothing moves
        advance()
    assert rates[0] == pytest.approx(0.01, rel=1e-12)
    # the cosine from 0.01 down to 5 % of it over 10 epochs
    assert rates[5] == pytest.approx(0.0005 + 0.0095 * 0.5, rel=1e-9)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.0005, rel=1e-9)


def test_the_trainer_module_names_the_step():
    assert "Step" in _trainer.__all__ and "cuda_graphs" in _trainer.__all__

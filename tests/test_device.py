"""The device path: every test runs on the CPU with ``device="cpu"`` named explicitly, and
again on CUDA where torch sees a GPU (the `cuda` cases are skipped otherwise). The CUDA
results must equal the CPU ones to float32 precision: same seed, same numbers, whatever the
device."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import symweak
from symweak.bench import generate
from symweak.surrogate import DataTerm, Surrogate
from symweak.weak import TestFunctionSet, WeakAssembler

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device"),
    ),
]


def _scattered(n=400, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 1, n)
    x = rng.uniform(-1, 1, n)
    u = np.sin(np.pi * x - t) * np.exp(-t)
    return symweak.Observations(coords={"t": t, "x": x}, fields={"u": u})


@pytest.mark.parametrize("device", DEVICES)
def test_surrogate_features_and_gradients_match_the_cpu(device):
    obs = _scattered()
    ref = Surrogate.for_observations(obs, kernels=80, seed=3)
    model = Surrogate.for_observations(obs, kernels=80, seed=3).to(device)
    assert model.device.type == device
    pts = torch.as_tensor(np.stack([obs.coords["t"], obs.coords["x"]], 1), dtype=torch.float32)
    out_ref = ref(pts)
    out = model(pts.to(device))
    np.testing.assert_allclose(out.detach().cpu().numpy(), out_ref.detach().numpy(), atol=2e-5)
    (out_ref**2).mean().backward()
    (out**2).mean().backward()
    for (name, p_ref), (_, p) in zip(ref.named_parameters(), model.named_parameters()):
        np.testing.assert_allclose(
            p.grad.cpu().numpy(), p_ref.grad.numpy(), rtol=1e-3, atol=1e-5, err_msg=name
        )


@pytest.mark.parametrize("device", DEVICES)
def test_surrogate_fit_on_the_device_is_seeded_and_learns(device):
    obs = _scattered()
    losses = []
    for _ in range(2):
        model = Surrogate.for_observations(obs, kernels=60, seed=1).to(device)
        losses.append(model.fit(obs, epochs=60, seed=1))
    assert losses[0] == losses[1]  # same seed, same device: the same numbers
    assert losses[0][-1] < 0.5 * losses[0][0]
    data = DataTerm(model, obs)
    assert data.target.device.type == device


@pytest.mark.parametrize("device", DEVICES)
def test_weak_assembly_on_the_device_equals_the_cpu(device):
    t = np.linspace(0, 1, 21)
    x = np.linspace(-1, 1, 33)
    tests = TestFunctionSet.random({"t": (0, 1), "x": (-1, 1)}, 12, seed=0)
    F = torch.randn(3, 21, 33, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    alphas = [(0, 0), (0, 1), (0, 2)]
    ref = WeakAssembler({"t": t, "x": x}, tests, {"t": 1, "x": 2}).integrate(F, alphas)
    asm = WeakAssembler({"t": t, "x": x}, tests, {"t": 1, "x": 2}, device=device)
    out = asm.integrate(F.to(device), alphas)
    assert out.device.type == device
    np.testing.assert_allclose(out.cpu().numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_discover_runs_on_the_named_device(device):
    obs = generate("burgers").sample(0.05, seed=0)
    res = symweak.discover(
        obs,
        ops="id,^2",
        lhs="u_t",
        seed=0,
        progress=False,
        device=device,
        kernels=64,
        warmup_epochs=40,
        search_epochs=20,
        prune_epochs=20,
        tune_epochs=10,
    )
    assert res.surrogate.device.type == device
    assert len(res.coefficients) >= 1
    pred = res.predict(t=[1.0], x=[0.5])["u"]
    assert np.isfinite(pred).all()

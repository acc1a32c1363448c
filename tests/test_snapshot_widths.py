"""Gaussians no narrower than 3/4 of the gap between samples around them (few snapshots)."""

import numpy as np
import pytest
import torch

from symweak import Observations
from symweak.export._persist import _surrogate_from_state, _surrogate_state
from symweak.surrogate import GaussianEmbedding, Surrogate


def snapshots(times=5, noise=0.0, seed=0):
    """Decay with diffusion in SI units, u_t = 1e-8 u_xx - 0.001 u, seen at ``times``
    instants over 600 s at 256 places of a 5 cm periodic domain (exact Fourier solution),
    handed over as shuffled columns."""
    x = np.arange(256) * 0.05 / 256
    k = 2 * np.pi * np.fft.fftfreq(256, d=0.05 / 256)
    u0 = np.exp(-(((x - 0.02) / 0.004) ** 2)) + 0.6 * np.exp(-(((x - 0.034) / 0.003) ** 2))
    t = np.linspace(0.0, 600.0, times)
    rate = -1e-8 * k**2 - 1e-3
    u = np.real(np.fft.ifft(np.fft.fft(u0)[None] * np.exp(rate[None] * t[:, None]), axis=1))
    rng = np.random.default_rng(seed)
    u = u + noise * u.std() * rng.standard_normal(u.shape)
    T, X = np.meshgrid(t, x, indexing="ij")
    order = rng.permutation(u.size)
    return Observations({"t": T.ravel()[order], "x": X.ravel()[order]}, {"u": u.ravel()[order]})


def widths(model_or_embedding):
    emb = getattr(model_or_embedding, "embedding", model_or_embedding)
    return torch.exp(-emb.log_inv_scale.detach().double())


def test_each_gaussian_starts_at_least_three_quarters_of_the_gap_around_it():
    emb = GaussianEmbedding(2, features=1, kernels=64, generator=torch.Generator().manual_seed(3))
    sigma = 1.5 * 2.0 / 8.0  # 1.5 × the spacing of 64 centres in [-1, 1]²
    with torch.no_grad():
        emb.mu[0, :4, 0] = torch.tensor([-0.9, -0.5, 0.5, 0.999])
    before = widths(emb).clone()
    mu = emb.mu.detach().clone()
    emb.start_between([np.array([-1.0, -0.8, 0.0, 1.0]), None], 0.75)
    after = widths(emb)
    # gaps 0.2 (0.15 < σ: unchanged), 0.8 (0.6), 1 (0.75), 1 (0.75)
    assert after[0, :4, 0].tolist() == pytest.approx([sigma, 0.6, 0.75, 0.75], rel=1e-6)
    assert torch.all(after[..., 0] >= before[..., 0] - 1e-12)  # never narrower
    assert torch.equal(after[..., 1], before[..., 1])  # None: the axis is left
    assert torch.equal(emb.mu, mu)
    assert torch.allclose(before, torch.full((1, 64, 2), sigma, dtype=torch.float64))
    full = GaussianEmbedding(2, features=1, kernels=8, full=True)
    with pytest.raises(ValueError, match="start_between is for diagonal Gaussians"):
        full.start_between([None, None], 0.75)


def test_snapshots_widen_along_t_and_point_columns_change_nothing():
    obs = snapshots(5)
    model = Surrogate.for_observations(obs, kernels=256, seed=0)
    plain = Surrogate.for_observations(obs, kernels=256, seed=0, between_samples=False)
    # five snapshots 0.5 apart in [-1, 1]: 0.375 along t; x (256 places) keeps 1.5 × 2/16
    assert float(widths(model)[..., 0].min()) == pytest.approx(0.375, rel=1e-6)
    assert float(widths(model)[..., 0].max()) == pytest.approx(0.375, rel=1e-6)
    assert torch.equal(widths(model)[..., 1], widths(plain)[..., 1])
    assert float(widths(plain).max()) == pytest.approx(0.1875, rel=1e-6)
    back = _surrogate_from_state(_surrogate_state(model), "run.json")
    points = torch.tensor([[100.0, 0.02], [333.0, 0.04]])
    assert torch.equal(back(points), model.eval()(points))
    grid = Observations.from_grid(
        np.ones((101, 64)), t=np.linspace(0.0, 10.0, 101), x=np.linspace(0.0, 1.0, 64)
    )
    columns = grid.sample(0.1, seed=0)  # 101 times: more than a few, left as they are
    a = Surrogate.for_observations(columns, kernels=250, seed=1)
    b = Surrogate.for_observations(columns, kernels=250, seed=1, between_samples=False)
    assert torch.equal(a.embedding.log_inv_scale, b.embedding.log_inv_scale)


def test_eleven_snapshots_are_not_few():
    obs = snapshots(11)
    a = Surrogate.for_observations(obs, kernels=256, seed=0)
    b = Surrogate.for_observations(obs, kernels=256, seed=0, between_samples=False)
    assert torch.equal(a.embedding.log_inv_scale, b.embedding.log_inv_scale)
    ten = Surrogate.for_observations(snapshots(10), kernels=256, seed=0)
    # ten snapshots 2/9 apart: 3/4 of that (0.167) is still below 1.5 × 2/16 = 0.1875
    assert float(widths(ten).max()) == pytest.approx(0.1875, rel=1e-6)
    six = Surrogate.for_observations(snapshots(6), kernels=256, seed=0)
    assert float(widths(six)[..., 0].min()) == pytest.approx(0.75 * 0.4, rel=1e-6)


def test_the_floor_keeps_the_field_between_five_snapshots():
    # 250 Gaussians (clean data) start 0.19 of [-1, 1] wide; five snapshots are 0.5 apart,
    # and the floor starts them 0.375 wide along t.
    # Measured: 9.6 % off the exact field halfway between snapshots with the floor (0.375),
    # 47 % without it (seed 0; 4.4 % and 43 % at seed 1)
    obs = snapshots(5)
    x = np.arange(256) * 0.05 / 256
    k = 2 * np.pi * np.fft.fftfreq(256, d=0.05 / 256)
    u0 = np.exp(-(((x - 0.02) / 0.004) ** 2)) + 0.6 * np.exp(-(((x - 0.034) / 0.003) ** 2))
    mid = np.array([75.0, 225.0, 375.0, 525.0])
    rate = -1e-8 * k**2 - 1e-3
    truth = np.real(np.fft.ifft(np.fft.fft(u0)[None] * np.exp(rate[None] * mid[:, None]), axis=1))
    errors = {}
    for name, options in [("floor", {}), ("none", {"between_samples": False})]:
        model = Surrogate.for_observations(obs, kernels=250, seed=0, **options)
        model.fit(obs, epochs=800, seed=0, patience=200)
        between = model.predict_grid({"t": mid, "x": x})["u"]
        errors[name] = float(np.sqrt(np.mean((between - truth) ** 2)) / truth.std())
    assert errors["floor"] < 0.15 and errors["none"] > 0.3, errors


def test_unix_seconds_are_fine_in_float64_and_for_the_full_grid_path():
    t = 1.7e9 + np.linspace(0.0, 600.0, 41)
    obs = Observations.from_grid(np.ones((41, 8)) + t[:, None] * 0, t=t, x=np.arange(8.0))
    model = Surrogate.for_observations(obs, kernels=8, dtype=torch.float64)
    assert model.lo.dtype == torch.float64
    assert len(obs) == 328  # the observations themselves are float64 and kept as given
    assert float(obs.coords["t"].max()) == 1.7e9 + 600.0

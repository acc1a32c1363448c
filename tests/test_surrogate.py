import numpy as np
import pytest
import torch

from symweak import Observations, SymweakError
from symweak.surrogate import GaussianEmbedding, Surrogate, choose_device, plain_mlp_like


def small_obs(nt=21, nx=32, ratio=0.5, noise=0.0):
    t = np.linspace(0.0, 1.0, nt)
    x = np.linspace(-1.0, 1.0, nx)
    T, X = np.meshgrid(t, x, indexing="ij")
    u = np.exp(-((X - 0.3 * T) ** 2) / 0.1)
    obs = Observations.from_grid(u, t=t, x=x)
    return obs, obs.sample(ratio, seed=0).add_noise(noise, seed=0)


def test_shapes_dtypes_and_parameter_count():
    _, sample = small_obs()
    m = Surrogate.for_observations(sample, kernels=50, features=4, seed=0)
    x = torch.zeros(7, 2)
    assert m(x).shape == (7, 1) and m(x).dtype == torch.float32
    axes = [torch.linspace(0, 1, 5), torch.linspace(-1, 1, 6)]
    assert m.grid(axes).shape == (5, 6, 1)
    emb = m.embedding
    assert emb.mu.shape == (4, 50, 2) and emb.weight.shape == (4, 50)
    expected = 4 * 50 * (2 + 2 + 1) + (4 * 32 + 32) + (32 * 32 + 32) + (32 + 1)
    assert m.n_parameters() == expected
    m64 = Surrogate.for_observations(sample, kernels=10, dtype=torch.float64)
    assert m64(torch.zeros(2, 2, dtype=torch.float64)).dtype == torch.float64


def test_grid_fast_path_equals_pointwise():
    torch.manual_seed(0)
    for dim, shape in [(1, (17,)), (2, (9, 13)), (3, (5, 6, 7))]:
        emb = GaussianEmbedding(
            dim, features=3, kernels=40, generator=torch.Generator().manual_seed(1)
        )
        axes = [torch.linspace(-1, 1, n) for n in shape]
        grid = emb.grid(axes)
        mesh = torch.meshgrid(*axes, indexing="ij")
        pts = torch.stack([m.reshape(-1) for m in mesh], dim=1)
        torch.testing.assert_close(grid.reshape(-1, 3), emb(pts), rtol=1e-5, atol=1e-6)


def test_full_covariance_option():
    emb = GaussianEmbedding(
        2, features=2, kernels=30, full=True, generator=torch.Generator().manual_seed(0)
    )
    diag = GaussianEmbedding(2, features=2, kernels=30, generator=torch.Generator().manual_seed(0))
    pts = torch.rand(10, 2) * 2 - 1
    # initialised as the same axis-aligned Gaussians
    torch.testing.assert_close(emb(pts), diag(pts), rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        emb.lower[..., 1, 0] = 0.7  # rotate
    assert not torch.allclose(emb(pts), diag(pts))
    axes = [torch.linspace(-1, 1, 4), torch.linspace(-1, 1, 5)]
    assert emb.grid(axes).shape == (4, 5, 2)


def test_gradients_reach_every_parameter():
    _, sample = small_obs()
    m = Surrogate.for_observations(sample, kernels=30, seed=0)
    x = torch.rand(20, 2)
    m(x).pow(2).sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name
    assert {"embedding.mu", "embedding.log_inv_scale", "embedding.weight"} <= {
        n for n, _ in m.named_parameters()
    }


def test_same_seed_same_model_and_fit():
    _, sample = small_obs()
    a = Surrogate.for_observations(sample, kernels=40, seed=3)
    b = Surrogate.for_observations(sample, kernels=40, seed=3)
    c = Surrogate.for_observations(sample, kernels=40, seed=4)
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert torch.equal(p, q)
    assert not torch.equal(a.embedding.mu, c.embedding.mu)
    ha = a.fit(sample, epochs=30)
    hb = b.fit(sample, epochs=30)
    assert ha == hb


def test_small_fit_reaches_bound():
    obs, sample = small_obs(ratio=0.5)
    m = Surrogate.for_observations(sample, kernels=200, seed=0)
    m.fit(sample, epochs=400, lr=1e-2)
    pred = m.predict_grid(obs.grid.axes)["u"]
    mse = float(np.mean((pred - obs.to_grid("u")) ** 2))
    assert mse < 2e-4, mse
    # scattered evaluation agrees with the grid evaluation
    at_points = m.predict(obs.coords)["u"].reshape(obs.grid.shape)
    np.testing.assert_allclose(at_points, pred, atol=1e-5)


def test_plain_mlp_variant_matches_parameter_count():
    _, sample = small_obs()
    m = Surrogate.for_observations(sample, kernels=1000, seed=0)
    opts = plain_mlp_like(m)
    plain = Surrogate.for_observations(sample, seed=0, **opts)
    assert plain.embedding is None
    assert abs(plain.n_parameters() - m.n_parameters()) / m.n_parameters() < 0.05
    assert plain(torch.zeros(3, 2)).shape == (3, 1)


def test_devices_and_errors():
    assert choose_device("cpu") == torch.device("cpu")
    assert choose_device(None).type in ("cpu", "cuda")
    _, sample = small_obs()
    m = Surrogate.for_observations(sample, kernels=10).to("cpu")
    assert m.device == torch.device("cpu")
    with pytest.raises(SymweakError, match="predict needs coordinates"):
        m.predict({"t": np.zeros(2)})
    with pytest.raises(SymweakError, match="activation must be one of"):
        Surrogate.for_observations(sample, activation="relu6")
    if not torch.cuda.is_available():
        with pytest.raises(SymweakError, match="no CUDA device"):
            choose_device("cuda")


def test_data_term_modes_agree_and_batches_are_seeded():
    from symweak.surrogate import DataTerm

    _, sample = small_obs(ratio=0.2)
    m = Surrogate.for_observations(sample, kernels=60, seed=0)
    preds = {}
    for mode in ("grid", "gather", "points"):
        with torch.no_grad():
            preds[mode] = DataTerm(m, sample, mode).predictions()
    torch.testing.assert_close(preds["gather"], preds["grid"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(preds["points"], preds["grid"], rtol=1e-5, atol=1e-6)
    # a gathered loss has gradients for the embedding like the grid path
    DataTerm(m, sample, "gather").loss().backward()
    assert m.embedding.mu.grad is not None and torch.all(torch.isfinite(m.embedding.mu.grad))
    a = DataTerm(m, sample, "gather", max_points=20, seed=3)
    b = DataTerm(m, sample, "gather", max_points=20, seed=3)
    with torch.no_grad():
        assert a.loss().item() == b.loss().item()
        assert a.loss().item() != DataTerm(m, sample, "gather").loss().item()
    with pytest.raises(SymweakError, match="DataTerm mode must be grid, gather or points"):
        DataTerm(m, sample, "dense")


def test_chunked_grid_equals_whole_grid_with_gradients():
    torch.manual_seed(0)
    m = Surrogate({"t": (0, 1), "x": (-1, 1), "y": (0, 2)}, ["w"], kernels=30, seed=0)
    axes = [torch.linspace(0, 1, 7), torch.linspace(-1, 1, 9), torch.linspace(0, 2, 5)]
    whole = m.grid(axes)
    (whole**2).sum().backward()
    g_whole = m.embedding.mu.grad.clone()
    m.zero_grad()
    slabs = m.grid(axes, chunk_points=100)  # 7 slabs of 45 points, checkpointed
    (slabs**2).sum().backward()
    torch.testing.assert_close(slabs, whole, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(m.embedding.mu.grad, g_whole, rtol=1e-4, atol=1e-6)


def test_predict_points_on_a_grid_equals_point_wise_prediction():
    full, sample = small_obs(ratio=0.5)
    m = Surrogate.for_observations(sample, kernels=40, seed=1)
    via_grid = m.predict_points(sample)  # half the grid: the grid path
    point_wise = m.predict(sample.coords)
    assert np.allclose(via_grid["u"], point_wise["u"], rtol=0, atol=1e-5)
    assert via_grid["u"].shape == (len(sample),)
    sparse = full.sample(0.05, seed=2)  # 5 %: point-wise
    assert np.allclose(m.predict_points(sparse)["u"], m.predict(sparse.coords)["u"], atol=1e-6)


def test_data_term_gathers_only_below_one_percent_of_a_space_time_grid():
    from symweak.surrogate import DataTerm

    t, x = np.linspace(0, 1, 201), np.linspace(-1, 1, 512)
    full = Observations.from_grid(np.sin(3 * x)[None, :] * np.cos(t)[:, None], t=t, x=x)
    m = Surrogate.for_observations(full, kernels=10, seed=0)
    # KdV's grid from 2.5 % less the held-out tenth: 2 316 points, 1/44 of the grid, are
    # cheaper via the whole grid (66 s against 89 s per 800 steps measured); from 0.5 %
    # gathering wins
    assert len(full.sample(0.0225, seed=0)) == 2316
    assert DataTerm(m, full.sample(0.0225, seed=0)).mode == "grid"
    assert DataTerm(m, full.sample(0.005, seed=0)).mode == "gather"
    assert DataTerm(m, full.sample(0.005, seed=0), max_points=100).mode == "gather"


def test_patience_stops_after_the_held_out_minimum_and_keeps_the_same_parameters():
    _, sample = small_obs(ratio=0.6, noise=0.4)
    full = Surrogate.for_observations(sample, kernels=50, seed=0)
    full.fit(sample, epochs=300, seed=0)
    assert full.stopped_at is None
    assert full.best_epoch < 300 - 40  # noisy data: the held-out minimum comes early
    early = Surrogate.for_observations(sample, kernels=50, seed=0)
    losses = early.fit(sample, epochs=300, seed=0, patience=40)
    assert early.stopped_at == full.best_epoch + 41 == len(losses)
    assert early.best_epoch == full.best_epoch
    assert early.validation_loss == full.validation_loss
    for name, value in full.state_dict().items():
        assert torch.equal(value, early.state_dict()[name]), name


def _striped(n: int, noise: float = 0.0, seed: int = 0, waves: int = 8):
    """``waves`` wavelengths along x over a slow growth in t (both on [0, 1])."""
    rng = np.random.default_rng(seed)
    t, x = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    u = np.sin(2 * np.pi * waves * x) * (1 + t) + noise * rng.standard_normal(n)
    return Observations(coords={"t": t, "x": x}, fields={"u": u})


def test_axis_lengths_read_the_fields_length_scales():
    """RMS gradients along the [-1, 1]-scaled axes: lengths 7.7 along t and 0.13 along x
    for the striped field at geometric mean 1; a field as fine along both reads round; too
    few points for a neighbourhood read 1."""
    from symweak.surrogate import axis_lengths

    t_len, x_len = axis_lengths(_striped(3000))
    assert t_len * x_len == pytest.approx(1.0)
    assert 40 < t_len / x_len < 120
    rng = np.random.default_rng(1)
    t, x = rng.uniform(0, 1, 3000), rng.uniform(0, 1, 3000)
    u = np.sin(4 * np.pi * x) * np.cos(4 * np.pi * t)
    round_ = axis_lengths(Observations(coords={"t": t, "x": x}, fields={"u": u}))
    assert round_ == pytest.approx([1.0, 1.0], abs=0.1)
    few = Observations(coords={"t": t[:10], "x": x[:10]}, fields={"u": u[:10]})
    assert axis_lengths(few).tolist() == [1.0, 1.0]


def test_gaussians_are_shaped_only_where_the_round_neighbourhood_misreads_the_field():
    """Eight wavelengths along x over a slow growth in t read 0.094 round and 0.011 with x
    stretched (0.10 and 0.035 at noise 0.03, 0.157 and 0.107 at 0.1): the round
    neighbourhood misses the field by more than the noise, so the Gaussians are shaped,
    each width within [1/8, 8] of a round one's, and the kernel rule counts the data as
    clean. Two wavelengths (0.0013 round, clean; 0.108 against 0.104 at noise 0.1) keep
    round Gaussians."""
    from symweak.discover.network import _warmup
    from symweak.surrogate import noise_readings

    assert _warmup.aspect_for(_striped(3000), 0) == pytest.approx([7.7474, 0.1291])
    assert _warmup.aspect_for(_striped(3000, noise=0.03), 0) == pytest.approx([7.5047, 0.1332])
    assert _warmup.aspect_for(_striped(3000, noise=0.1), 0) == pytest.approx([6.0776, 0.1645])
    assert _warmup.aspect_for(_striped(3000, waves=2), 0) is None
    assert _warmup.aspect_for(_striped(3000, noise=0.1, waves=2), 0) is None
    assert _warmup.misread({"u": 0.1}, {"u": 0.1414}) is False
    assert _warmup.misread({"u": 0.1}, {"u": 0.1415}) is True
    assert _warmup.misread({"u": 0.01}, {"u": 0.049}) is False  # round: clean all the same
    noisy = _striped(3000, noise=0.1)
    cfg = type("Cfg", (), {"embedding": True, "kernels": "auto"})()
    counts, noise, round_ = _warmup._counts(noisy, cfg, 0.1, 0)
    assert (noise, round_) == noise_readings(noisy, seed=0)
    assert counts == [_warmup.rule_kernels(3000, 0.0)] == [250]
    assert _warmup._counts(_striped(3000, noise=0.1, waves=2), cfg, 0.1, 0)[0] == [64]


def test_a_few_snapshots_are_not_read_as_a_fine_pattern():
    """Five snapshots of the assay twin, clean, read 0.080 round against 0.011: the round
    neighbourhood reaches across the snapshots. Sampled at 10 values or fewer of a
    coordinate, the Gaussians stay round and the kernel rule reads the noise estimate."""
    from symweak.bench._assay import assay_twin
    from symweak.discover.network import _warmup
    from symweak.surrogate import noise_readings

    five = assay_twin(10_000, noise=0.0, snapshots=5, replicates=1)
    noise, round_ = noise_readings(five, seed=0)
    assert _warmup.misread(noise, round_) and _warmup.sampled(five)
    assert _warmup.aspect_for(five, 0) is None
    assert not _warmup.sampled(_striped(3000))
    eleven = Observations(
        coords={"t": np.repeat(np.arange(11.0), 20), "x": np.tile(np.arange(20.0), 11)},
        fields={"u": np.arange(220.0)},
    )
    assert not _warmup.sampled(eleven)


def test_reshape_scales_each_axis_and_a_saved_surrogate_keeps_the_widths(tmp_path):
    bounds = {"t": (0.0, 1.0), "x": (0.0, 1.0)}
    round_ = Surrogate(bounds, ["u"], kernels=100, seed=0)
    shaped = Surrogate(bounds, ["u"], kernels=100, seed=0)
    shaped.embedding.reshape([4.0, 0.25])
    difference = shaped.embedding.log_inv_scale - round_.embedding.log_inv_scale
    assert torch.allclose(difference[..., 0], torch.tensor(-np.log(4.0), dtype=torch.float32))
    assert torch.allclose(difference[..., 1], torch.tensor(np.log(4.0), dtype=torch.float32))
    assert torch.equal(shaped.embedding.mu, round_.embedding.mu)
    again = Surrogate(bounds, ["u"], **shaped.config)
    again.load_state_dict(shaped.state_dict())
    assert torch.equal(again.embedding.log_inv_scale, shaped.embedding.log_inv_scale)
    full = Surrogate(bounds, ["u"], kernels=10, seed=0, full=True)
    with pytest.raises(ValueError, match="reshape is for diagonal Gaussians"):
        full.embedding.reshape([2.0, 0.5])

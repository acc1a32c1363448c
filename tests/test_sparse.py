"""Scattered points: the sparse evaluation of the Gaussian embedding (only the Gaussians
near each box of points) equals the dense one, values and gradients, to float32 precision."""

import numpy as np
import pytest
import torch

import symweak
from symweak.surrogate import DataTerm, Surrogate
from symweak.surrogate._embedding import GaussianEmbedding, PointTiles


def _grads(emb, out):
    emb.zero_grad()
    (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
    return {n: p.grad.clone() for n, p in emb.named_parameters()}


@pytest.mark.parametrize("dim,n,kernels", [(1, 300, 50), (2, 2000, 400), (3, 1500, 300)])
def test_sparse_equals_dense_with_gradients(dim, n, kernels):
    gen = torch.Generator().manual_seed(dim)
    emb = GaussianEmbedding(dim, 4, kernels, generator=gen)
    with torch.no_grad():  # as after training: moved centres, unequal and anisotropic widths
        emb.mu.add_(0.05 * torch.randn(emb.mu.shape, generator=gen))
        emb.log_inv_scale.add_(0.4 * torch.randn(emb.log_inv_scale.shape, generator=gen))
    x = torch.rand(n, dim, generator=gen) * 2 - 1
    dense = emb._points(x)
    sparse = emb.sparse(PointTiles.build(x))
    scale = dense.abs().max().item()
    assert (sparse - dense).abs().max().item() < 2e-6 * scale
    g_dense, g_sparse = _grads(emb, emb._points(x)), _grads(emb, emb.sparse(PointTiles.build(x)))
    for name in g_dense:
        ref = g_dense[name]
        err = (g_sparse[name] - ref).abs().max().item()
        assert err < 1e-5 * ref.abs().max().item(), (name, err)


def test_sparse_keeps_the_callers_order_and_forward_uses_it():
    gen = torch.Generator().manual_seed(0)
    emb = GaussianEmbedding(2, 4, 200, generator=gen)
    x = torch.rand(700, 2, generator=gen) * 2 - 1
    perm = torch.randperm(700, generator=gen)
    a = emb.sparse(PointTiles.build(x))
    b = emb.sparse(PointTiles.build(x[perm]))
    torch.testing.assert_close(b, a[perm], rtol=0, atol=2e-6)
    # forward: sparse for many points; dense when the points need gradients
    torch.testing.assert_close(emb(x), a, rtol=0, atol=0)
    xg = x.clone().requires_grad_()
    torch.testing.assert_close(emb(xg), emb._points(x), rtol=0, atol=0)


def test_point_tiles_cover_every_point_once_in_small_boxes():
    x = torch.rand(1000, 2, generator=torch.Generator().manual_seed(1)) * 2 - 1
    tiles = PointTiles.build(x, size=64)
    B, P, m = tiles.monomials.shape
    assert P <= 64 and m == 5 and B * P >= 1000
    assert sorted(tiles.inverse.tolist()) == sorted(set(tiles.inverse.tolist()))
    # offsets from each box's centre lie within its half-widths
    y = tiles.monomials[..., 1:3]
    assert bool((y.abs() <= tiles.half[:, None] + 1e-6).all())
    with pytest.raises(ValueError, match=r"PointTiles needs points of shape \(n, D\), n > 0"):
        PointTiles.build(torch.zeros(0, 2))


def test_data_term_on_scattered_points_uses_the_sparse_path():
    rng = np.random.default_rng(0)
    t, x = rng.uniform(0, 1, 1500), rng.uniform(-1, 1, 1500)
    obs = symweak.Observations(coords={"t": t, "x": x}, fields={"u": np.sin(3 * x - t)})
    model = Surrogate.for_observations(obs, kernels=300, seed=0)
    data = DataTerm(model, obs)
    assert data.mode == "points" and data.tiles is not None
    z = model.normalise(data.points)
    dense = ((model.head(model.embedding._points(z)) - data.target) / data.scale) ** 2
    torch.testing.assert_close(data.loss(), dense.mean(), rtol=1e-5, atol=0)
    full = Surrogate.for_observations(obs, kernels=50, seed=0, full=True)
    assert DataTerm(full, obs).tiles is None  # full covariances: point by point


def test_batches_of_whole_boxes_equal_the_dense_loss_on_their_points():
    gen = torch.Generator().manual_seed(3)
    emb = GaussianEmbedding(3, 4, 300, generator=gen)
    x = torch.rand(3000, 3, generator=gen) * 2 - 1
    tiles = PointTiles.build(x)
    rows = torch.tensor([5, 0, 17, 9])
    pts = tiles.box_points(rows)
    # every point of those boxes once, none of another box
    assert len(set(pts.tolist())) == len(pts) == int(tiles.valid[rows].sum())
    P = tiles.index.shape[1]
    inside = {i for i in range(3000) if int(tiles.inverse[i]) // P in {5, 0, 17, 9}}
    assert set(pts.tolist()) == inside
    part = emb.sparse(tiles, rows=rows)
    dense = emb._points(x[pts])
    assert (part - dense).abs().max().item() < 2e-6 * dense.abs().max().item()
    # the data term's batches are whole boxes, about max_points points, seeded
    rng = np.random.default_rng(1)
    obs = symweak.Observations(
        coords={n: rng.uniform(-1, 1, 6000) for n in ("t", "x", "y")},
        fields={"u": rng.normal(size=6000)},
    )
    model = Surrogate.for_observations(obs, kernels=100, seed=0)
    data = DataTerm(model, obs, max_points=1000, seed=4)
    assert data.mode == "points" and data.tiles is not None
    batch = data._batch()
    n = len(data.tiles.box_points(batch))
    assert 900 <= n < 1000 + 64  # ceil(1000 / 64) boxes, a few not full
    again = DataTerm(model, obs, max_points=1000, seed=4)._batch()
    assert torch.equal(batch, again)
    loss = DataTerm(model, obs, max_points=1000, seed=4).loss()  # on that first batch
    pts = data.tiles.box_points(batch)
    z = model.normalise(data.points[pts])
    ref = (((model.head(model.embedding._points(z)) - data.target[pts]) / data.scale) ** 2).mean()
    torch.testing.assert_close(loss, ref, rtol=1e-5, atol=0)

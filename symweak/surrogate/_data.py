"""The data term ℒ_data: the observations a surrogate is fitted to, evaluated through the
grid, gathered from it, or at scattered points, in batches; and the held-out split."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .._errors import SymweakError
from .._seeds import child_seed
from ._embedding import PointTiles

__all__ = ["DataTerm", "held_out_term", "split_points"]


#: where training steps run as CUDA graphs, scattered points are compared with every Gaussian
#: (shapes fixed) while points × Gaussians × features stays below this: the boxes' sparse
#: evaluation has shapes that follow how far the Gaussians reach, which a graph cannot hold
DENSE_POINTS = 20_000_000


def _dense_fits(model, n: int) -> bool:
    from .._trainer import cuda_graphs

    emb = model.embedding
    return cuda_graphs(model.device) and n * emb.kernels * emb.features <= DENSE_POINTS


def held_out_term(model, held, mode: str, max_points: int | None, seed: int):
    """The data term on the held-out points, or None. Held-out sets larger than
    ``max_points`` are cut to a fixed seeded subset (not a fresh batch each time), so that
    the validation losses of different epochs compare the same points."""
    if held is None:
        return None
    if max_points and len(held) > max_points:
        rng = np.random.default_rng(child_seed(seed, "held_out_subset"))
        keep = np.zeros(len(held), dtype=bool)
        keep[rng.choice(len(held), size=max_points, replace=False)] = True
        held = held.subset(keep)
    return DataTerm(model, held, mode, seed=child_seed(seed, "held_out_batches"))


def split_points(obs, fraction: float, seed: int):
    """(train, held-out) observations; ``held`` is None when ``fraction`` is 0. Replicates
    (points that share coordinates) go to the same side."""
    if not 0.0 <= fraction < 1.0:
        raise SymweakError(f"validation fraction must be in [0, 1), got {fraction}.")
    n = len(obs)
    k = round(fraction * n)
    if k == 0:
        return obs, None
    rng = np.random.default_rng(child_seed(seed, "held_out_split"))
    reps = getattr(obs, "replicates", None)
    if reps is not None:  # hold out whole coordinates: a replicate left in training would
        # make the held-out loss that of a point the surrogate saw
        groups = max(1, round(fraction * reps.distinct))
        held = np.zeros(reps.distinct, dtype=bool)
        held[rng.choice(reps.distinct, size=groups, replace=False)] = True
        held = held[reps.group]
    else:
        held = np.zeros(n, dtype=bool)
        held[rng.choice(n, size=k, replace=False)] = True
    return obs.subset(~held), obs.subset(held)


class DataTerm:
    """The data loss ℒ_data = mean (Û - Ũ)² on standardised fields.

    How Û is evaluated at the observed points (``mode``):

    * ``"grid"``: the embedding on the whole grid the observations were sampled from
      (separable matrix products), indexed at the points, and the MLP at those points only
      — cheapest when the points fill a good part of the grid;
    * ``"gather"``: per-axis Gaussian factors on the grid's axes, gathered per point —
      cheapest for sparse samples of large grids (diagonal Σ);
    * ``"points"``: point-wise (scattered data, or full Σ).

    ``"auto"`` picks by cost. With ``max_points``, each evaluation uses a seeded random
    batch of that many points (large 3-D data), so memory stays bounded.
    """

    def __init__(
        self, model: nn.Module, obs, mode: str = "auto", max_points: int | None = None, seed=0
    ) -> None:
        dev, dtype = model.device, model.lo.dtype
        self.model = model
        values = np.stack([obs.fields[f] for f in model.field_names], axis=1)
        self.target = torch.as_tensor(values, dtype=dtype, device=dev)
        self.scale = model.out_std.clone()
        on_grid = obs.grid is not None and obs.grid.names == model.coord_names
        diagonal = model.embedding is not None and not model.embedding.full
        if mode == "auto":
            if not on_grid:
                mode = "points"
            else:
                # Measured on 2 CPU cores: the whole-grid path (matrix products) beats
                # gathering per point unless the sample is tiny (1-D/2-D grids) or the grid
                # is too large to hold activations for (3-D, > 2M points: NS 101x300x150).
                # On (t, x) grids gathering only pays below about 1 % of the grid: per 800
                # steps, Burgers 101x256 at 2.5 % 18.8 s grid / 27.2 s gather, at 1 %
                # 18.2 / 15.8 s; KdV 201x512 at 2.5 % 66 / 89 s, at 1 % 56 / 59 s (measured
                # with the MLP on the whole grid; now that it runs at the compared points
                # only, the whole-grid path is cheaper still).
                size = int(np.prod([len(a) for a in obs.grid.axes.values()]))
                dim = len(model.coord_names)
                sparse = len(obs) * 100 < size if dim <= 2 else size > 2_000_000
                # A 3-D sample of a grid too large to hold goes point-wise: batches of
                # compact boxes through the sparse evaluation cost less than gathering
                # every Gaussian's factors at as many scattered points (Navier–Stokes
                # 10 %, 454 500 points, N = 1000, 2 threads: a data-term step 150 ms
                # gathered, 74 ms in boxes; the run 498 -> 289 s, docs/benchmarks.md)
                gather = diagonal and dim <= 2
                mode = "grid" if not sparse else "gather" if gather else "points"
        if mode not in ("grid", "gather", "points"):
            raise SymweakError(f"DataTerm mode must be grid, gather or points, got {mode!r}.")
        if mode != "points" and not on_grid:
            raise SymweakError(f"DataTerm mode {mode!r} needs observations sampled from a grid.")
        if mode == "gather" and not diagonal:
            mode = "points"
        self.mode = mode
        self.axes = None
        if on_grid:
            self.axes = [
                torch.as_tensor(obs.grid.axes[n], dtype=dtype, device=dev)
                for n in model.coord_names
            ]
            self.normed = [
                2.0 * (a - model.lo[i]) / (model.hi[i] - model.lo[i]) - 1.0
                for i, a in enumerate(self.axes)
            ]
            self.index = torch.as_tensor(obs.grid_index, device=dev)
            shape = [len(a) for a in obs.grid.axes.values()]
            self.axis_index = torch.as_tensor(
                np.stack(np.unravel_index(obs.grid_index, shape), axis=1), device=dev
            )
        pts = np.stack([obs.coords[n] for n in model.coord_names], axis=1)
        self.points = torch.as_tensor(pts, dtype=dtype, device=dev)
        self.tiles = None
        if mode == "points" and diagonal and not _dense_fits(model, len(obs)):
            # scattered points: grouped once into boxes, so each step evaluates only the
            # Gaussians near each box (GaussianEmbedding.sparse)
            self.tiles = PointTiles.build(model.normalise(self.points))
        self.max_points = max_points if max_points and max_points < len(obs) else None
        self._gen = torch.Generator().manual_seed(child_seed(seed, "batches"))

    def __len__(self) -> int:
        return int(self.target.shape[0])

    def _batch(self) -> torch.Tensor | None:
        """This step's batch: point indices, or with ``tiles`` the indices of whole boxes
        holding about ``max_points`` points (each box's points lie together, so few
        Gaussians reach it)."""
        if self.max_points is None:
            return None
        if self.tiles is not None:
            boxes = int(self.tiles.index.shape[0])
            per = max(int(self.tiles.index.shape[1]), 1)
            take = min(boxes, max(1, math.ceil(self.max_points / per)))
            perm = torch.randperm(boxes, generator=self._gen)[:take]
            return perm.to(self.target.device)
        perm = torch.randperm(len(self), generator=self._gen)[: self.max_points]
        return perm.to(self.target.device)

    def _targets(self, batch) -> torch.Tensor:
        if batch is None:
            return self.target
        if self.tiles is not None:
            return self.target[self.tiles.box_points(batch)]
        return self.target[batch]

    def shared(self) -> torch.Tensor | None:
        """What one step computes once for this term and its held-out twin (same grid):
        the MLP's inputs on the grid in ``"grid"`` mode, else None."""
        return self.model.grid_features(self.axes) if self.mode == "grid" else None

    def predictions(self, shared: torch.Tensor | None = None, batch=None) -> torch.Tensor:
        model = self.model
        if self.mode == "grid":
            # the MLP only where it is compared (a 20 000-point batch of KdV's 102 912-point
            # grid: the warm-up step 115 -> 62 ms on 2 cores)
            feats = shared if shared is not None else model.grid_features(self.axes)
            flat = feats.reshape(-1, feats.shape[-1])
            return model.head(flat[self.index if batch is None else self.index[batch]])
        if self.mode == "gather":
            idx = self.axis_index if batch is None else self.axis_index[batch]
            return model.head(model.embedding.gather(self.normed, idx))
        if self.tiles is not None:
            return model.head(model.embedding.sparse(self.tiles, rows=batch))
        return model(self.points if batch is None else self.points[batch])

    def loss(self, shared: torch.Tensor | None = None) -> torch.Tensor:
        """The loss on this step's batch; ``shared``: this step's ``shared()`` (computed
        here when not given)."""
        batch = self._batch()
        target = self._targets(batch)
        diff = (self.predictions(shared, batch) - target) / self.scale
        return (diff * diff).mean()

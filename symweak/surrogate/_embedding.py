"""The learnable Gaussian embedding FE_φ (paper eq. (12)).

Developer notes: feature j is FE_j(x) = Σ_i f_ij exp(-½ (x - μ_ij)ᵀ Σ_ij⁻¹ (x - μ_ij)), with N
Gaussians per feature and d' features, on inputs normalised to [-1, 1]^D.

* Diagonal Σ (default): each Gaussian is a product of 1-D factors, so on a rectilinear grid
  the embedding is a contraction of per-axis factor matrices — a batched matrix product in
  2-D (no N × points intermediate at all) — and at scattered points it is one exponential of
  a sum of per-axis squares, computed in chunks so no intermediate exceeds points × N floats.
* Scattered points (diagonal Σ): a Gaussian is negligible a few widths from its centre, so
  the points are grouped once into compact boxes of at most 64 (a k-d split, ``PointTiles``)
  and, per box, only the Gaussians whose ``cut``-width ellipsoid reaches the box are
  evaluated (``sparse``). Inside a box the exponent is a matrix product of the monomials
  [1, y, y²] of the offsets y from the box's centre (offsets, not coordinates, so the terms
  stay O(1) and float32 keeps its precision), then one exp and one product with the weights;
  a custom backward reuses those buffers. Exponents are clamped at -60 before the exp:
  subnormal results are ~4x slower on x86 and carry no information.
* Full Σ (``full=True``): Σ⁻¹ = LLᵀ with L lower-triangular (positive diagonal); evaluated
  point-wise in chunks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

__all__ = ["GaussianEmbedding", "PointTiles"]

#: Gaussians are dropped where exp(-½ z²) is below exp(-½ CUT²) over a whole box: at 5.5 the
#: dropped mass is ~1e-7 of the features (float32 precision), measured against the dense sum
CUT = 5.5
#: exponents below this are clamped (exp(-60) ~ 1e-26: no subnormal floats, no information lost)
_FLOOR = -60.0


@dataclass(frozen=True)
class PointTiles:
    """Fixed points grouped into compact boxes for :meth:`GaussianEmbedding.sparse`.

    ``monomials`` (B, P, 2D+1) holds [1, y, y²] for the offsets y of each box's points from
    its centre (short boxes are padded by repeating a point); ``centre`` and ``half`` (B, D)
    are the boxes' centres and half-widths; ``inverse`` (n,) is where each point sits in the
    flattened (B·P) layout, so results come back in the caller's order."""

    monomials: torch.Tensor
    centre: torch.Tensor
    half: torch.Tensor
    inverse: torch.Tensor
    #: (B, P) the point at each slot of each box (padding repeats a point) and (B, P) which
    #: slots are real: a batch of whole boxes (``GaussianEmbedding.sparse(..., rows=)``)
    #: knows its points from them
    index: torch.Tensor | None = None
    valid: torch.Tensor | None = None

    @classmethod
    def build(cls, z: torch.Tensor, size: int = 64) -> PointTiles:
        """A k-d split of the points ``z`` (n, D): halve the widest box at a median until
        at most ``size`` points remain (leaves hold ``size`` points where the count allows:
        little padding)."""
        if z.dim() != 2 or z.shape[0] == 0:
            raise ValueError(
                f"PointTiles needs points of shape (n, D), n > 0; got {tuple(z.shape)}."
            )
        pts = z.detach().double().cpu().numpy()
        n = pts.shape[0]
        leaves, stack = [], [np.arange(n)]
        while stack:
            idx = stack.pop()
            if len(idx) <= size:
                leaves.append(idx)
                continue
            sub = pts[idx]
            axis = int(np.argmax(sub.max(0) - sub.min(0)))
            k = (len(idx) + 1) // 2
            if len(idx) > 2 * size:
                k = max(size, round(k / size) * size)
            part = np.argsort(sub[:, axis], kind="stable")
            stack.append(idx[part[k:]])
            stack.append(idx[part[:k]])
        width = max(len(leaf) for leaf in leaves)
        index = np.stack([np.pad(leaf, (0, width - len(leaf)), mode="edge") for leaf in leaves])
        valid = np.arange(width)[None, :] < np.array([len(leaf) for leaf in leaves])[:, None]
        flat = index.reshape(-1)[valid.reshape(-1)]
        inverse = np.empty(n, dtype=np.int64)
        inverse[flat] = np.flatnonzero(valid.reshape(-1))
        box = z.detach()[torch.as_tensor(index, device=z.device)]  # (B, P, D)
        lo, hi = box.amin(1), box.amax(1)
        centre, half = (lo + hi) / 2, (hi - lo) / 2
        y = box - centre[:, None]
        monomials = torch.cat([torch.ones_like(y[..., :1]), y, y * y], dim=-1)
        dev = z.device
        return cls(
            monomials,
            centre,
            half,
            torch.as_tensor(inverse, device=dev),
            torch.as_tensor(index, device=dev),
            torch.as_tensor(valid, device=dev),
        )

    def box_points(self, rows: torch.Tensor) -> torch.Tensor:
        """The points (indices into the built set) of boxes ``rows``, in the order
        ``GaussianEmbedding.sparse(tiles, rows=rows)`` returns their features."""
        return self.index[rows][self.valid[rows]]

    def __len__(self) -> int:
        return int(self.inverse.shape[0])


class _GaussianSums(torch.autograd.Function):
    """out = exp(max(X A, floor)) W per box, batched: X (B, P, m), A (B, m, K), W (B, K, d')."""

    @staticmethod
    def forward(ctx, X, A, W):
        G = torch.bmm(X, A).clamp_min_(_FLOOR).exp_()
        ctx.save_for_backward(X, G, W)
        return torch.bmm(G, W)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        X, G, W = ctx.saved_tensors
        dW = torch.bmm(G.transpose(1, 2), grad)
        dE = torch.bmm(grad, W.transpose(1, 2)).mul_(G)
        dA = torch.bmm(X.transpose(1, 2), dE)
        return None, dA, dW


class GaussianEmbedding(nn.Module):
    """FE_φ: R^D -> R^{d'}, a weighted sum of N learnable Gaussians per output feature."""

    def __init__(
        self,
        dim: int,
        features: int = 4,
        kernels: int = 1000,
        full: bool = False,
        width: float = 1.5,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        if dim < 1 or features < 1 or kernels < 1:
            raise ValueError("dim, features and kernels must be positive.")
        self.dim, self.features, self.kernels, self.full = dim, features, kernels, full
        mu = torch.rand(features, kernels, dim, generator=generator, dtype=torch.float64) * 2 - 1
        # width from point density: N centres in [-1, 1]^D are ~2/N^{1/D} apart
        spacing = 2.0 / kernels ** (1.0 / dim)
        sigma = width * spacing
        self.mu = nn.Parameter(mu.to(dtype))
        if full:
            # L = diag(1/σ) initially; stored as log-diagonal plus strictly-lower part
            self.log_diag = nn.Parameter(
                torch.full((features, kernels, dim), -math.log(sigma), dtype=dtype)
            )
            self.lower = nn.Parameter(torch.zeros(features, kernels, dim, dim, dtype=dtype))
        else:
            self.log_inv_scale = nn.Parameter(
                torch.full((features, kernels, dim), -math.log(sigma), dtype=dtype)
            )
        # typical overlap: (2·width)^D Gaussians cover a point; keep features O(1)
        overlap = max(1.0, (2.0 * width) ** dim)
        f = torch.randn(features, kernels, generator=generator, dtype=torch.float64) / math.sqrt(
            overlap
        )
        self.weight = nn.Parameter(f.to(dtype))

    def start_between(self, knots: Sequence[np.ndarray | None], share: float) -> None:
        """Widen (never narrow) each Gaussian along each axis to ``share`` × the gap between
        the two of ``knots[axis]`` (the data's distinct values along it, sorted, normalised
        to [-1, 1]; None: leave that axis) around its centre. Between samples nothing holds
        a narrower Gaussian to the data, and it would bend the field there."""
        if self.full:
            raise ValueError("start_between is for diagonal Gaussians (full=False).")
        scale = self.log_inv_scale.detach().double().cpu().numpy()  # (d', N, D)
        mu = self.mu.detach().double().cpu().numpy()
        changed = False
        for axis, z in enumerate(knots):
            if z is None or len(z) < 2:
                continue
            z = np.asarray(z, dtype=np.float64)
            i = np.clip(np.searchsorted(z, mu[..., axis]), 1, len(z) - 1)
            want = share * (z[i] - z[i - 1])
            wider = want > np.exp(-scale[..., axis])
            scale[..., axis] = np.where(wider, -np.log(np.maximum(want, 1e-300)), scale[..., axis])
            changed |= bool(wider.any())
        if changed:
            with torch.no_grad():
                self.log_inv_scale.copy_(torch.as_tensor(scale, dtype=self.log_inv_scale.dtype))

    def reshape(self, aspect: Sequence[float]) -> None:
        """Scale every Gaussian's width along each axis by ``aspect[axis]`` (the field's
        length scale there relative to the others: a pattern much finer along one axis)."""
        if self.full:
            raise ValueError("reshape is for diagonal Gaussians (full=False).")
        shift = torch.log(torch.as_tensor([float(a) for a in aspect], dtype=torch.float64))
        with torch.no_grad():
            self.log_inv_scale.sub_(shift.to(self.log_inv_scale))

    # ------------------------------------------------------------------ helpers
    def _chunk(self, n: int, budget: int = 4_000_000) -> int:
        return max(1, budget // (self.features * self.kernels))

    def inverse_cholesky(self) -> torch.Tensor:
        """L with Σ⁻¹ = L Lᵀ, shape (d', N, D, D) (full Σ only)."""
        tril = torch.tril(self.lower, diagonal=-1)
        return tril + torch.diag_embed(torch.exp(self.log_diag))

    # ------------------------------------------------------------------ evaluation
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Features at points ``x`` of shape (n, D) -> (n, d')."""
        if x.dim() != 2 or x.shape[1] != self.dim:
            raise ValueError(f"Expected points of shape (n, {self.dim}), got {tuple(x.shape)}.")
        if not self.full and not x.requires_grad and x.shape[0] * self.kernels >= 65_536:
            # many points: only the Gaussians near each point (same values, far cheaper)
            return self.sparse(PointTiles.build(x))
        step = self._chunk(x.shape[0])
        outs = [self._points(x[i : i + step]) for i in range(0, x.shape[0], step)]
        return torch.cat(outs, dim=0) if outs else x.new_zeros((0, self.features))

    def sparse(self, tiles: PointTiles, cut: float = CUT, rows=None) -> torch.Tensor:
        """Features at the points of ``tiles`` (n, d'), evaluating per box only the Gaussians
        that reach it (diagonal Σ). Equal to ``forward`` at those points to float32
        precision, with the same gradients for μ, Σ and the weights (not for the points).
        With ``rows`` (box indices), only those boxes: the features of their points
        (``tiles.box_points(rows)``, in that order) — a batch of compact boxes costs far
        less than as many points drawn over the whole domain, each reached by more
        Gaussians."""
        if self.full:
            raise ValueError("sparse evaluation needs diagonal covariances.")
        if rows is not None:
            sub = PointTiles(
                tiles.monomials[rows], tiles.centre[rows], tiles.half[rows], tiles.inverse
            )
            feats = self._sparse_boxes(sub, cut)
            return feats[tiles.valid[rows]]
        out = self._sparse_boxes(tiles, cut)
        return out.reshape(-1, self.features)[tiles.inverse]

    def _sparse_boxes(self, tiles: PointTiles, cut: float) -> torch.Tensor:
        """(B, P, d') features at every slot of every box of ``tiles``."""
        D, K = self.dim, self.features * self.kernels
        mu = self.mu.reshape(K, D)
        scale = torch.exp(self.log_inv_scale).reshape(K, D)
        weight = self.weight.reshape(K)
        with torch.no_grad():  # which Gaussians reach which box: distance box-to-centre in σ
            gap = (tiles.centre[:, None] - mu[None]).abs_().sub_(tiles.half[:, None])
            gap = gap.clamp_(min=0).mul_(scale[None])
            active = gap.square_().sum(-1) < cut * cut  # (B, K)
            counts = active.sum(1)
        B = active.shape[0]
        # boxes in two batches by how many Gaussians reach them: less padding
        order = torch.argsort(counts, descending=True)
        parts = [order[: (B + 1) // 2], order[(B + 1) // 2 :]] if B > 1 else [order]
        pieces, rows_all = [], []
        for rows in parts:
            if rows.numel() == 0:
                continue
            act = active[rows]
            width = max(int(counts[rows].max()), 1)
            with torch.no_grad():
                r, k = act.nonzero(as_tuple=True)
                pos = act.cumsum(1)[r, k] - 1
                sel = torch.zeros(len(rows), width, dtype=torch.long, device=mu.device)
                sel[r, pos] = k
                valid = torch.zeros(len(rows), width, dtype=torch.bool, device=mu.device)
                valid[r, pos] = True
            s2 = scale[sel].square()  # (b, width, D)
            delta = tiles.centre[rows][:, None] - mu[sel]
            A = torch.cat(
                [(-0.5 * s2 * delta * delta).sum(-1, keepdim=True), -s2 * delta, -0.5 * s2], -1
            )
            A = A.masked_fill(~valid[..., None], 0.0)  # padding: exp(0) times a zero weight
            W = torch.zeros(len(rows), width, self.features, dtype=mu.dtype, device=mu.device)
            W = W.scatter(
                2,
                torch.div(sel, self.kernels, rounding_mode="floor")[..., None],
                (weight[sel] * valid)[..., None],
            )
            pieces.append(_GaussianSums.apply(tiles.monomials[rows], A.transpose(1, 2), W))
            rows_all.append(rows)
        return torch.cat(pieces, 0)[torch.argsort(torch.cat(rows_all))]

    def _points(self, x: torch.Tensor) -> torch.Tensor:
        diff = x[:, None, None, :] - self.mu[None]  # (n, d', N, D)
        if self.full:
            z = torch.einsum("njkd,jkde->njke", diff, self.inverse_cholesky())
        else:
            z = diff * torch.exp(self.log_inv_scale)[None]
        g = torch.exp((-0.5 * (z * z).sum(-1)).clamp_min(_FLOOR))  # (n, d', N)
        return (g * self.weight[None]).sum(-1)

    def factors(self, axis: int, values: torch.Tensor) -> torch.Tensor:
        """Per-axis factors exp(-½((v - μ)/σ)²) of shape (d', N, len(values)) (diagonal Σ)."""
        z = (values[None, None, :] - self.mu[..., axis, None]) * torch.exp(
            self.log_inv_scale[..., axis, None]
        )
        return torch.exp((-0.5 * z * z).clamp_min(_FLOOR))

    def gather(self, axes: list[torch.Tensor], index: torch.Tensor) -> torch.Tensor:
        """Features at grid points given by per-axis indices ``index`` (n, D) -> (n, d').

        Equal to ``grid(axes)`` at those points, but costs n·N·d'·D instead of the whole
        grid: the per-axis factors are computed once on the axes and gathered per point.
        Diagonal Σ only.
        """
        if self.full:
            raise ValueError("gather needs diagonal covariances.")
        # rows = grid positions: gathering whole rows of a (n_i, d'·N) matrix is contiguous
        # in memory (and its backward a row-wise index_add), several times faster than
        # gathering along the last axis of (d', N, n_i)
        F = [self.factors(i, a).flatten(0, 1).T for i, a in enumerate(axes)]  # (n_i, d'N)
        w = self.weight.reshape(1, self.features, self.kernels)
        step = self._chunk(index.shape[0])
        outs = []
        for start in range(0, index.shape[0], step):
            idx = index[start : start + step]
            g = F[0].index_select(0, idx[:, 0])
            for i in range(1, self.dim):
                g = g * F[i].index_select(0, idx[:, i])
            outs.append((g.view(-1, self.features, self.kernels) * w).sum(-1))
        return torch.cat(outs, dim=0) if outs else F[0].new_zeros((0, self.features))

    def grid(self, axes: list[torch.Tensor]) -> torch.Tensor:
        """Features on the rectilinear grid spanned by ``axes`` -> (*shape, d').

        Diagonal Σ uses the separable form (batched matrix products); full Σ evaluates the
        grid points in chunks.
        """
        if len(axes) != self.dim:
            raise ValueError(f"Expected {self.dim} axes, got {len(axes)}.")
        shape = tuple(int(a.numel()) for a in axes)
        if self.full:
            mesh = torch.meshgrid(*axes, indexing="ij")
            pts = torch.stack([m.reshape(-1) for m in mesh], dim=1)
            return self.forward(pts).reshape(*shape, self.features)
        F = [self.factors(i, a) for i, a in enumerate(axes)]  # each (d', N, n_i)
        if self.dim == 1:
            out = torch.einsum("jk,jka->aj", self.weight, F[0])
            return out
        A = F[0] * self.weight[..., None]  # fold the weights into the first axis
        if self.dim == 2:
            return torch.einsum("jka,jkb->abj", A, F[1])
        # D >= 3: contract the kernels in chunks so no (N, n_1, ..., n_D) tensor is built
        out = A.new_zeros(*shape, self.features)
        rest = int(torch.tensor(shape[1:]).prod())
        chunk = max(1, 2_000_000 // max(rest, 1))
        letters = "bcdefgh"[: self.dim - 1]
        for start in range(0, self.kernels, chunk):
            sl = slice(start, start + chunk)
            prod = F[1][:, sl]
            for i in range(2, self.dim):
                prod = prod[..., None] * F[i][:, sl].reshape(
                    *F[i][:, sl].shape[:2], *([1] * (i - 1)), -1
                )
            out = out + torch.einsum(f"jka,jk{letters}->a{letters}j", A[:, sl], prod)
        return out

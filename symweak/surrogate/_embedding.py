"""The learnable Gaussian embedding FE_φ (paper eq. (12)).

Developer notes: feature j is FE_j(x) = Σ_i f_ij exp(-½ (x - μ_ij)ᵀ Σ_ij⁻¹ (x - μ_ij)), with N
Gaussians per feature and d' features, on inputs normalised to [-1, 1]^D.

* Diagonal Σ (default): each Gaussian is a product of 1-D factors, so on a rectilinear grid
  the embedding is a contraction of per-axis factor matrices — a batched matrix product in
  2-D (no N × points intermediate at all) — and at scattered points it is one exponential of
  a sum of per-axis squares, computed in chunks so no intermediate exceeds points × N floats.
* Full Σ (``full=True``): Σ⁻¹ = LLᵀ with L lower-triangular (positive diagonal); evaluated
  point-wise in chunks.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["GaussianEmbedding"]


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
        step = self._chunk(x.shape[0])
        outs = [self._points(x[i : i + step]) for i in range(0, x.shape[0], step)]
        return torch.cat(outs, dim=0) if outs else x.new_zeros((0, self.features))

    def _points(self, x: torch.Tensor) -> torch.Tensor:
        diff = x[:, None, None, :] - self.mu[None]  # (n, d', N, D)
        if self.full:
            z = torch.einsum("njkd,jkde->njke", diff, self.inverse_cholesky())
        else:
            z = diff * torch.exp(self.log_inv_scale)[None]
        g = torch.exp(-0.5 * (z * z).sum(-1))  # (n, d', N)
        return (g * self.weight[None]).sum(-1)

    def factors(self, axis: int, values: torch.Tensor) -> torch.Tensor:
        """Per-axis factors exp(-½((v - μ)/σ)²) of shape (d', N, len(values)) (diagonal Σ)."""
        z = (values[None, None, :] - self.mu[..., axis, None]) * torch.exp(
            self.log_inv_scale[..., axis, None]
        )
        return torch.exp(-0.5 * z * z)

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

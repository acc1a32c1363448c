"""Assembly of the weak-form system b = G ξ (paper eq. (6)-(7)) on rectilinear grids.

Developer notes:

* ``G[k, s] = ∫ (-1)^{|α_s|} D^{α_s} Φ_k · F_s`` is computed by trapezoid quadrature. Since
  Φ_k = Π_i φ_{k,i}(x_i), the integral is a contraction of F_s with one weight vector per axis:
  ``A_i^{(n)}[k, j] = w_i[j] · r_{k,i}^{-n} φ^{(n)}((x_{i,j} - c_{k,i}) / r_{k,i})``, where w_i
  are trapezoid weights (uniform or not).
* Two strategies, same numbers: *dense* (one matrix product along the first axis for all k,
  then a row-wise product along the others) when the intermediate is small, and *windowed*
  (each test function touches only the grid points of its compact support) otherwise.
* Everything is torch, float64 by default, so the same code sits inside a training loss and
  differentiates through F.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from .._errors import SymweakError
from ._supports import TestFunctionSet

__all__ = ["WeakAssembler", "trapezoid_weights"]


def trapezoid_weights(axis: np.ndarray) -> np.ndarray:
    """Trapezoid quadrature weights for the (possibly non-uniform) nodes ``axis``."""
    axis = np.asarray(axis, dtype=np.float64)
    w = np.zeros_like(axis)
    d = np.diff(axis)
    w[:-1] += d / 2
    w[1:] += d / 2
    return w


def _vanishing_moments(mat: np.ndarray, base: np.ndarray, s: np.ndarray, m: int) -> np.ndarray:
    """The quadrature rows of φ^(n) (n >= 1) corrected by a multiple of the bump's own row
    (and of s times it) so that they integrate the first ``m`` monomials (1, and s for
    n >= 2) exactly to zero, as ∫ D^n φ · 1 = ∫ D^n φ · x = 0 do. Trapezoid sums leave about
    3e-6 of ∫|φ''| on a constant (supports 20–30 nodes wide), which is nothing for a field
    of size 1 but for a temperature of 300 ± 0.5 K is 0.3 % of the u_xx column: the heat
    equation then came back as 0.0025 d_xx(u²) (its near-copy over that range) even from
    the exact field. The correction is of the size of the quadrature error, so every other
    integral keeps its accuracy."""
    basis = [base, base * s][:m]
    moments = [np.ones_like(s), s][:m]
    A = np.stack([[np.sum(b * q, axis=1) for b in basis] for q in moments], axis=0)  # (m, m, K)
    A = np.moveaxis(A, -1, 0)  # (K, m moments, m basis)
    rhs = np.stack([np.sum(mat * q, axis=1) for q in moments], axis=1)  # (K, m)
    ok = np.abs(np.linalg.det(A)) > 1e-300
    coef = np.zeros_like(rhs)
    if ok.any():
        coef[ok] = np.linalg.solve(A[ok], rhs[ok][..., None])[..., 0]
    return mat - sum(coef[:, j : j + 1] * basis[j] for j in range(m))


class WeakAssembler:
    """Integrates fields on a fixed grid against a fixed set of test functions.

    Parameters
    ----------
    axes: ``{"t": t, "x": x, ...}`` strictly increasing grid axes (names match ``tests``).
    tests: the test functions.
    max_order: highest derivative order needed per axis (``{"t": 1, "x": 4}``), so the
        per-axis weight matrices are computed once.
    """

    #: the dense path is used while K·S·(points off the first axis) stays below this
    dense_limit = 60_000_000

    def __init__(
        self,
        axes: Mapping[str, np.ndarray],
        tests: TestFunctionSet,
        max_order: Mapping[str, int],
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
        exact_moments: bool = True,
    ) -> None:
        if tuple(axes) != tests.names:
            raise SymweakError(
                f"Grid axes {tuple(axes)} differ from the test functions' {tests.names}."
            )
        self.names = tuple(axes)
        self.tests = tests
        self.dtype = dtype
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        self.shape = tuple(len(a) for a in axes.values())
        self.max_order = {n: int(max_order.get(n, 0)) for n in self.names}
        for order in self.max_order.values():
            tests.bump.check_order(order)
        self._weights: list[dict[int, torch.Tensor]] = []
        # stacked weights per (axis, orders): the training loops integrate the same
        # multi-indices every step, and stacking them anew was a copy of K·n·N values each time
        self._stacks: dict[tuple, torch.Tensor] = {}
        # index and sign tensors per call pattern, made once on the device: a tensor built
        # from Python values inside a training step is a host-to-device copy each step, which
        # a CUDA graph cannot hold (symweak._trainer.Step)
        self._consts: dict[tuple, torch.Tensor] = {}
        self._windows: list[tuple[np.ndarray, np.ndarray]] = []
        for i, (name, axis) in enumerate(axes.items()):
            axis = np.asarray(axis, dtype=np.float64)
            w = trapezoid_weights(axis)
            c = tests.centers[:, i][:, None]
            r = tests.radii[:, i][:, None]
            s = (axis[None, :] - c) / r
            per_order = {}
            base = w[None, :] * tests.bump.derivative(s, 0)
            for order in range(self.max_order[name] + 1):
                mat = w[None, :] * tests.bump.derivative(s, order) / r**order
                if order and exact_moments:
                    mat = _vanishing_moments(mat, base, s, min(order, 2))
                per_order[order] = torch.as_tensor(mat, dtype=dtype, device=self.device)
            self._weights.append(per_order)
            inside = np.abs(s) < 1.0
            lo = np.where(inside.any(1), inside.argmax(1), 0)
            hi = np.where(inside.any(1), axis.size - inside[:, ::-1].argmax(1), 0)
            self._windows.append((lo, hi))
            if np.any(inside.sum(1) < 3):
                bad = int(np.flatnonzero(inside.sum(1) < 3)[0])
                raise SymweakError(
                    f"Test function {bad} covers fewer than 3 grid points along {name}; use larger "
                    "radii or a finer grid."
                )

        # the mean fraction of the grid inside one test function's support
        frac = np.ones(len(tests))
        for (lo, hi), n in zip(self._windows, self.shape):
            frac = frac * (hi - lo) / n
        self.window_fraction = float(frac.mean())

    @property
    def n_tests(self) -> int:
        return len(self.tests)

    def weight(self, axis: int, order: int) -> torch.Tensor:
        """A_i^{(order)} of shape (K, N_i)."""
        return self._weights[axis][order]

    def stacked(self, axis: int, orders: Sequence[int], dim: int = 1) -> torch.Tensor:
        """The weights of ``orders`` along ``axis`` stacked at ``dim`` (1: (K, n, N_i), 2:
        (K, N_i, n)), built once per (axis, orders, dim)."""
        key = (axis, tuple(orders), dim)
        W = self._stacks.get(key)
        if W is None:
            if len(self._stacks) >= 256:  # a bound for callers that vary the orders
                self._stacks.clear()
            W = torch.stack([self.weight(axis, o) for o in orders], dim=dim).contiguous()
            self._stacks[key] = W
        return W

    def _const(self, key: tuple, values, dtype=None) -> torch.Tensor:
        """``torch.as_tensor(values)`` on the device, made once per ``key``."""
        out = self._consts.get(key)
        if out is None:
            if len(self._consts) >= 1024:  # a bound for callers that vary their patterns
                self._consts.clear()
            out = torch.as_tensor(values, dtype=dtype, device=self.device)
            self._consts[key] = out
        return out

    def _prepare(self, values, alphas):
        F = values if isinstance(values, torch.Tensor) else torch.as_tensor(values)
        F = F.to(dtype=self.dtype, device=self.device)
        if F.shape[1:] != self.shape:
            raise SymweakError(
                f"Field values have shape {tuple(F.shape[1:])}, grid is {self.shape}."
            )
        alphas = [tuple(int(a) for a in al) for al in alphas]
        for al in alphas:
            if len(al) != len(self.shape):
                raise SymweakError(
                    f"Multi-index {al} does not have one entry per axis {self.names}."
                )
            for name, a in zip(self.names, al):
                if a > self.max_order[name]:
                    raise SymweakError(
                        f"Derivative order {a} along {name} exceeds this assembler's maximum "
                        f"({self.max_order[name]})."
                    )
        return F, alphas

    def integrate(self, values, alphas: Sequence[Sequence[int]]) -> torch.Tensor:
        """``G`` of shape (K, S): ∫ (-1)^{|α_s|} D^{α_s}Φ_k · F_s for F of shape (S, *grid).

        ``alphas[s]`` is the multi-index of term s along the grid axes. ``values`` may be a
        NumPy array or a torch tensor (gradients flow through it).
        """
        F, alphas = self._prepare(values, alphas)
        if len(alphas) != F.shape[0]:
            raise SymweakError(f"{F.shape[0]} fields but {len(alphas)} multi-indices.")
        rest = int(np.prod(self.shape[1:])) if len(self.shape) > 1 else 1
        K, S = self.n_tests, F.shape[0]
        if K * S * rest <= self.dense_limit:
            G = self._dense(F, alphas)
        elif S * rest * 8 <= self.dense_limit and (
            self.window_fraction > 1 / 30 or (torch.is_grad_enabled() and F.requires_grad)
        ):
            # blocks of test functions through the dense contraction: memory stays below
            # dense_limit and the work stays in large matrix products, ~30× faster per
            # point than the per-window loop (101×300×150 grid, 8 columns, 250 test
            # functions covering 25 % of the grid each: 1.65 s against 7.31 s, see
            # `symweak bench speed --3d`; covering 0.3 % each, the windows win: 0.09 s
            # against 1.2 s). With gradients the blocks win at any size: the per-window loop's
            # backward is one small autograd node per test function (101×300×150, 8 columns,
            # 250 test functions covering 0.2 % each, forward+backward: 27.8 s per window,
            # 1.45 s in blocks ordered by support)
            G = self._dense(F, alphas, step=self.dense_limit // (S * rest))
        else:
            G = self._windowed(F, alphas)
        signs = self._const(
            ("signs", tuple(alphas)), [(-1.0) ** sum(al) for al in alphas], self.dtype
        )
        return G * signs[None, :]

    def integrate_outer(self, values, alphas: Sequence[Sequence[int]]) -> torch.Tensor:
        """``G`` of shape (K, S, A): every field s against every multi-index a (with sign).

        The contraction along the first axis is shared by all multi-indices with the same
        first entry, so this costs little more than one :meth:`integrate` call.
        """
        F, alphas = self._prepare(values, alphas)
        K, S = self.n_tests, F.shape[0]
        rest = int(np.prod(self.shape[1:])) if len(self.shape) > 1 else 1
        if K * S * rest > self.dense_limit:
            cols = [self.integrate(F, [al] * S) for al in alphas]
            return torch.stack(cols, dim=-1)
        out = [None] * len(alphas)
        groups: dict[int, list[int]] = {}
        for i, al in enumerate(alphas):
            groups.setdefault(al[0], []).append(i)
        for order0, idx in groups.items():
            # (K, S, N1, ...): the fields laid out (N0, S·N1·…) and one matrix product;
            # tensordot did the same product at 3.4 ms forward and backward against 2.4 ms
            # (250 test functions, 12 fields on 51 × 86, one thread), the same numbers
            M = F.movedim(1, 0).reshape(F.shape[1], -1)
            T0 = (self.weight(0, order0) @ M).view(K, S, *F.shape[2:])
            if len(self.shape) == 2:  # one batched product for every multi-index of the group
                W = self.stacked(1, [alphas[i][1] for i in idx], dim=2)  # (K, N1, n)
                T = torch.bmm(T0, W)  # (K, S, n)
                for j, i in enumerate(idx):
                    out[i] = T[:, :, j] * (-1.0) ** sum(alphas[i])
                continue
            for i in idx:
                T = T0
                for axis in range(1, len(self.shape)):
                    W = self.weight(axis, alphas[i][axis])  # (K, N_axis)
                    shape = [K, 1, W.shape[1]] + [1] * (T.dim() - 3)
                    T = (T * W.reshape(shape)).sum(dim=2)
                out[i] = T * (-1.0) ** sum(alphas[i])
        return torch.stack(out, dim=-1)

    def _dense(self, F: torch.Tensor, alphas, step: int | None = None) -> torch.Tensor:
        """G for every test function, ``step`` test functions at a time (all at once by
        default).

        The first axis is one matrix product against the fields laid out (N0, s·rest) once
        per group of terms sharing its order; every further axis is a batched matrix-vector
        product over (test function, term). Multiplying by the weights and summing instead
        made a temporary the size of the partial integrals per axis: on a 2-D full grid
        (sine-Gordon, σ 0.01) that churned ~140 GB of fresh pages, more time in the kernel
        zeroing them than in the arithmetic. In blocks, the test functions go in the order of
        their supports along the first axis and each block's product spans only the part of
        that axis its supports cover (Φ is exactly zero outside).
        """
        K, S = self.n_tests, F.shape[0]
        step = K if step is None else max(1, step)
        G = torch.empty((K, S), dtype=self.dtype, device=self.device)
        groups: dict[int, list[int]] = {}
        for s, al in enumerate(alphas):
            groups.setdefault(al[0], []).append(s)
        tail = tuple(self.shape[1:])
        # without gradients, one buffer takes every block's first product: a fresh block of
        # up to dense_limit values each time is as many pages for the kernel to zero
        reuse = not (torch.is_grad_enabled() and F.requires_grad)
        buf = None
        # in blocks, test functions ordered by where their supports lie along the first axis,
        # so that each block's product runs over the part of that axis its supports cover
        blocked = step < K
        lo0, hi0 = self._windows[0]
        order = np.lexsort((hi0, lo0)) if blocked else np.arange(K)
        for order0, idx in groups.items():
            n = len(idx)
            cols = self._const(("cols", tuple(idx)), idx)
            # (N0, n · N1 · N2 …): the fields once, in the layout the product wants
            M = F[cols].movedim(1, 0).reshape(F.shape[1], -1)
            A0 = self.weight(0, order0)
            W = [
                self.stacked(axis, [alphas[s][axis] for s in idx])
                for axis in range(1, len(self.shape))
            ]  # per further axis (K, n, N_axis)
            for k0 in range(0, K, step):
                rows = order[k0 : k0 + step]
                k = len(rows)
                # the block's supports along the first axis: Φ is zero outside them
                lo, hi = int(lo0[rows].min()), int(hi0[rows].max())
                rows = self._const(("rows", k0, step), rows) if blocked else slice(None)
                A = A0[rows][:, lo:hi]
                if reuse:
                    if buf is None or buf.numel() < step * M.shape[1]:
                        buf = torch.empty(step * M.shape[1], dtype=M.dtype, device=M.device)
                    out = buf[: k * M.shape[1]].view(k, M.shape[1])
                    T = torch.mm(A, M[lo:hi], out=out).view(k * n, *tail)  # (k·n, N1, N2, …)
                else:
                    T = (A @ M[lo:hi]).reshape(k * n, *tail)
                for axis, w in enumerate(W, start=2):
                    w = w[rows].reshape(k * n, 1, -1)  # (k·n, 1, N_axis)
                    if axis == len(self.shape):
                        # the last axis: a row-wise dot product; as k·n (1 × N)·(N × 1)
                        # products its backward was k·n tiny outer products
                        T = (T.reshape(k * n, -1) * w[:, 0]).sum(dim=1)
                    else:
                        T = torch.bmm(w, T.reshape(k * n, w.shape[2], -1)).reshape(k * n, -1)
                if blocked:
                    G[rows[:, None], cols[None, :]] = T.reshape(k, n)
                else:
                    G[:, cols] = T.reshape(k, n)
        return G

    def _windowed(self, F: torch.Tensor, alphas) -> torch.Tensor:
        K, S, D = self.n_tests, F.shape[0], len(self.shape)
        # Per axis: (S, K, N_i) weights gathered by each term's order.
        W = [
            torch.stack([self.weight(axis, alphas[s][axis]) for s in range(S)], dim=0)
            for axis in range(D)
        ]
        out = []
        for k in range(K):
            sl = [slice(None)] + [slice(int(lo[k]), int(hi[k])) for lo, hi in self._windows]
            T = F[tuple(sl)]  # (S, n0, n1, ...)
            for axis in range(D - 1, -1, -1):
                lo, hi = self._windows[axis]
                w = W[axis][:, k, int(lo[k]) : int(hi[k])]  # (S, n_axis)
                shape = [S] + [1] * axis + [w.shape[1]]
                T = (T * w.reshape(shape)).sum(dim=-1)
            out.append(T)
        return torch.stack(out, dim=0)

"""Per-half sufficient statistics of a weak system (:func:`._verdict.judge`'s resamples):
a support's log criterion, its held-out misfit and how loose a column is beside it, each
on every random half of the test functions as a small solve."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._sparse import LOG_FLOOR, LOG_PENALTY

#: a term added to the best support whose coefficient moves by more than this (standard
#: deviation over the halves, as a part of the left-hand side: |ξ_t|·‖G_t‖/‖b‖) is one the
#: data cannot exclude even though it explains nothing more: other terms of the support
#: stand in for it (u³ beside u and u² on data in [0, 1])
COLLINEAR = 0.3
#: a diffusion left out of an equation that damps nothing is uncertain at any part of ‖b‖
#: (not only above ``_verdict.UNSEEN``) when adding it to the best support lowers the misfit
#: on the held-out rows of the halves (paired, on a log scale) by at least this many
#: standard deviations of that drop: the data favour it though the complexity penalty
#: does not
FAVOURED = 2.0


class _Halves:
    """Per-half sufficient statistics of the unit-norm-scaled system."""

    def __init__(self, G, b, resamples: int, seed: int):
        self.scale = np.linalg.norm(G, axis=0)
        self.scale[self.scale == 0] = 1.0
        nb = np.linalg.norm(b) or 1.0
        self.nb = nb
        Gs, bs = G / self.scale, b / nb
        K = G.shape[0]
        rng = np.random.default_rng(seed)
        self.rows = [rng.permutation(K)[: max(K // 2, 1)] for _ in range(resamples)]
        self.A = np.stack([Gs[r].T @ Gs[r] for r in self.rows])
        self.v0 = np.stack([Gs[r].T @ bs[r] for r in self.rows])
        self.bb0 = np.array([bs[r] @ bs[r] for r in self.rows])
        self.pinv = np.stack([np.linalg.pinv(a, rcond=1e-12, hermitian=True) for a in self.A])
        self.Gs, self.bs = Gs, bs
        self.shift(None, 0.0)

    def base_stats(self, base: np.ndarray, col: int | None) -> tuple:
        """Per half: Gᵀ base, baseᵀ base and G_colᵀ base (what :meth:`shift` needs of a
        ``base``; computed once where many sizes c are tried on the same one)."""
        v = np.stack([self.Gs[r].T @ base[r] for r in self.rows])
        bb = np.array([base[r] @ base[r] for r in self.rows])
        cross = None if col is None else np.array([self.Gs[r, col] @ base[r] for r in self.rows])
        return v, bb, cross

    def shift(self, base: np.ndarray | None, c: float, col: int | None = None, stats=None) -> None:
        """Use b' = base + c·G_col (scaled units; ``base`` None: the data's own b);
        ``stats``: :meth:`base_stats` of ``base`` and ``col``, when already computed."""
        if base is None:
            self.v, self.bb = self.v0, self.bb0
        else:
            v, bb, cross = stats if stats is not None else self.base_stats(base, col)
            if col is not None and c:
                v = v + c * self.A[:, :, col]
                bb = bb + 2 * c * cross + c * c * self.A[:, col, col]
            self.v, self.bb = v, bb
        explained = np.einsum("ki,kij,kj->k", self.v, self.pinv, self.v)
        self.rss_full = np.maximum(self.bb - explained, 0.0)
        self.fitted = np.sqrt(np.maximum(explained, 1e-300))
        self.floor = np.maximum(0.1 * np.sqrt(self.rss_full) / self.fitted, LOG_FLOOR)

    def _solve(self, s: list) -> np.ndarray:
        """Least-squares coefficients (scaled units) of support ``s`` on every half."""
        A = self.A[:, s][:, :, s]
        v = self.v[:, s]
        try:
            return np.linalg.solve(A, v[..., None])[..., 0]
        except np.linalg.LinAlgError:
            return np.stack([np.linalg.lstsq(a, y, rcond=None)[0] for a, y in zip(A, v)])

    def scores(self, support: Sequence[int], weight: float) -> np.ndarray:
        """The log criterion of ``support`` on every half."""
        s = list(support)
        rss = self.bb - np.einsum("ki,ki->k", self._solve(s), self.v[:, s]) if s else self.bb
        misfit = np.sqrt(np.maximum(rss - self.rss_full, 0.0)) / self.fitted
        return np.log(misfit + self.floor) + LOG_PENALTY * weight

    def spread(self, support: Sequence[int], j: int) -> float:
        """Standard deviation over the halves of column ``j``'s coefficient in ``support``'s
        fit, as a part of the left-hand side (scaled units)."""
        s = list(support)
        return float(self._solve(s)[:, s.index(j)].std(ddof=1))

    def loose(self, support: Sequence[int], j: int) -> bool:
        """Whether the data leave column ``j``'s coefficient loose beside ``support`` (its
        spread over the halves at least :data:`COLLINEAR`): the others stand in for it."""
        return self.spread(sorted({*support, j}), j) >= COLLINEAR

    def held_out(self, support: Sequence[int]) -> float:
        """Mean relative misfit on the other half of each half the support is fitted on."""
        return float(np.mean(self.held_out_each(support)))

    def held_out_each(self, support: Sequence[int]) -> np.ndarray:
        """The relative misfit on the other half of each half the support is fitted on."""
        s = list(support)
        if not s:
            return np.ones(len(self.rows))
        K = self.Gs.shape[0]
        out = []
        for r in self.rows:
            rest = np.setdiff1d(np.arange(K), r)
            xi, *_ = np.linalg.lstsq(self.Gs[r][:, s], self.bs[r], rcond=None)
            nb = np.linalg.norm(self.bs[rest]) or 1.0
            out.append(np.linalg.norm(self.Gs[rest][:, s] @ xi - self.bs[rest]) / nb)
        return np.array(out)

    def favoured(self, support: Sequence[int], j: int) -> bool:
        """Whether adding column ``j`` to ``support`` lowers the held-out misfit of the
        halves by at least :data:`FAVOURED` standard deviations of the (log) drop."""
        drop = np.log(self.held_out_each(support)) - np.log(
            self.held_out_each(sorted({*support, j}))
        )
        return bool(drop.mean() > 0 and drop.mean() >= FAVOURED * drop.std(ddof=1))

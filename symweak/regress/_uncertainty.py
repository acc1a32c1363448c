"""How sure a sparse weak-form fit is: bootstrap intervals for the kept coefficients, and the
Pareto front of other supports (complexity × residual on held-out test functions).

Both work on the final system ``G ξ = b`` (rows are test functions), after the support is
chosen: the intervals re-estimate the kept coefficients, with the same estimator as the
point estimate (total least squares by default), on resampled rows; the front refits the
supports of greedy forward and backward selection on half of the rows and scores them on
the other half, so that a model is not judged on the rows it was fitted to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._errors import SymweakError
from ._mstls import backward_path, forward_path
from ._sparse import Fit, _check, _residual, _scales, _solve, tls_refit

#: rows of the test functions' overlap taken at a time by :func:`design_effect` (memory:
#: this many × K floats, not K²)
OVERLAP_BLOCK = 1024

__all__ = [
    "ParetoPoint",
    "bootstrap_intervals",
    "design_effect",
    "drop_one",
    "pareto_front",
    "refit_support",
]


def refit_support(G, b, support, tls: bool = True) -> np.ndarray:
    """Coefficients of ``support`` (all columns; 0 elsewhere): least squares, then total
    least squares when ``tls`` (the final fit's estimator)."""
    G, b = _check(G, b)
    return _estimate(G, b, support, tls)


def _estimate(G, b, support, tls: bool) -> np.ndarray:
    coef = _solve(G, b, np.asarray(support, dtype=int), _scales(G))
    if tls:
        coef = tls_refit(G, b, Fit(coef, _residual(G, b, coef), None, "ls")).coef
    return coef


def bootstrap_intervals(
    G,
    b,
    support: Sequence[int],
    *,
    resamples: int = 200,
    level: float = 0.95,
    seed: int = 0,
    tls: bool = True,
    estimator: Callable | None = None,
    overlap: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals ``(lo, hi)`` (one entry per column; 0 outside ``support``) of
    the coefficients refitted on ``resamples`` row resamples drawn with replacement.

    ``estimator(G, b, support) -> coef`` replaces the default (least squares on the support,
    then total least squares when ``tls``): use the one that gave the point estimate.
    ``overlap``: the rows' correlation, as :func:`design_effect` takes it (test functions
    whose supports overlap, :meth:`~symweak.weak.TestFunctionSet.overlap`); resampling rows
    as if independent understates the spread, so each side of a coefficient's interval is
    stretched about the point estimate by the square root of its :func:`design_effect`
    (never narrowed).
    """
    G, b = _check(G, b)
    support = np.asarray(support, dtype=int)
    if not 0 < level < 1:
        raise SymweakError(f"level must be in (0, 1), got {level!r}.")
    if resamples < 10:
        raise SymweakError(f"resamples must be at least 10, got {resamples!r}.")
    lo, hi = np.zeros(G.shape[1]), np.zeros(G.shape[1])
    if support.size == 0:
        return lo, hi
    fit = estimator or (lambda g, y, s: _estimate(g, y, s, tls))
    rng = np.random.default_rng(seed)
    K = G.shape[0]
    draws = np.empty((resamples, support.size))
    for i in range(resamples):
        rows = rng.integers(0, K, K)
        draws[i] = fit(G[rows], b[rows], support)[support]
    tail = (1 - level) / 2
    lo[support] = np.quantile(draws, tail, axis=0)
    hi[support] = np.quantile(draws, 1 - tail, axis=0)
    if overlap is not None:
        stretch = np.sqrt(np.maximum(design_effect(G, b, support, overlap), 1.0))
        mid = fit(G, b, support)[support]
        lo[support] = np.minimum(lo[support], mid - (mid - lo[support]) * stretch)
        hi[support] = np.maximum(hi[support], mid + (hi[support] - mid) * stretch)
    return lo, hi


def design_effect(G, b, support: Sequence[int], overlap) -> np.ndarray:
    """Per column of ``support``: the variance of its least-squares coefficient when the
    rows' errors correlate as ``overlap`` says, over the variance when they are independent
    (a spatial sandwich estimate, Σ w_ij r_i r_j g_i g_jᵀ against Σ r_i² g_i g_iᵀ, r the
    residuals). Above 1 where neighbouring test functions err alike; about 1 where their
    errors cancel. ``overlap``: the (K, K) correlation, or ``f(rows)`` giving those rows of
    it (taken :data:`OVERLAP_BLOCK` rows at a time, e.g.
    :meth:`~symweak.weak.TestFunctionSet.overlap`)."""
    G, b = _check(G, b)
    K = G.shape[0]
    rows_of = overlap if callable(overlap) else _rows_of(overlap, K)
    support = np.asarray(support, dtype=int)
    Gs = G[:, support] / _scales(G)[support]
    bread = np.linalg.pinv(Gs.T @ Gs)
    r = b - Gs @ (bread @ (Gs.T @ b))
    U = Gs * r[:, None]
    meat = np.zeros((support.size, support.size))
    for start in range(0, K, OVERLAP_BLOCK):
        rows = np.arange(start, min(start + OVERLAP_BLOCK, K))
        block = np.asarray(rows_of(rows), dtype=float)
        if block.shape != (rows.size, K):
            raise SymweakError(
                f"overlap must give ({rows.size}, {K}) for {rows.size} rows, got {block.shape}."
            )
        meat += U[rows].T @ block @ U
    independent = np.einsum("ij,jk,ki->i", bread, U.T @ U, bread)
    correlated = np.einsum("ij,jk,ki->i", bread, meat, bread)
    return correlated / np.clip(independent, 1e-300, None)


def _rows_of(overlap, K: int) -> Callable:
    W = np.asarray(overlap, dtype=float)
    if W.shape != (K, K):
        raise SymweakError(
            f"overlap must be ({K}, {K}), one row and column per test function; got {W.shape}."
        )
    return lambda rows: W[rows]


@dataclass
class ParetoPoint:
    """A support on the front: its coefficients (fitted on all rows), complexity, and
    relative residual on the held-out rows."""

    support: tuple[int, ...]
    coef: np.ndarray
    complexity: float
    held_out: float
    chosen: bool = False


def pareto_front(
    G,
    b,
    *,
    chosen: Sequence[int] = (),
    complexity: Sequence[float] | None = None,
    keep: Sequence[int] = (),
    seed: int = 0,
    tls: bool = True,
    max_terms: int = 12,
) -> list[ParetoPoint]:
    """Supports no simpler support beats on held-out test functions, simplest first.

    Candidates: the nested supports of greedy backward and forward selection (one per size,
    up to ``max_terms``), ``chosen``, and ``chosen`` less each of its terms (the equation
    without a doubtful term is what a reader asks for first, and the greedy paths need not
    pass through it). Each is fitted on a random half of the rows and
    scored by ‖G_B ξ − b_B‖/‖b_B‖ on the other half; a support is on the front when every
    simpler one scores worse. ``chosen`` is always listed (marked), even when it is not on
    the front, so that a reader sees where the selection landed.
    """
    G, b = _check(G, b)
    K, S = G.shape
    weights = np.ones(S) if complexity is None else np.asarray(complexity, dtype=float)
    chosen_key = tuple(sorted(int(j) for j in chosen))
    supports = {chosen_key} if chosen_key else set()
    kept = {int(k) for k in keep}
    supports.update(
        tuple(j for j in chosen_key if j != drop)
        for drop in chosen_key
        if drop not in kept and len(chosen_key) > 1
    )
    for path in (backward_path(G, b, keep), forward_path(G, b, keep)):
        supports.update(tuple(sorted(s)) for s in path if 0 < len(s) <= max_terms)
    half_a, half_b = _halves(K, seed)
    points = []
    for s in supports:
        held = _held_out(G, b, s, half_a, half_b, tls)
        points.append(ParetoPoint(s, _estimate(G, b, s, tls), float(weights[list(s)].sum()), held))
    points.sort(key=lambda p: (p.complexity, p.held_out))
    front, best = [], np.inf
    for p in points:
        p.chosen = p.support == chosen_key
        if p.held_out < best - 1e-12:
            front.append(p)
            best = p.held_out
        elif p.chosen:
            front.append(p)
    return front


def _halves(K: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows a support is fitted on and the rows it is scored on (seeded)."""
    order = np.random.default_rng(seed).permutation(K)
    return order[: K // 2], order[K // 2 :]


def _held_out(G, b, support, fit_rows, score_rows, tls: bool) -> float:
    """‖G ξ − b‖/‖b‖ on ``score_rows`` of ``support`` fitted on ``fit_rows`` (1 for an
    empty support: nothing of b is explained)."""
    if not len(support):
        return 1.0
    coef = _estimate(G[fit_rows], b[fit_rows], support, tls)
    nb = np.linalg.norm(b[score_rows]) or 1.0
    return float(np.linalg.norm(G[score_rows] @ coef - b[score_rows]) / nb)


def drop_one(G, b, support: Sequence[int], *, seed: int = 0, tls: bool = True) -> dict:
    """``{j: held-out residual of support without j}`` for each column j of ``support``,
    on the same halves of the rows as :func:`pareto_front` with the same ``seed`` (so the
    values compare with the front's ``held_out``, and the chosen support's own value there).

    What a term's absence costs: near the support's own held-out residual, the data hardly
    need the term (the rest of the equation absorbs it); well above it, they do. A single
    term's absence leaves all of b unexplained (1.0).
    """
    G, b = _check(G, b)
    support = [int(j) for j in support]
    half_a, half_b = _halves(G.shape[0], seed)
    return {
        j: _held_out(G, b, [k for k in support if k != j], half_a, half_b, tls) for j in support
    }

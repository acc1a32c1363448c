"""Least squares with column scaling, sequential thresholding, and a threshold chosen without
the truth (WSINDy's MSTLS loss, or an information criterion).

All in NumPy float64. Coefficients are reported on the original (unscaled) columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._errors import SymweakError

__all__ = [
    "Fit",
    "lstsq",
    "stlsq",
    "tls_refit",
]


@dataclass
class Fit:
    """A regression result: coefficients on the original columns and how they were chosen."""

    coef: np.ndarray
    residual: float  # ‖Gξ - b‖ / ‖b‖
    threshold: float | None = None
    method: str = "lstsq"
    path: list[dict] = field(default_factory=list)
    #: stability selection: each column's inclusion probability over the resamples
    probabilities: np.ndarray | None = None
    #: the selection's own support (columns) where the fit was replaced by the one the
    #: verdicts prefer: their search starts from both
    selected: tuple | None = None

    @property
    def support(self) -> np.ndarray:
        return np.flatnonzero(self.coef != 0.0)


CRITERIA = ("wsindy", "elbow", "bic", "log")
# criterion="log": each unit of complexity must divide the weak-form residual by e^0.5 ≈ 1.65
LOG_PENALTY = 0.5
# criterion="log": misfits below this (0.1 % of the fitted left-hand side) are not told apart
LOG_FLOOR = 1e-3
# supports of up to this many terms are improved by single swaps in mstls(backward=True)
SWAP_SIZES = 8
# tls_refit: total least squares only where the smallest singular value of the (scaled)
# columns is at least this many times the one of [columns, b] (the error estimate)
TLS_GAP = 2.0


def _check(G: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    G = np.asarray(G, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if G.ndim != 2 or G.shape[0] != b.size:
        raise SymweakError(f"G has shape {G.shape} but b has {b.size} rows.")
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(b))):
        raise SymweakError("The weak-form system contains NaN or inf; check the data and library.")
    if G.shape[0] < G.shape[1]:
        raise SymweakError(
            f"{G.shape[0]} test functions for {G.shape[1]} candidate terms: the system is "
            "underdetermined. Use more test functions (n_tests) or fewer terms."
        )
    return G, b


def _scales(G: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(G, axis=0)
    return np.where(norms > 0, norms, 1.0)


def _solve(G: np.ndarray, b: np.ndarray, cols: np.ndarray, scales: np.ndarray) -> np.ndarray:
    coef = np.zeros(G.shape[1])
    if cols.size:
        A = G[:, cols] / scales[cols]
        z, *_ = np.linalg.lstsq(A, b, rcond=None)
        coef[cols] = z / scales[cols]
    return coef


def _residual(G, b, coef) -> float:
    nb = np.linalg.norm(b)
    return float(np.linalg.norm(G @ coef - b) / (nb if nb > 0 else 1.0))


def lstsq(G, b) -> Fit:
    """Least squares with unit-norm column scaling (for conditioning)."""
    G, b = _check(G, b)
    coef = _solve(G, b, np.arange(G.shape[1]), _scales(G))
    return Fit(coef, _residual(G, b, coef))


def tls_refit(G, b, fit: Fit, gap: float = TLS_GAP) -> Fit:
    """``fit``'s support refitted by total least squares (errors in G as well as in b).

    In the weak form every column, like b, is an integral of the surrogate (or of the data),
    so its error is in the columns too; least squares lays all of it on b and shrinks the
    coefficients towards zero as the error grows (regression dilution: Burgers from 10 % of
    the grid with 20 % noise, -0.4895 d_x(u²) + 0.0984 u_xx by least squares, -0.5026 and
    0.1012 by this; on the clean rows' systems both agree within 6e-4). With the columns and
    b scaled to unit norm, the coefficients come from the right singular vector of [A, b]'s
    smallest singular value s (equivalently (AᵀA - s²I)⁻¹Aᵀb). That subtracts s², the
    error's estimate, from AᵀA's spectrum; it is done only when A's smallest singular value
    is at least ``gap``·s (each eigenvalue changed by at most 1/gap²) — otherwise the support
    explains too little of b for the correction to be trusted, and the least-squares fit is
    returned unchanged.
    The residual is the refitted coefficients' ‖Gξ - b‖/‖b‖; ``method`` gains "+tls".
    """
    G, b = _check(G, b)
    cols = fit.support
    if cols.size == 0:
        return fit
    A = G[:, cols]
    sa = np.linalg.norm(A, axis=0)
    sb = np.linalg.norm(b)
    if np.any(sa == 0) or sb == 0:
        return fit
    An = A / sa
    s_cols = np.linalg.svd(An, compute_uv=False)[-1]
    _, s_all, vt = np.linalg.svd(np.column_stack([An, b / sb]), full_matrices=False)
    v = vt[-1]
    if not s_cols >= gap * s_all[-1] or v[-1] == 0:
        return fit
    coef = np.zeros(G.shape[1])
    coef[cols] = -v[:-1] / v[-1] * sb / sa
    return Fit(coef, _residual(G, b, coef), fit.threshold, fit.method + "+tls", fit.path)


def stlsq(G, b, threshold: float, max_iter: int = 25, keep=()) -> Fit:
    """Sequentially thresholded least squares on scale-free coefficients.

    A term is dropped when its contribution is small: ``|ξ_j|·‖G_j‖/‖b‖ < threshold`` or
    (WSINDy's upper bound) ``> 1/threshold``. Columns in ``keep`` are never dropped.
    """
    G, b = _check(G, b)
    scales = _scales(G)
    nb = np.linalg.norm(b) or 1.0
    keep = np.asarray(sorted(set(int(k) for k in keep)), dtype=int)
    active = np.arange(G.shape[1])
    coef = _solve(G, b, active, scales)
    for _ in range(max_iter):
        rel = np.abs(coef) * scales / nb
        ok = (rel >= threshold) & (rel <= 1.0 / threshold if threshold > 0 else True)
        if keep.size:
            ok[keep] = True
        new = np.flatnonzero(ok & (coef != 0.0) | np.isin(np.arange(G.shape[1]), keep))
        if np.array_equal(new, active):
            break
        active = new
        coef = _solve(G, b, active, scales)
    return Fit(coef, _residual(G, b, coef), threshold, "stlsq")


def log_scorer(G: np.ndarray, b: np.ndarray, full: np.ndarray, weights: np.ndarray, penalty):
    """The ``log`` criterion of :func:`mstls` as a function of a coefficient vector:
    log(‖G(ξ - ξ_LS)‖/‖Gξ_LS‖ + m₀) + ``penalty`` × the summed ``weights`` of ξ's support,
    with ``full`` = ξ_LS and m₀ = max(0.1·‖Gξ_LS - b‖/‖Gξ_LS‖, ``LOG_FLOOR``)."""
    ref = np.linalg.norm(G @ full) or 1.0
    floor = max(0.1 * np.linalg.norm(G @ full - b) / ref, LOG_FLOOR)

    def score(coef: np.ndarray) -> float:
        misfit = np.linalg.norm(G @ (coef - full)) / ref
        return float(np.log(misfit + floor + 1e-300) + penalty * weights[coef != 0.0].sum())

    return score

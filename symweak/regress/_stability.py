"""Stability selection over a sparse fit (Meinshausen & Bühlmann 2010, for weak forms).

The rows of a weak system G ξ = b are test functions. The selection is run again on B
random halves of them; each term's inclusion probability is the fraction of halves whose
selected model holds it; the kept support is the terms at or above a threshold (plus the
terms the constraints keep), refitted on all rows. A term that only some test functions
call for — one that fits the noise or the surrogate's error in a corner of the domain — falls
below the threshold; a term every half needs stays at 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from .._errors import SymweakError
from ._sparse import LOG_PENALTY, Fit, _check, _residual, _scales, _solve, log_scorer
from ._uncertainty import refit_support

__all__ = ["drop_minor_terms", "majority_support", "prefer_polynomials", "stability_selection"]


def stability_selection(
    G,
    b,
    select: Callable[[np.ndarray, np.ndarray], Fit],
    resamples: int = 20,
    threshold: float = 0.6,
    fraction: float = 0.5,
    keep=(),
    seed: int = 0,
    majority: bool = True,
) -> Fit:
    """Keep the terms that ``select(G_half, b_half)`` picks on at least ``threshold`` of
    ``resamples`` random halves (``fraction``) of the rows; refit them on all rows by least
    squares. The returned fit's ``probabilities`` holds each column's inclusion probability
    and ``path`` the supports of the halves. With no term at the threshold, the selection on
    all rows is returned (with the probabilities).

    With ``majority`` (default), a support that more than half of the halves chose exactly
    is kept whole: the per-term threshold would otherwise split a model the halves agree on
    when a second, coherent model takes the other votes. Gray–Scott's w equation (10 % of
    the grid, σ = 0) had its true four terms on 11 of 20 halves and v w, v w², w,
    d_xx(sin w) on 8: each term but w then stood at 0.55 or 0.45, and the threshold left
    w_t = 0.024 w, a support no half had chosen. Terms outside a majority support are on
    fewer than half the halves, so this only adds terms between one half and ``threshold``."""
    G, b = _check(G, b)
    K, S = G.shape
    if not (isinstance(resamples, int) and resamples >= 1):
        raise SymweakError(f"resamples must be an integer >= 1, got {resamples!r}.")
    if not 0.0 < threshold <= 1.0:
        raise SymweakError(f"threshold must be in (0, 1], got {threshold!r}.")
    if not 0.0 < fraction < 1.0:
        raise SymweakError(f"fraction must be in (0, 1), got {fraction!r}.")
    m = max(round(fraction * K), min(K, S + 1))
    rng = np.random.default_rng(seed)
    counts = np.zeros(S)
    supports = []
    for _ in range(resamples):
        rows = np.sort(rng.choice(K, size=m, replace=False))
        fit = select(G[rows], b[rows])
        counts[fit.support] += 1
        supports.append([int(j) for j in fit.support])
    probabilities = counts / resamples
    chosen = set(np.flatnonzero(probabilities >= threshold - 1e-12).tolist())
    if majority:
        chosen |= majority_support(supports)
    chosen |= {int(j) for j in keep}
    if not chosen:
        fit = select(G, b)
    else:
        cols = np.array(sorted(chosen), dtype=int)
        coef = _solve(G, b, cols, _scales(G))
        fit = Fit(coef, _residual(G, b, coef), None, "stability")
    fit.method = f"stability[{resamples}x{fraction:g}, p>={threshold:g}]"
    fit.path = [{"support": s} for s in supports]
    fit.probabilities = probabilities
    return fit


def majority_support(supports: list) -> set:
    """The support (column indices) that more than half of ``supports`` are, else empty."""
    counts = Counter(tuple(sorted(int(j) for j in sup)) for sup in supports)
    if not counts:
        return set()
    best, n = counts.most_common(1)[0]
    return set(best) if 2 * n > len(supports) else set()


def _support_scorer(G, b, complexity, penalty):
    """(score, column scales): ``score(support)`` is the ``log`` criterion of the least-
    squares fit on ``support`` (misfit against the complete fit + ``penalty`` × the summed
    ``complexity`` weights)."""
    S = G.shape[1]
    weights = np.ones(S) if complexity is None else np.asarray(complexity, dtype=float)
    scales = _scales(G)
    log_score = log_scorer(G, b, _solve(G, b, np.arange(S), scales), weights, penalty)

    def score(sup):
        return log_score(_solve(G, b, np.asarray(sorted(sup), dtype=int), scales))

    return score, scales


def prefer_polynomials(
    G,
    b,
    fit: Fit,
    alternatives: dict,
    select: Callable[[np.ndarray, np.ndarray, list], Fit],
    slack: float = 0.25,
    complexity=None,
    penalty: float = LOG_PENALTY,
    differs: Callable[[int, list], bool] | None = None,
) -> Fit:
    """Replace a term by its polynomial expansion where that explains the weak form about
    as well at about the same complexity. ``alternatives[j]`` lists the columns that expand
    column j (for D^α f(u): D^α u, D^α u², D^α u³); for each j in ``fit``'s support,
    ``select(G[:, cols], b, cols)`` chooses again among the rest of the support and j's
    alternatives (``cols``), and that support is taken when its score is at most
    log(1 + ``slack``) above the one of ``fit``'s support (the first support's, so that
    replacements do not drift). The score is the ``log`` criterion of :func:`mstls`:
    log(misfit against the complete least-squares fit) + ``penalty`` × the summed
    ``complexity`` weights — a residual alone would let the noise hide a true tanh u behind
    −0.90 u + 0.32 u². A function without fitted constants can stand in for a polynomial as
    well as one with them: u and sin u together write u − u³/6 over a small range (−6.35 u +
    7.49 sin u for 1.2 u − 1.2 u³). The returned fit keeps ``fit``'s probabilities, and
    ``method`` gains "+poly" when a term was replaced. ``differs(j, chosen)`` (the chosen
    alternatives of j) says that the replacement changes the function over the data; then
    it is taken only when it scores no worse than ``fit``'s support (no slack)."""
    G, b = _check(G, b)
    support = [int(j) for j in fit.support]
    if not support or not any(j in alternatives for j in support):
        return fit
    score, scales = _support_scorer(G, b, complexity, penalty)
    reference = score(support)
    changed = False
    for j in sorted(set(support) & set(alternatives)):
        if j not in support:
            continue
        cols = sorted((set(support) - {j}) | set(alternatives[j]))
        if not alternatives[j] or len(cols) >= G.shape[0]:
            continue
        sub = select(G[:, cols], b, cols)
        new = sorted(cols[i] for i in sub.support)
        allowed = np.log1p(slack)
        chosen = [c for c in new if c in alternatives[j]]
        if new and differs is not None and score(new) <= reference + allowed and differs(j, chosen):
            allowed = 0.0
        if new and score(new) <= reference + allowed:
            support, changed = new, True
    if not changed:
        return fit
    coef = _solve(G, b, np.asarray(support, dtype=int), scales)
    out = Fit(coef, _residual(G, b, coef), fit.threshold, fit.method + "+poly", fit.path)
    out.probabilities = fit.probabilities
    return out


def prefer_neighbours(
    G,
    b,
    fit: Fit,
    neighbours: dict,
    complexity=None,
    penalty: float = LOG_PENALTY,
) -> Fit:
    """Compare each term of ``fit``'s support with its neighbours directly: for j in the
    support, ``neighbours[j]`` (columns, e.g. the next lower and higher power under the same
    derivative: d_xx(u²) and d_xx(u⁴) for d_xx(u³)) each replaces j in turn, and the
    support that scores best on the ``log`` criterion is kept (ties keep ``fit``'s). A
    stability selection keeps what most halves chose; where a power law's neighbours fit
    alike the halves split between them, and the whole system tells them apart better.
    ``method`` gains "+neighbour" when a term was swapped."""
    G, b = _check(G, b)
    support = [int(j) for j in fit.support]
    if not any(j in neighbours for j in support):
        return fit
    score, scales = _support_scorer(G, b, complexity, penalty)
    best, changed = score(support), False
    for j in list(support):
        trials = [
            [i if c == j else c for c in support] for i in neighbours.get(j, ()) if i not in support
        ]
        for trial in trials:
            s = score(trial)
            if s < best:
                best, support, changed = s, trial, True
    if not changed:
        return fit
    coef = _solve(G, b, np.asarray(sorted(support), dtype=int), scales)
    out = Fit(coef, _residual(G, b, coef), fit.threshold, fit.method + "+neighbour", fit.path)
    out.probabilities = fit.probabilities
    return out


def drop_minor_terms(
    G,
    b,
    fit: Fit,
    ratio: float,
    keep=(),
    refit: Callable[[np.ndarray, np.ndarray, list], np.ndarray] | None = None,
) -> Fit:
    """Drop the terms that explain less of the weak form than the fit leaves unexplained:
    while the smallest part ‖G_j ξ_j‖ of a term j (not in ``keep``) is below ``ratio`` ×
    ‖Gξ − b‖, j is dropped and the rest refitted (``refit(G, b, support)`` -> coefficients
    on all columns; least squares by default). A selection measures each model against the
    complete least-squares fit, which on a clean surrogate also fits the surrogate's own
    error, so a term with a tiny coefficient can pass it by fitting that error (KdV variant
    at σ = 0: −0.001 u² beside −1.49 d_x(u²), its part 0.16 of the residual; the true
    terms' parts are 25 and 100). The last term of a support is never dropped. ``ratio`` 0
    returns ``fit`` itself; otherwise the returned fit keeps ``fit``'s probabilities and its
    ``method`` gains "+minor" when a term was dropped."""
    G, b = _check(G, b)
    if not (isinstance(ratio, int | float) and np.isfinite(ratio) and ratio >= 0):
        raise SymweakError(f"ratio must be a number >= 0, got {ratio!r}.")
    if ratio == 0:
        return fit
    if refit is None:
        refit = lambda G, b, support: refit_support(G, b, support, tls=False)  # noqa: E731
    kept = {int(j) for j in keep}
    coef = np.asarray(fit.coef, dtype=float).copy()
    dropped = False
    while True:
        support = [int(j) for j in np.flatnonzero(coef)]
        free = [j for j in support if j not in kept]
        if len(support) < 2 or not free:
            break
        unexplained = np.linalg.norm(G @ coef - b)
        parts = {j: abs(coef[j]) * np.linalg.norm(G[:, j]) for j in free}
        j = min(parts, key=parts.get)
        if parts[j] >= ratio * unexplained:
            break
        coef = np.asarray(refit(G, b, [i for i in support if i != j]), dtype=float)
        dropped = True
    if not dropped:
        return fit
    out = Fit(coef, _residual(G, b, coef), fit.threshold, fit.method + "+minor", fit.path)
    out.probabilities = fit.probabilities
    return out

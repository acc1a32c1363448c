"""Stability selection over a sparse fit (Meinshausen & Bühlmann 2010, for weak forms).

The rows of a weak system G ξ = b are test functions. The selection is run again on B
random halves of them; each term's inclusion probability is the fraction of halves whose
selected model holds it; the kept support is the terms at or above a threshold (plus the
terms the constraints keep), refitted on all rows. A term that only some test functions
call for — one that fits the noise or the surrogate's error in a corner of the domain — falls
below the threshold; a term every half needs stays at 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._errors import SymweakError
from ._sparse import Fit, _check, _residual, _scales, _solve

__all__ = ["stability_selection"]


def stability_selection(
    G,
    b,
    select: Callable[[np.ndarray, np.ndarray], Fit],
    resamples: int = 20,
    threshold: float = 0.6,
    fraction: float = 0.5,
    keep=(),
    seed: int = 0,
) -> Fit:
    """Keep the terms that ``select(G_half, b_half)`` picks on at least ``threshold`` of
    ``resamples`` random halves (``fraction``) of the rows; refit them on all rows by least
    squares. The returned fit's ``probabilities`` holds each column's inclusion probability
    and ``path`` the supports of the halves. With no term at the threshold, the selection on
    all rows is returned (with the probabilities)."""
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

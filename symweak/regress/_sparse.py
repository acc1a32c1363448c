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
    "backward_path",
    "best_within",
    "family_swaps",
    "forward_path",
    "lstsq",
    "mstls",
    "stlsq",
    "swap_refine",
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


def backward_path(G, b, keep=()) -> list[tuple[int, ...]]:
    """Nested supports from greedy backward elimination (largest to smallest).

    At each step the term whose removal raises the residual least is dropped; for least
    squares that increase is exactly ξ_j² / [(GᵀG)⁻¹]_jj, so one solve per step suffices.
    Unlike thresholding, every step refits, so collinear columns do not hide a true term.
    """
    G, b = _check(G, b)
    scales = _scales(G)
    A = G / scales
    keep = set(int(k) for k in keep)
    active = list(range(G.shape[1]))
    path = [tuple(active)]
    while len(active) > max(1, len(keep)):
        sub = A[:, active]
        gram = sub.T @ sub
        try:
            inv = np.linalg.inv(gram)
        except np.linalg.LinAlgError:
            inv = np.linalg.pinv(gram)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            z = inv @ (sub.T @ b)
            # a singular Gram matrix makes some costs undefined (nan): those terms go first
            cost = np.nan_to_num(z**2 / np.maximum(np.diag(inv), 1e-300), nan=0.0)
        order = np.argsort(cost)
        drop = next((int(i) for i in order if active[int(i)] not in keep), None)
        if drop is None:
            break
        active = active[:drop] + active[drop + 1 :]
        path.append(tuple(active))
    return path


def forward_path(G, b, keep=(), max_terms: int = 40) -> list[tuple[int, ...]]:
    """Nested supports from greedy forward selection (smallest to largest).

    Each step adds the term that lowers the least-squares residual most, computed exactly by
    projecting every column onto the orthogonal complement of the active set.
    """
    G, b = _check(G, b)
    A = G / _scales(G)
    active = sorted(set(int(k) for k in keep))
    path = [tuple(sorted(active))] if active else []
    Q = np.zeros((A.shape[0], 0))
    if active:
        Q, _ = np.linalg.qr(A[:, active])
    r = b - Q @ (Q.T @ b)
    for _ in range(min(max_terms, A.shape[1]) - len(active)):
        P = A - Q @ (Q.T @ A)
        norms = np.einsum("ij,ij->j", P, P)
        gain = np.where(norms > 1e-24, (P.T @ r) ** 2 / np.maximum(norms, 1e-300), -1.0)
        gain[active] = -1.0
        j = int(np.argmax(gain))
        if gain[j] <= 0:
            break
        q = P[:, j] / np.sqrt(norms[j])
        Q = np.column_stack([Q, q])
        r = r - q * (q @ r)
        active.append(j)
        path.append(tuple(sorted(active)))
    return path


def swap_refine(G, b, support, keep=(), max_passes: int = 20) -> tuple[int, ...]:
    """Improve a support of fixed size by single swaps (one term out, one in), taking the
    best swap each pass while the least-squares residual drops: greedy forward/backward
    paths can miss the best pair or triple when columns are nearly collinear (sparse
    Burgers: the path went through d_x(u³) and never visited {d_x(u²), u_xx}, whose
    residual was seven times smaller)."""
    G, b = _check(G, b)
    A = G / _scales(G)
    keep = set(int(k) for k in keep)
    current = sorted(set(int(i) for i in support))

    def rss(cols):
        sub = A[:, cols]
        z, *_ = np.linalg.lstsq(sub, b, rcond=None)
        r = sub @ z - b
        return float(r @ r)

    best = rss(current) if current else float(b @ b)
    for _ in range(max_passes):
        move = None
        for out in current:
            if out in keep:
                continue
            rest = [c for c in current if c != out]
            for new in range(A.shape[1]):
                if new in current:
                    continue
                cand = sorted([*rest, new])
                value = rss(cand)
                if value < best * (1 - 1e-9):
                    best, move = value, cand
        if move is None:
            break
        current = move
    return tuple(current)


def _refined_supports(G, b, supports, keep, sizes: int, seeds: int = 3) -> list[tuple]:
    """Swap-refined supports of each size up to ``sizes``, from the best ``seeds`` supports
    of that size seen so far and from the best one-term-smaller subset of the refined
    support of the next size (a backward step after refining)."""
    scales = _scales(G)

    def residual(sup):
        return _residual(G, b, _solve(G, b, np.asarray(sup, dtype=int), scales))

    by_size: dict[int, dict[tuple, float]] = {}
    for sup in supports:
        sup = tuple(sorted(int(i) for i in sup))
        if 0 < len(sup) <= sizes + 1:
            by_size.setdefault(len(sup), {})[sup] = 0.0
    for sups in by_size.values():
        for sup in sups:
            sups[sup] = residual(sup)
    out = []
    above = None  # the refined support of size k + 1
    for k in range(min(sizes, max(by_size, default=0)), 0, -1):
        starts = sorted(by_size.get(k, {}), key=lambda sup: by_size[k][sup])[:seeds]
        if above is not None:
            drops = [tuple(c for c in above if c != j) for j in above if j not in set(keep)]
            if drops:
                starts.append(min(drops, key=residual))
        refined = {swap_refine(G, b, sup, keep) for sup in starts}
        out.extend(refined)
        above = min(refined, key=residual) if refined else None
    return out


def _path_supports(G, b, keep, extra=()) -> tuple[list, list]:
    """(the supports of the greedy backward and forward paths followed by their
    swap-refined supports, the refined ones alone): the best supports of each small size,
    seeded by the paths and by ``extra`` supports, improved by single swaps."""
    paths = [*backward_path(G, b, keep), *forward_path(G, b, keep)]
    refined = _refined_supports(G, b, paths + list(extra), keep, SWAP_SIZES)
    return paths + refined, refined


def best_within(G, b, weights, budget: float, keep=()) -> tuple[tuple[int, ...], float]:
    """The support of least relative residual ‖Gξ - b‖/‖b‖ among those whose summed
    ``weights`` are at most ``budget``: the supports of the greedy forward and backward
    paths and their swap-refined supports of each size (as :func:`mstls` sees them), each
    refitted by least squares. ``((), 1.0)`` when no support fits the budget."""
    G, b = _check(G, b)
    weights = np.asarray(weights, dtype=float)
    scales = _scales(G)
    supports, _ = _path_supports(G, b, keep)
    best, best_res = (), 1.0
    for sup in dict.fromkeys(tuple(sorted(int(i) for i in s)) for s in supports):
        if not sup or weights[list(sup)].sum() > budget + 1e-9:
            continue
        res = _residual(G, b, _solve(G, b, np.asarray(sup, dtype=int), scales))
        if res < best_res:
            best, best_res = sup, res
    return best, best_res


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


def family_swaps(supports, families, keep=()) -> list[tuple[int, ...]]:
    """Supports with one function of the fields replaced by another in every term that
    holds it: ``families[j]`` is column j's ``(F, α)`` (any hashable keys), and a support
    holding F under α₁, α₂, … becomes one holding F' under the same α₁, α₂, … wherever the
    library has all of those columns. Single swaps cannot make such a move when a family
    stands in for another as a whole: on Kuramoto–Sivashinsky from 10 % of the grid at
    σ = 0.2 the selection kept d_x(u²) + d_xx(sin u) + d_xxxx(sin u), and every single
    swap towards u_xx + u_xxxx raised the residual (0.28 -> 0.39) while the pair lowered
    it (0.24)."""
    where = {fam: j for j, fam in enumerate(families)}
    functions = list(dict.fromkeys(f for f, _ in families))
    keep = set(int(k) for k in keep)
    out = []
    for sup in supports:
        sup = tuple(sorted(int(j) for j in sup))
        present = list(dict.fromkeys(families[j][0] for j in sup if j not in keep))
        for f in present:
            for g in functions:
                if g == f:
                    continue
                new = []
                for j in sup:
                    fj, aj = families[j]
                    new.append(where.get((g, aj), -1) if fj == f and j not in keep else j)
                if -1 not in new:
                    out.append(tuple(sorted(set(new))))
    return list(dict.fromkeys(out))


def mstls(
    G,
    b,
    thresholds=None,
    keep=(),
    criterion: str = "wsindy",
    complexity=None,
    backward=True,
    penalty: float = LOG_PENALTY,
    families=None,
) -> Fit:
    """Choose the threshold without the truth, over a log-spaced path.

    ``criterion="wsindy"``: minimise ‖G(ξ_λ - ξ_LS)‖/‖Gξ_LS‖ + ‖ξ_λ‖₀/S (Messenger & Bortz).
    ``criterion="elbow"``: the model after the largest drop of log(‖Gξ - b‖/‖b‖) along the
    path of distinct supports ordered by size (starting from the empty model).
    ``criterion="bic"``: minimise K·log(RSS/K) + log(K)·‖ξ_λ‖₀.
    ``criterion="log"``: WSINDy's misfit on a log scale, minimise
    log(‖G(ξ_λ - ξ_LS)‖/‖Gξ_LS‖ + m₀) + ``penalty``·‖ξ_λ‖₀: a term (a unit of complexity) is
    kept when it divides the misfit by at least e^penalty. m₀ = 0.1·‖Gξ_LS - b‖/‖Gξ_LS‖ (a
    tenth of what no model of the library explains), at least 1e-3, keeps the complete model
    from scoring −∞; the minimum matters when the library nearly spans b (clean data, many
    columns: sparse NLS left 2.5e-8, and a 0.05 %-contribution v² term then divided the
    misfit 2.8-fold). The WSINDy loss charges a fixed 1/S per term against an absolute
    misfit, so a term whose column is nearly collinear with another (u_xx ≈ -u on
    Chafee–Infante) is dropped even when it lowers the misfit a hundredfold; on a log scale
    that drop counts.

    With ``backward`` (default), the supports of greedy forward selection and backward
    elimination (:func:`forward_path`, :func:`backward_path`) are candidates too, refitted by
    least squares: thresholding alone can drop a true term early when columns are nearly
    collinear.

    ``complexity`` (one positive weight per column, default 1) replaces the term count
    ‖ξ‖₀ by the summed weights of the active terms, so that among models that fit equally
    well the simpler terms win (e.g. weight = polynomial degree of F).
    ``families`` (one ``(F, α)`` key per column) adds the refined supports with one F
    replaced by another throughout (:func:`family_swaps`) to the candidates.
    """
    G, b = _check(G, b)
    if thresholds is None:
        thresholds = np.logspace(-4, 0, 60)
    thresholds = np.asarray(thresholds, dtype=float)
    full = _solve(G, b, np.arange(G.shape[1]), _scales(G))
    ref = np.linalg.norm(G @ full) or 1.0
    K, S = G.shape
    weights = np.ones(S) if complexity is None else np.asarray(complexity, dtype=float)
    if weights.shape != (S,) or np.any(weights <= 0):
        raise SymweakError("complexity needs one positive weight per candidate term.")
    if criterion not in CRITERIA:
        raise SymweakError(
            f"criterion must be one of {', '.join(map(repr, CRITERIA))}, got {criterion!r}."
        )
    if not (np.isfinite(penalty) and penalty > 0):
        raise SymweakError(f"penalty must be a positive number, got {penalty!r}.")
    best: Fit | None = None
    best_loss = np.inf
    path = []
    seen = {}
    fits = {}
    nb = np.linalg.norm(b) or 1.0
    log_score = log_scorer(G, b, full, weights, penalty)
    candidates = [(float(lam), stlsq(G, b, float(lam), keep=keep)) for lam in thresholds]
    if backward:
        scales = _scales(G)
        supports, refined = _path_supports(
            G, b, keep, [tuple(f.support) for _, f in candidates]
        )
        if families is not None:
            if len(families) != S:
                raise SymweakError("families needs one (F, alpha) key per candidate term.")
            supports += family_swaps(refined, families, keep)
        for support in supports:
            coef = _solve(G, b, np.asarray(support, dtype=int), scales)
            candidates.append((float("nan"), Fit(coef, _residual(G, b, coef), None, "backward")))
    for lam, fit in candidates:
        key = tuple(fit.support)
        nnz = len(key)
        fits.setdefault(key, fit)
        if criterion == "elbow":
            loss = float(np.linalg.norm(G @ fit.coef - b) / nb)
        elif criterion == "wsindy":
            loss = np.linalg.norm(G @ (fit.coef - full)) / ref + weights[list(key)].sum() / S
        elif criterion == "bic":
            rss = max(float(np.sum((G @ fit.coef - b) ** 2)), 1e-300)
            loss = K * np.log(rss / K) + np.log(K) * weights[list(key)].sum()
        elif criterion == "log":
            loss = log_score(fit.coef)
        path.append(
            {"threshold": float(lam), "loss": float(loss), "n_terms": nnz, "support": list(key)}
        )
        if key in seen:
            continue
        seen[key] = loss
        if criterion != "elbow" and nnz and loss < best_loss - 1e-12:
            best, best_loss = fit, loss
    if criterion == "elbow":
        sizes = sorted((k for k in seen if k), key=len)
        previous, best_drop = 0.0, -np.inf
        for k in sizes:
            log_res = np.log(max(seen[k], 1e-300))
            drop = previous - log_res
            if drop > best_drop:
                best, best_drop = fits[k], drop
            previous = log_res
    if best is None:
        best = stlsq(G, b, float(thresholds[0]), keep=keep)
    best.method = f"mstls[{criterion}]"
    best.path = path
    return best

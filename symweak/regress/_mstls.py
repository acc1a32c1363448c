"""The sparse model chosen without the truth (:func:`mstls`): candidate supports from
thresholding, greedy forward and backward paths, single-term swaps and family swaps (one F
for another), scored by WSINDy's loss or an information criterion; and the best support
within a complexity budget."""

from __future__ import annotations

import numpy as np

from .._errors import SymweakError
from ._sparse import (
    CRITERIA,
    LOG_PENALTY,
    SWAP_SIZES,
    Fit,
    _check,
    _residual,
    _scales,
    _solve,
    log_scorer,
    stlsq,
)

__all__ = [
    "backward_path",
    "best_within",
    "compress",
    "family_swaps",
    "forward_path",
    "mstls",
    "swap_refine",
]


def compress(G, b) -> tuple[np.ndarray, np.ndarray]:
    """(G', b') with S + 1 rows for G of K > S + 1 rows and S columns: the R factor of
    [G b] = QR, split. Every quantity the sparse fits use (column norms, least-squares
    solutions on any support, residual norms ‖Gξ - b‖, ‖b‖) depends only on GᵀG, Gᵀb and
    bᵀb, which the orthogonal Q leaves as they are; the thousands of small solves of
    :func:`mstls` then run on (S + 1) × S matrices instead of K × S."""
    G, b = _check(G, b)
    K, S = G.shape
    if K <= 2 * (S + 1):
        return G, b
    R = np.linalg.qr(np.column_stack([G, b]), mode="r")
    return np.ascontiguousarray(R[:, :S]), np.ascontiguousarray(R[:, S])


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

    def with_each(rest):
        """The residual of ``rest`` plus each column, all at once: ‖r‖² minus the squared
        projection of r on the part of the column outside span(rest) (as the forward path
        adds a term; one QR instead of a least-squares solve per candidate)."""
        if rest:
            Q, _ = np.linalg.qr(A[:, rest])
            r = b - Q @ (Q.T @ b)
            P = A - Q @ (Q.T @ A)
        else:
            r, P = b, A
        norms = np.einsum("ij,ij->j", P, P)
        gain = np.where(norms > 1e-24 * len(b), (P.T @ r) ** 2 / np.maximum(norms, 1e-300), 0.0)
        return float(r @ r) - gain

    best = rss(current) if current else float(b @ b)
    for _ in range(max_passes):
        move = None
        for out in current:
            if out in keep:
                continue
            rest = [c for c in current if c != out]
            values = with_each(rest)
            for new in range(A.shape[1]):
                if new in current:
                    continue
                if values[new] < best * (1 - 1e-9):
                    best, move = float(values[new]), sorted([*rest, new])
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
    G, b = compress(G, b)
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
    rows = G.shape[0]
    G, b = compress(G, b)
    if thresholds is None:
        thresholds = np.logspace(-4, 0, 60)
    thresholds = np.asarray(thresholds, dtype=float)
    full = _solve(G, b, np.arange(G.shape[1]), _scales(G))
    S = G.shape[1]
    weights = np.ones(S) if complexity is None else np.asarray(complexity, dtype=float)
    if weights.shape != (S,) or np.any(weights <= 0):
        raise SymweakError("complexity needs one positive weight per candidate term.")
    if criterion not in CRITERIA:
        raise SymweakError(
            f"criterion must be one of {', '.join(map(repr, CRITERIA))}, got {criterion!r}."
        )
    if not (np.isfinite(penalty) and penalty > 0):
        raise SymweakError(f"penalty must be a positive number, got {penalty!r}.")
    candidates = _candidates(G, b, thresholds, keep, backward, families)
    best, path = _choose(G, b, candidates, criterion, full, weights, penalty, rows)
    if best is None:
        best = stlsq(G, b, float(thresholds[0]), keep=keep)
    best.method = f"mstls[{criterion}]"
    best.path = path
    return best


def _candidates(G, b, thresholds, keep, backward, families) -> list[tuple[float, Fit]]:
    """``[(threshold, fit)]``: STLSQ along ``thresholds``, then (``backward``) the supports
    of the forward and backward paths and their family swaps, refitted (threshold nan)."""
    S = G.shape[1]
    candidates = [(float(lam), stlsq(G, b, float(lam), keep=keep)) for lam in thresholds]
    if backward:
        scales = _scales(G)
        supports, refined = _path_supports(G, b, keep, [tuple(f.support) for _, f in candidates])
        if families is not None:
            if len(families) != S:
                raise SymweakError("families needs one (F, alpha) key per candidate term.")
            supports += family_swaps(refined, families, keep)
        for support in supports:
            coef = _solve(G, b, np.asarray(support, dtype=int), scales)
            candidates.append((float("nan"), Fit(coef, _residual(G, b, coef), None, "backward")))
    return candidates


def _choose(G, b, candidates, criterion, full, weights, penalty, rows) -> tuple[Fit | None, list]:
    """The candidate the criterion scores best (None: none with a term), and the path of
    every candidate's score; ``rows``: the test functions (K of the information criterion)."""
    K, S = rows, G.shape[1]
    ref = np.linalg.norm(G @ full) or 1.0
    nb = np.linalg.norm(b) or 1.0
    log_score = log_scorer(G, b, full, weights, penalty)
    best: Fit | None = None
    best_loss = np.inf
    path, seen, fits = [], {}, {}
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
    return best, path

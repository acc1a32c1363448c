"""What the data determine: the supports a weak system cannot tell apart from the best one, a
verdict per term, and the smallest coefficient of each doubtful term these data would detect.

All on one weak system ``G ξ = b`` (rows are test functions). Supports are scored by the
selection's ``log`` criterion (log of the misfit against the full least-squares fit, plus
``LOG_PENALTY`` per unit of complexity), each on ``resamples`` random halves of the rows. The
halves are what the data's own noise makes of the test functions: a support whose score is
within ``reach`` standard deviations (of its paired difference over the halves) of the best
support's cannot be told from it, and is an *alternative*. Candidates: the chosen support,
every support one term away from it (drop, add, swap), and one more such step from each
alternative found. A term in every alternative is *determined*, one in some is *uncertain*,
every other candidate term is excluded by the data.

Each half's sufficient statistics (GᵀG, Gᵀb, bᵀb, of unit-norm columns) make a support's
score a small solve: hundreds of supports × halves cost milliseconds, and the detection floor
(b shifted by c·G_t for growing c until the support without t is rejected) no refit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ._halves import _Halves
from ._negligible import drop_negligible
from ._sparse import _check

__all__ = ["Alternative", "Judgement", "judge"]

#: random halves of the test functions each support is scored on
RESAMPLES = 40
#: a support is within reach of the best when its mean score difference is at most this
#: many standard deviations of that difference over the halves
REACH = 1.0
#: alternatives kept per equation (the closest first)
MAX_ALTERNATIVES = 8
#: neighbourhood steps from the chosen support
STEPS = 2
#: a diffusion term (``diffusion`` of :func:`judge`) left out of an equation that damps nothing
#: is uncertain when the data could hold it unseen at this part of ‖b‖ (its floor's |ξ|·‖G_j‖)
UNSEEN = 0.05


@dataclass
class Alternative:
    """A support the data cannot tell from the best: its coefficients (least squares on
    all rows), relative misfit on held-out halves, and ``margin`` = reach − mean score
    difference from the best (≥ 0; larger: closer to the best)."""

    support: tuple[int, ...]
    coef: np.ndarray
    held_out: float
    margin: float
    score: float
    #: "fit": within reach of the best's score; "stand-in": the best plus a term the others
    #: can stand in for (the data explain as much with it as without, and fix no size for
    #: it); "floor": the best plus a diffusion or dispersion term below what the data detect
    reason: str = "fit"


@dataclass
class Judgement:
    """``verdicts`` ``{column: "determined" | "uncertain"}`` (absent columns are excluded),
    ``alternatives`` (best first), ``floors`` ``{column: smallest |coefficient| detected}``
    for the uncertain columns (on the original column scale), and ``excluded``: the same
    for every excluded column, the columns that could hold the largest part of the
    left-hand side undetected first — an excluded term is excluded only above its floor."""

    verdicts: dict[int, str]
    alternatives: list[Alternative]
    floors: dict[int, float] = field(default_factory=dict)
    excluded: dict[int, float] = field(default_factory=dict)


def _neighbours(support: tuple, S: int, keep: set) -> set:
    """Supports one term away: each term dropped (not a kept one), each added, each swapped."""
    have = set(support)
    out = set()
    for j in range(S):
        if j not in have:
            out.add(tuple(sorted(have | {j})))
    for i in support:
        if i in keep:
            continue
        less = have - {i}
        if less:
            out.add(tuple(sorted(less)))
        for j in range(S):
            if j not in have:
                out.add(tuple(sorted(less | {j})))
    return out


def _grown(frontier: set, S: int, kept: set, apart) -> set:
    """Every neighbour of the ``frontier``'s supports; with ``apart``, also each support with
    a function in place of its whole stand-in, and none that holds both."""
    grown = set()
    for s in frontier:
        grown |= _neighbours(s, S, kept)
    if not apart:
        return grown
    grown |= {
        tuple(sorted((set(s) - set(cols)) | {j}))
        for s in frontier
        for j, cols in apart.items()
        if j not in s and set(s) & set(cols)
    }
    return {s for s in grown if _allowed(s, apart)}


def _allowed(support: tuple, apart) -> bool:
    """Whether ``support`` holds no column together with one kept ``apart`` from it."""
    have = set(support)
    return not apart or not any(j in have and have & set(cols) for j, cols in apart.items())


def _within(diffs: np.ndarray, reach: float) -> tuple[bool, float]:
    """Whether paired score differences (candidate − best) leave the candidate within reach,
    and the margin (reach·sd − mean; ≥ 0 when within)."""
    mean, sd = float(diffs.mean()), float(diffs.std(ddof=1)) if diffs.size > 1 else 0.0
    margin = reach * sd - mean
    return margin >= 0.0, margin


def _unkept(apart, kept: set):
    """``apart`` without the kept columns (``keep:``): a term the user keeps is in every
    support, so it stands in for no function (sin u is judged beside a kept u³), and a kept
    function is judged beside its own expansion."""
    if not apart:
        return apart
    out = {int(j): [c for c in cols if c not in kept] for j, cols in apart.items() if j not in kept}
    return {j: cols for j, cols in out.items() if cols} or None


def _score(halves, weights, s: tuple, scored: dict) -> np.ndarray:
    """Support ``s``'s scores over the halves, computed once and kept in ``scored``."""
    if s not in scored:
        scored[s] = halves.scores(s, float(weights[list(s)].sum()))
    return scored[s]


def _search(halves, weights, starts, S: int, kept: set, apart, reach: float):
    """Score the ``starts`` and up to ``STEPS`` rounds of neighbours of the supports within
    reach of the best: ``(scores by support, the supports judged)``. A start holding a
    function beside its stand-in is searched from but not judged (never the best, never an
    alternative)."""
    scored: dict[tuple, np.ndarray] = {}
    frontier = {tuple(sorted({int(j) for j in s} | kept)) for s in starts}
    for s in frontier:
        _score(halves, weights, s, scored)
    within: set = set(frontier)

    def judged() -> list:
        return [s for s in scored if _allowed(s, apart)] or list(scored)

    for _ in range(STEPS):
        for s in _grown(frontier, S, kept, apart):
            _score(halves, weights, s, scored)
        best = min(judged(), key=lambda s: scored[s].mean())
        new = {s for s in scored if _within(scored[s] - scored[best], reach)[0]} - within
        within |= new
        frontier = new
        if not frontier:
            break
    return scored, judged()


def judge(
    G,
    b,
    chosen: Sequence[int],
    *,
    complexity: Sequence[float] | None = None,
    keep: Sequence[int] = (),
    seed: int = 0,
    resamples: int = RESAMPLES,
    reach: float = REACH,
    floors: bool = True,
    apart: Mapping[int, Sequence[int]] | None = None,
    start: Sequence[Sequence[int]] = (),
    diffusion: Mapping[int, Sequence[int]] | None = None,
    carried: Mapping[int, Sequence[int]] | None = None,
    needed: Sequence[int] = (),
    damping: Sequence[int] = (),
) -> Judgement:
    """The alternatives to ``chosen`` (column indices) on ``G ξ = b``, a verdict per column
    that appears in any of them, and the detection floor of each column not determined
    (``floors``: the uncertain ones; ``excluded``: every other). ``apart``: ``{j: columns}``
    never in one support with column j (a function judged only in place of its polynomial
    stand-in, never beside it: −8.5 u + 8.2 sin u is u − 1.4 u³ in disguise); a support
    holding part of j's stand-in also has j in its place as a neighbour, and a chosen one
    holding both is searched from but is never the best nor an alternative (columns in
    ``keep`` are exempt). ``start``: more
    supports the search starts from beside ``chosen`` (the selection's own, where the
    returned equation is another), so that the verdicts do not hang on which one it was.
    ``diffusion``: ``{j: columns}``, column j a regularising term (a diffusion; a dispersion)
    and ``columns`` the terms that settle it (:func:`_unseen`); ``carried``: ``{j: columns}``
    of which an alternative must hold one for j to count; ``needed``: those j that count at
    any size (an amplifying equation's damping term; all need ``floors``); ``damping``:
    those j that the held-out rows favour only with a positive coefficient (a diffusion:
    clean FitzHugh–Nagumo's v_t favoured −0.016 v_xx, a surrogate's artefact)."""
    G, b = _check(G, b)
    S = G.shape[1]
    weights = np.ones(S) if complexity is None else np.asarray(complexity, dtype=float)
    kept = {int(k) for k in keep}
    apart = _unkept(apart, kept)
    halves = _Halves(G, b, resamples, seed)
    starts = [chosen, *start]
    scored, judged = _search(halves, weights, starts, S, kept, apart, reach)
    best = min(judged, key=lambda s: scored[s].mean())
    found = []
    for s in judged:
        ok, margin = _within(scored[s] - scored[best], reach)
        if ok:
            found.append((s, margin))
    found.sort(key=lambda p: (-p[1], len(p[0])))
    found = [(s, m, "fit") for s, m in found[:MAX_ALTERNATIVES]]
    found += [f for f in _stand_ins(halves, best, S, found, scored) if _allowed(f[0], apart)]
    # a stand-in beside the last round's best may not have been scored yet
    means = {s: float(_score(halves, weights, s, scored).mean()) for s, _, _ in found}
    alternatives = [
        Alternative(s, _coef(G, b, s), halves.held_out(s), float(m), means[s], why)
        for s, m, why in found
    ]
    supports = [set(a.support) for a in alternatives]
    union = set().union(*supports) if supports else set()
    common = set.intersection(*supports) if supports else set()
    verdicts = {j: ("determined" if j in common else "uncertain") for j in sorted(union)}
    out = Judgement(verdicts, alternatives)
    if floors:
        unseen = (diffusion, carried, {int(j) for j in needed}, {int(j) for j in damping})
        _floors(out, halves, G, b, (best, union, common), weights, reach, scored, unseen)
    return out


def _floors(out, halves, G, b, found, weights, reach, scored, unseen) -> None:
    """Fill ``out.floors`` (uncertain columns) and ``out.excluded`` (the others, the part of
    b each could hold undetected largest first); a regularising column the data could hold
    unseen (:func:`_unseen`) becomes uncertain with the best plus it as an alternative, and
    a negligible one (:func:`drop_negligible`) is excluded."""
    best, union, common = found
    S = G.shape[1]
    for j in sorted(union - common):
        out.floors[j] = _floor(halves, G, b, out.alternatives, j, weights, reach)
    hidden = {
        j: _floor(halves, G, b, out.alternatives, j, weights, reach)
        for j in range(S)
        if j not in union and np.any(G[:, j])  # an all-zero column says nothing
    }
    part = {j: f * halves.scale[j] / halves.nb for j, f in hidden.items()}
    diffusion, carried, needed, damping = unseen

    def favoured(j: int) -> bool:
        positive = j not in damping or _coef(G, b, sorted({*best, j}))[j] > 0
        return positive and halves.favoured(best, j)

    for j in _unseen(diffusion, carried, needed, union, part, favoured):
        wider = tuple(sorted(set(best) | {j}))
        diffs = _score(halves, weights, wider, scored) - scored[best]
        out.alternatives.append(
            Alternative(wider, _coef(G, b, wider), halves.held_out(wider),
                        -float(diffs.mean()), float(scored[wider].mean()), "floor")
        )  # fmt: skip
        out.verdicts[j] = "uncertain"
        out.floors[j] = hidden.pop(j)
    for j, f in drop_negligible(out, best, halves.scale / halves.nb).items():
        hidden[j], part[j] = f, f * halves.scale[j] / halves.nb
    out.excluded = {j: hidden[j] for j in sorted(hidden, key=lambda j: (-part[j], j))}


def _unseen(diffusion, carried, needed: set, union: set, part: dict, favoured=None) -> list:
    """The regularising columns j left out of an equation that nothing in any alternative
    settles (no column of ``diffusion[j]``; where ``carried`` names j, one of its columns
    is in an alternative) which the data could hold unseen at :data:`UNSEEN` of the
    left-hand side or more (any, for j in ``needed`` or where ``favoured(j)``: the held-out
    rows favour it). A diffusion beside a reaction, a flux
    or a dispersion (nothing damps) and a dispersion beside a flux alone are what noisy
    data lose first (tanh damping at σ 0.2: u_xx holds 3 % of u_t and could hold 10 %
    unseen), and an equation without them is no settled answer. KdV–Burgers with a weak
    diffusion (0.03 u_xx, σ 0.1, seed 0): u_xx fitted at 0.031 lowers the held-out misfit by
    a quarter, below its detection floor 0.049 and under 5 % of u_t."""
    if not diffusion:
        return []
    carried = carried or {}
    return [
        int(j)
        for j, cols in diffusion.items()
        if j in part
        and (part[j] >= UNSEEN or j in needed or (favoured is not None and favoured(j)))
        and not union & set(cols)
        and (j not in carried or union & set(carried[j]))
    ]


def _stand_ins(halves: _Halves, best: tuple, S: int, found, scored) -> list:
    """The best support plus each term whose coefficient the data leave loose
    (:data:`COLLINEAR`), as alternatives (margin: their score's distance from the best)."""
    have = {s for s, *_ in found}
    out = []
    for j in range(S):
        s = tuple(sorted(set(best) | {j}))
        if j in best or s in have:
            continue
        if halves.loose(best, j):
            diffs = scored[s] - scored[best] if s in scored else np.zeros(1)
            out.append((s, -float(diffs.mean()), "stand-in"))
    return out


def loose_columns(
    G, b, supports, among: Sequence[int], *, seed: int = 0, resamples: int = RESAMPLES
) -> list[int]:
    """The columns of ``among`` whose coefficient the data leave loose (:data:`COLLINEAR`,
    over ``resamples`` halves of the rows drawn from ``seed``) beside one of ``supports``:
    other terms there stand in for them, so the data cannot exclude them."""
    G, b = _check(G, b)
    halves = _Halves(G, b, resamples, seed)
    out = []
    for j in among:
        for base in supports:
            if j not in base and halves.loose(base, j):
                out.append(int(j))
                break
    return out


def _coef(G, b, support) -> np.ndarray:
    coef = np.zeros(G.shape[1])
    s = list(support)
    if s:
        scale = np.linalg.norm(G[:, s], axis=0)
        scale[scale == 0] = 1.0
        z, *_ = np.linalg.lstsq(G[:, s] / scale, b, rcond=None)
        coef[s] = z / scale
    return coef


def _floor(halves: _Halves, G, b, alternatives, j: int, weights, reach: float) -> float:
    """The smallest |coefficient| of column ``j`` that these data detect beside the closest
    alternative without ``j`` (s₀): the data's b with j's part removed (as fitted by s₀ ∪
    {j}), plus c·G_j, for c growing geometrically and refined by bisection, until s₀ is
    rejected in favour of s₀ ∪ {j} (original column units; inf when no size up to 100×
    the left-hand side's norm is detected: other terms stand in for j)."""
    s0 = next((a.support for a in alternatives if j not in a.support), ())
    s1 = tuple(sorted(set(s0) | {j}))
    coef = _coef(G, b, s1)
    sign = np.sign(coef[j]) or 1.0
    base = halves.bs - halves.Gs[:, j] * coef[j] * halves.scale[j] / halves.nb
    w0, w1 = float(weights[list(s0)].sum()), float(weights[list(s1)].sum())
    stats = halves.base_stats(base, j)

    def detected(c: float) -> bool:
        halves.shift(base, sign * c, j, stats)
        d = halves.scores(s0, w0) - halves.scores(s1, w1)
        return float(d.mean()) > reach * float(d.std(ddof=1))

    lo, hi = 0.0, 1e-4
    while not detected(hi):
        lo, hi = hi, hi * 4
        if hi > 100:
            halves.shift(None, 0.0)
            return float("inf")
    for _ in range(12):
        mid = np.sqrt(lo * hi) if lo > 0 else hi / 4
        if detected(mid):
            hi = mid
        else:
            lo = mid
    halves.shift(None, 0.0)
    # scaled units -> the column's own: c·G_j/‖G_j‖·‖b‖
    return float(hi * halves.nb / halves.scale[j])

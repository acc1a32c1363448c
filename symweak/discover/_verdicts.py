"""What the data determine, per equation, on the final weak system of either method: the
verdict of each term, the equations the data cannot tell apart from the best one, and the
detection floor of the terms those equations differ in (:func:`symweak.regress.judge`;
docs/verdicts.md). Stored on the equation's :class:`~._history.FitRecord`."""

from __future__ import annotations

import numpy as np

from ..ir import Equation
from ..regress import (
    MAX_ALTERNATIVES,
    bootstrap_intervals,
    drop_one,
    judge,
    loose_columns,
    merge_columns,
    pareto_front,
    refit_support,
    term_complexity,
)
from ._library import kept_indices
from ._settings import BOOTSTRAP_RESAMPLES, INTERVAL_NOISE_SHARE, INTERVAL_PRECISION
from ._settling import diffusion_columns, dispersion_columns, regularising_columns

__all__ = [
    "AGREE",
    "NOTHING_DETERMINED",
    "RICHER",
    "agree_ties",
    "diffusion_columns",
    "dispersion_columns",
    "judge_equation",
    "mark_richer",
    "merge_judgement",
    "merge_untuned",
    "printed_terms",
    "record_uncertainty",
    "richer_fronts",
    "split_interval",
    "widen_to_precision",
]

#: when the best equation leaves more than this part of the left-hand side's weak form
#: unexplained (held-out halves of the test functions), the data determine no term and
#: exclude none: every candidate is uncertain (as ``Discovery.warnings`` flags it)
NOTHING_DETERMINED = 0.5
#: when an equation of the Pareto front leaves less than this share of the returned one's
#: unexplained weak form on the held-out test functions (and at least ``RICHER_DROP`` of the
#: left-hand side less), the data show structure the returned equation misses: its terms
#: are determined only where every such richer equation holds them as well, and the richer
#: equations' terms are uncertain. Zoo tuning half (r 10 %, seeds 0, 1): the returned
#: equations of the honest runs all left more than 0.33 of the front's best; the dishonest
#: single-term Gray–Scott and λ–ω equations (w_t = 0.024 w for 0.02 w_xx + v² − w v² −
#: 0.04 w) 0.05–0.21
RICHER = 0.25
#: ... and a drop of at least this part of the left-hand side (under 1 %: the surrogate's)
RICHER_DROP = 0.01
#: a returned term stays determined beside richer equations only where each holds it
#: within this factor of its coefficient, same sign (λ–ω's v_t = −0.736 u at σ 0.2, seed 2:
#: every richer equation holds u, the best at −0.12 beside −0.97 u²v − 0.49 u³; on the
#: limit cycle, r² ≈ 1, u stands in for the cubic terms)
AGREE = 2.0


def widen_to_precision(equations, fits, noise: float = 0.0) -> None:
    """Widen each interval of ``fits`` (FitRecords) to reach ``INTERVAL_PRECISION`` +
    ``INTERVAL_NOISE_SHARE`` × ``noise`` (noise / std) of the shown coefficient either side."""
    share = INTERVAL_PRECISION + INTERVAL_NOISE_SHARE * max(float(noise), 0.0)
    by_lhs = {fit.lhs: fit for fit in fits}
    for eq in equations:
        fit = by_lhs.get(eq.lhs.short())
        if fit is None or not fit.intervals:
            continue
        for term, c in eq.coefficients.items():
            name = term.short()
            if name in fit.intervals:
                lo, hi = fit.intervals[name]
                reach = share * abs(float(c))
                fit.intervals[name] = [min(lo, float(c) - reach), max(hi, float(c) + reach)]


def printed_terms(lhs, term) -> dict:
    """``{name: factor}``: the terms an equation shows for ``term`` (itself, or each
    monomial of a sum: (u² + v²)·v prints as u²·v and v³)."""
    return {t.short(): float(k) for t, k in Equation(lhs, {term: 1.0}).coefficients.items()}


def judge_equation(
    lhs,
    lib,
    G,
    b,
    coef,
    record,
    *,
    how,
    constraints,
    seed: int,
    rhs=None,
    apart=None,
    start=(),
) -> None:
    """Fill ``record.verdicts``, ``record.alternatives``, ``record.floors`` and
    ``record.excluded`` for one equation: ``lib`` its candidate terms, ``G``/``b`` its weak
    system (NumPy, columns as ``lib``), ``coef`` the fit's coefficients (0 outside the
    support), ``rhs`` the returned ``{term: coefficient}`` (shown for the alternative that
    is the returned equation; ``apart``: columns never judged together, and ``start``: more
    supports to search from (the selection's own where the data preferred another), as
    :func:`symweak.regress.judge` takes them)."""
    coef = np.asarray(coef, dtype=float)
    if len(coef) != len(lib) or not len(lib):
        return
    settle, carry = dispersion_columns(lhs, lib)
    # the term that would damp an amplifying equation's short waves counts at any size
    needed = regularising_columns(lhs, lib, coef)
    found = judge(
        G,
        b,
        np.flatnonzero(coef),
        complexity=term_complexity(lib, how),
        keep=kept_indices(lib, constraints),
        seed=seed,
        apart=apart,
        start=start,
        diffusion={**(damping := diffusion_columns(lhs, lib)), **settle, **needed},
        damping=list(damping),
        carried=carry,
        needed=list(needed),
    )
    names = [printed_terms(lhs, t) for t in lib]
    chosen = tuple(int(j) for j in np.flatnonzero(coef))
    record.verdicts = {n: v for j, v in found.verdicts.items() for n in names[j]}
    better: list = []
    if found.alternatives and found.alternatives[0].held_out > NOTHING_DETERMINED:
        # the best equation leaves most of the left-hand side unexplained: the data exclude
        # no candidate and determine none
        record.verdicts = {n: "uncertain" for term in names for n in term}
        found.excluded = {}
    elif record.pareto:
        better = mark_richer(record, {t.short(): names[j] for j, t in enumerate(lib)})
    shown = None
    if rhs is not None:
        shown = {t.short(): float(c) for t, c in Equation(lhs, rhs).coefficients.items()}
    record.alternatives = [
        {
            "terms": shown
            if shown is not None and tuple(a.support) == chosen
            else {n: float(k * a.coef[j]) for j in a.support for n, k in names[j].items()},
            "held_out": a.held_out,
            "margin": a.margin,
            "reason": a.reason,
        }
        for a in found.alternatives
    ]
    record.floors = {
        n: float(abs(k) * floor) for j, floor in found.floors.items() for n, k in names[j].items()
    }
    record.excluded = {
        n: float(abs(k) * floor)
        for j, floor in found.excluded.items()
        for n, k in names[j].items()
        if n not in record.verdicts
    }
    if better:
        _loose_beside_richer(record, lib, G, b, names, found.excluded, better, seed)


def _loose_beside_richer(record, lib, G, b, names, excluded: dict, better, seed: int) -> None:
    """The excluded terms that the terms of the equations ``better`` (those of the Pareto
    front fitting markedly better than the returned one) stand in for
    (:func:`symweak.regress.loose_columns`): uncertain, with the floor they had as excluded.
    Gray–Scott's w_t = 0.024 w (σ 0.05) had v² excluded though the richer equations hold
    −w v², which v² trades against where they overlap."""
    col = {t.short(): j for j, t in enumerate(lib)}
    supports = [[col[t] for t in p["terms"]] for p in better if all(t in col for t in p["terms"])]
    for j in loose_columns(G, b, supports, sorted(excluded), seed=seed):
        for n, k in names[j].items():
            record.verdicts[n] = "uncertain"
            record.floors[n] = record.excluded.pop(n, float(abs(k) * excluded[j]))


def _conflict(mine: str | None, theirs: str | None) -> bool:
    """Whether one judgement determines a term the other excludes (None: excluded)."""
    return {mine, theirs} == {"determined", None}


def merge_untuned(record, other, phase: str) -> list[str]:
    """Merge ``other`` (the same equation judged on the surrogate before tuning,
    :mod:`.network._untuned`) into ``record`` (:func:`merge_judgement`, reason
    ``"untuned"``); ``record.untuned`` keeps ``{"phase", "verdicts", "disputed"}``. Returns
    the terms whose verdict changed (the disputed ones)."""
    disputed = merge_judgement(record, other, "untuned")
    record.untuned = {"phase": phase, "verdicts": dict(other.verdicts), "disputed": disputed}
    return disputed


def merge_judgement(record, other, reason: str) -> list[str]:
    """Merge ``other`` (a second judgement of the same left-hand side: on the surrogate
    before tuning, or the fit under a symmetry hypothesis the data could not reject) into
    ``record``: a term one of them determines and the other excludes is uncertain; every
    other verdict of ``record`` stands (a term the second judgement cannot tell about is no
    evidence against the first's verdict). A term that becomes uncertain keeps the detection
    floor either judgement gave it (this one's first), and ``other``'s alternatives that
    ``record`` lacks are added after its own (``reason``, up to ``MAX_ALTERNATIVES`` in
    all). Returns the terms whose verdict changed (the disputed ones)."""
    mine, theirs = dict(record.verdicts), other.verdicts
    names = list(dict.fromkeys([*mine, *theirs]))
    disputed = [n for n in names if _conflict(mine.get(n), theirs.get(n))]
    record.verdicts = {
        n: "uncertain" if n in disputed else mine[n] for n in names if n in mine or n in disputed
    }
    for n in disputed:
        if n not in record.floors:
            floor = next(
                (f.get(n) for f in (record.excluded, other.floors, other.excluded) if n in f),
                None,
            )
            if floor is not None:
                record.floors[n] = float(floor)
        record.excluded.pop(n, None)
    if disputed:
        have = [set(a["terms"]) for a in record.alternatives]
        for alt in other.alternatives:
            if len(record.alternatives) >= MAX_ALTERNATIVES:
                break
            if set(alt["terms"]) not in have:
                record.alternatives.append({**alt, "reason": reason})
                have.append(set(alt["terms"]))
    return disputed


def richer_fronts(front: list, share: float = RICHER) -> tuple[dict | None, list]:
    """(the returned equation's entry, the entries that fit markedly better) of a Pareto
    front (``FitRecord.pareto``): held-out residual below ``share`` of the returned one's
    and at least ``RICHER_DROP`` less."""
    chosen = next((p for p in front if p.get("chosen")), None)
    if chosen is None:
        return None, []
    r0 = float(chosen["held_out"])
    better = [
        p
        for p in front
        if float(p["held_out"]) < share * r0 and r0 - float(p["held_out"]) >= RICHER_DROP
    ]
    return chosen, better


def mark_richer(record, printed: dict, better: list | None = None, chosen=None) -> list:
    """Where the Pareto front holds equations that fit markedly better than the returned
    one (:func:`richer_fronts`, or ``better``: those the data themselves fit better,
    :mod:`.network._richer`), the returned one is not what the data determine: a term
    stays determined only if every such equation holds it (within a factor ``AGREE``),
    and their terms are uncertain (no longer excluded). ``record.richer`` keeps the best
    of them for the warning.
    ``printed``: ``{term: {printed name: factor}}`` (a sum prints as its monomials).
    ``chosen``: the returned equation's entry (its front entry by default).
    Returns those equations (front entries; none: empty)."""
    chosen = chosen or next((p for p in record.pareto if p.get("chosen")), None)
    if better is None:
        chosen, better = richer_fronts(record.pareto)
    if not better or chosen is None:
        return []
    split = lambda p: [n for t in p["terms"] for n in printed.get(t, {t: 1.0})]  # noqa: E731
    everywhere = set(split(chosen)).intersection(*map(split, better))
    everywhere = {n for n in everywhere if all(_agrees(chosen, p, n) for p in better)}
    for p in better:  # in the front's order, simplest first: the same order every run
        for name in split(p):
            record.verdicts.setdefault(name, "uncertain")
    record.verdicts = {
        n: "determined" if v == "determined" and n in everywhere else "uncertain"
        for n, v in record.verdicts.items()
    }
    best = min(better, key=lambda p: float(p["held_out"]))
    record.richer = {
        "held_out": float(best["held_out"]),
        "returned": float(chosen["held_out"]),
        "terms": dict(best["terms"]),
        "count": len(better),
    }
    return better


def _agrees(chosen: dict, richer: dict, name: str) -> bool:
    """Whether the richer front entry holds the returned entry's term ``name`` within a
    factor ``AGREE`` of its coefficient, same sign (a term printed under another name,
    part of a sum, is not compared)."""
    mine, theirs = chosen["terms"].get(name), richer["terms"].get(name)
    if mine is None or theirs is None:
        return True
    mine, theirs = float(mine), float(theirs)
    return mine * theirs > 0 and 1 / AGREE <= theirs / mine <= AGREE


def _state(record, name: str) -> str | None:
    """A printed term's verdict in ``record``: determined, uncertain, excluded, or None
    where the equation's candidates did not hold it."""
    verdict = record.verdicts.get(name)
    return verdict or ("excluded" if name in record.excluded else None)


def _coefficient_floor(record, names: dict) -> float | None:
    """The detection floor of a term's coefficient (the lowest over its printed names,
    each divided by its factor), None where it has none."""
    floors = [(record.floors.get(n, record.excluded.get(n)), abs(k)) for n, k in names.items() if k]
    values = [f / k for f, k in floors if f is not None]
    return min(values) if values else None


def agree_ties(records: dict, ties) -> None:
    """Equations tied by a ``pair`` rule share one coefficient per tied pair (equation B's
    coefficient of T' is k times A's of T: the parts of one complex equation under U(1)
    symmetry), but each was judged on its own design. Where the two parts' verdicts differ
    the shared coefficient is not determined: the term is uncertain in both, with the lower
    of their detection floors (on each part's scale). λ–ω at σ 0.05 gave u_xx uncertain in
    u_t and its partner v_xx excluded in v_t, of one diffusion 0.1 ∇²ψ. ``records``:
    ``{lhs: FitRecord}``; ``ties``: ``[(lhs A, lhs B, [(T, T', k), ...])]``."""
    for a, b, pairs in ties:
        if a == b or a not in records or b not in records:
            continue
        ra, rb = records[a], records[b]
        for t, p, k in pairs:
            na, nb = printed_terms(a, t), printed_terms(b, p)
            states = {_state(ra, n) for n in na} | {_state(rb, n) for n in nb}
            if None in states or len(states) == 1:
                continue
            fa, fb = _coefficient_floor(ra, na), _coefficient_floor(rb, nb)
            shared = [f for f in (fa, None if fb is None else fb / abs(k)) if f is not None]
            floor = min(shared) if shared else None
            for record, names, scale in ((ra, na, 1.0), (rb, nb, abs(k))):
                for n, factor in names.items():
                    record.verdicts[n] = "uncertain"
                    record.excluded.pop(n, None)
                    if floor is not None:
                        record.floors[n] = float(abs(factor) * scale * floor)


def split_interval(lhs, term, lo: float, hi: float) -> dict:
    """``{name: [lo, hi]}`` for the terms the equation shows in place of ``term``: itself,
    or each monomial of a sum, scaled by its factor."""
    return {name: sorted([k * lo, k * hi]) for name, k in printed_terms(lhs, term).items()}


def record_uncertainty(
    record,
    lhs,
    lib,
    G,
    b,
    coef,
    *,
    how,
    constraints,
    seed: int,
    method: str = "+tls",
    others=(),
    groups=None,
    overlap=None,
) -> None:
    """95 % bootstrap intervals of the kept coefficients (rows resampled, refitted as the
    coefficients were: by total least squares when ``method`` says "+tls", else by least
    squares), each kept term's price (``without``) and the
    Pareto front of supports, on one equation's design ``G``/``b`` (NumPy, columns as
    ``lib``). Each interval also spans the same support refitted on ``others`` (other
    test-function variants' ``(G, b)``): the bootstrap sees the spread over test functions,
    not the surrogate's bias, which shows as disagreement between scales (Burgers 10 %,
    σ 0.2, seeds 0–3: the truth inside 3 of 8 bootstrap intervals without them). With
    ``groups`` (terms tied within the equation by a ``pair`` rule) all is computed on the
    merged columns the fit was made on, and each tied term's interval is its factor times
    its group's. ``overlap`` (the test functions' correlation, as
    :func:`~symweak.regress.design_effect` takes it) stretches each bootstrap interval by
    the square root of its design effect: rows whose supports overlap are not independent
    draws (zoo tuning half, r 10 %, σ 0.05–0.2: the truth inside 30 of 35 intervals
    without it, 33 with it)."""
    coef = np.asarray(coef, dtype=float)
    tls = "+tls" in method
    if groups is None:
        groups = [(np.array([j]), np.ones(1)) for j in range(len(lib))]
    Gm = merge_columns(G, groups)
    support = [g for g, (idx, _) in enumerate(groups) if coef[idx[0]] != 0.0]
    lo, hi = bootstrap_intervals(
        Gm, b, support, resamples=BOOTSTRAP_RESAMPLES, seed=seed, tls=tls, overlap=overlap
    )
    for Gv, bv in others:
        refit = refit_support(merge_columns(Gv, groups), bv, support, tls)
        lo, hi = np.minimum(lo, refit), np.maximum(hi, refit)
    members = lambda g: zip(*groups[g])  # noqa: E731
    record.intervals = {
        name: interval
        for g in support
        for j, f in members(g)
        for name, interval in split_interval(
            lhs, lib[j], float(f * lo[g]), float(f * hi[g])
        ).items()
    }
    reps = [lib[idx[0]] for idx, _ in groups]
    front = pareto_front(
        Gm,
        b,
        chosen=support,
        complexity=term_complexity(reps, how),
        keep=kept_indices(reps, constraints),
        seed=seed,
        tls=tls,
    )
    record.without = {
        name: value
        for g, value in drop_one(Gm, b, support, seed=seed, tls=tls).items()
        for j, _ in members(g)
        for name in printed_terms(lhs, lib[j])
    }
    record.pareto = [
        {
            "terms": {
                lib[j].short(): float(f * p.coef[g]) for g in p.support for j, f in members(g)
            },
            "complexity": p.complexity,
            "held_out": p.held_out,
            "chosen": p.chosen,
        }
        for p in front
    ]

"""The weak form's alternatives that the data tell apart from the returned equation.

The verdicts (:mod:`.._verdicts`) call a term uncertain where an equation within reach of
the best on the weak form of the surrogate lacks it, or holds it where the returned one
does not; the surrogate's own errors can put an equation within that reach which the data
themselves reject, and so can those of the surrogate before tuning (:mod:`._untuned`). So
on noisy data (noise / std at least ``SHAPE_TOL_MIN``) the check on the data
(:mod:`._refit`) refits the closest of those alternatives (reasons ``REFITTED``, at most
``APART``) as it refits the returned equation (the
surrogate trained on from the final fit's checkpoint under each, the same epochs and
weight), and one the data fit worse than the returned equation by more than ``REFIT_CHI2``
is told apart from it and leaves the alternatives. A term of the returned equation that
only such alternatives lacked is then determined; a term it lacks that only they held is
excluded, above the floor it had. Every other verdict stands: an alternative the data fit
as well or better, and the symmetry hypothesis's, the stand-in and the floor
alternatives, keep theirs. ``FitRecord.refits`` keeps each statistic
under ``"= a + b"``.

Cubic flux u_t = −0.3 d_x(u³) + 0.06 u_xx (zoo tuning half, σ 0.05, seed 0) came back
as −0.302 d_x(u³) + 0.054 u_xx with u_xx uncertain: −0.301 d_x(u³) + 0.067 d_xx(sin u)
fits the weak form within reach (4.01 % of u_t unexplained against 4.22 %), where sin u
stands in for u's linear part; the data fit it worse by 14.3. Nagumo (σ 0.05, seed 0) came
back exact but with u³ and u_xx uncertain: the surrogate before tuning saw
0.217 u − 0.210 u², which the data fit worse by 163. On clean data the ratio measures the
surrogate's own misfit, not noise: KdV–Burgers (the zoo's validation half, seed 0, seen)
had its true u_xx told apart from d_xx(sin u) in its place, and came back with d_xx(sin u)
determined.
"""

from __future__ import annotations

import logging
import math

from .._settings import REFIT_CHI2

__all__ = ["APART", "alternatives_to_refit", "doubted", "substituted", "tell_apart"]

log = logging.getLogger("symweak")

#: the closest weak-form alternatives refitted on the data per equation
APART = 3
#: the reasons of the alternatives refitted: the weak form's, the surrogate before tuning's
REFITTED = ("fit", "untuned")


def alternatives_to_refit(record, lib: dict) -> list[list[str]]:
    """The supports of ``record``'s alternatives of the reasons ``REFITTED`` (closest
    first) other than the returned equation, whose terms are all candidates in ``lib``:
    at most ``APART``."""
    returned = set(record.intervals)
    out: list[list[str]] = []
    for alt in record.alternatives:
        names = list(alt["terms"])
        if alt.get("reason") not in REFITTED or set(names) == returned:
            continue
        if all(t in lib for t in names) and names not in out:
            out.append(names)
    return out[:APART]


def tell_apart(record, statistics: dict) -> dict | None:
    """Record the refits of ``record``'s alternatives (``statistics``: ``{tuple of terms:
    n·(ℒ_alternative − ℒ_returned)/ℒ_returned}``) and drop those beyond ``REFIT_CHI2``
    from its alternatives, with the verdicts only they made uncertain (module notes).
    Returns ``{term: its floor before}`` for the terms it determined (their drops are
    refitted next: :func:`doubted`), or None where no verdict changed."""
    told = []
    for names, value in statistics.items():
        record.refits["= " + " + ".join(names)] = float(value)
        if value > REFIT_CHI2:
            told.append(set(names))
    record.alternatives = [
        a
        for a in record.alternatives
        if a.get("reason") not in REFITTED or set(a["terms"]) not in told
    ]
    returned = set(record.intervals)
    rest = [returned, *(set(a["terms"]) for a in record.alternatives)]
    fresh, changed = {}, []
    for term, verdict in list(record.verdicts.items()) if told else ():
        if verdict != "uncertain":
            continue
        if term in returned:
            if any(term not in s for s in told) and all(term in s for s in rest):
                record.verdicts[term] = "determined"
                fresh[term] = record.floors.pop(term, math.inf)
                changed.append(term)
        elif any(term in s for s in told) and not any(term in s for s in rest):
            del record.verdicts[term]
            floor = record.floors.pop(term, None)
            if floor is not None:
                record.excluded[term] = floor
            changed.append(term)
    if not changed:
        return None
    untuned = getattr(record, "untuned", None) or {}
    if untuned.get("disputed"):  # the warning names only the terms still uncertain
        untuned["disputed"] = [t for t in untuned["disputed"] if t not in changed]
    log.info(
        "symweak: %s: the data fit %s worse than the equation returned by more than %.3g: "
        "%s", record.lhs, " and ".join(" + ".join(sorted(s)) for s in told), REFIT_CHI2,
        ", ".join(f"{t} {record.verdicts.get(t, 'excluded')}" for t in changed),
    )  # fmt: skip
    return fresh


def doubted(record, term: str, statistic: float, fresh: dict) -> None:
    """A term :func:`tell_apart` determined (``fresh``: ``{term: its floor before}``) whose
    drop the data fit better by more than ``REFIT_CHI2`` is uncertain again, with that
    floor: only the alternatives told apart lacked it, and the data do not need it either
    (a drop that fits as well makes it uncertain as any other, :func:`._refit.verdict`)."""
    if term in fresh and statistic < -REFIT_CHI2:
        record.verdicts[term] = "uncertain"
        record.floors[term] = fresh[term]
        log.info(
            "symweak: %s: %s is uncertain after all: only the equations the data told apart "
            "lacked it, and the data fit the equation better without it", record.lhs, term,
        )  # fmt: skip


def substituted(record, replaced: tuple, other: str, mine: set, lib: dict) -> list:
    """The supports of ``record``'s alternatives (not the returned one) that hold a term of
    ``replaced``, with ``other`` in their place (with none replaced, those that lack
    ``other``, with it added); none equal to the swap ``mine``."""
    out: list = []
    for alt in record.alternatives:
        terms = list(alt["terms"])
        stale = set(replaced) & set(terms) if replaced else other not in terms
        if alt.get("reason") == "fit" or not stale:
            continue
        names = list(dict.fromkeys([other if t in replaced else t for t in terms] + [other]))
        if set(names) != mine and all(t in lib for t in names) and names not in out:
            out.append(names)
    return out[:APART]

"""What one refit on the data records (:mod:`._refit`): a term's verdict, its floor and
the equation without it, or a swap and the equation with it, as alternatives."""

from __future__ import annotations

import logging
import math

from ...regress import MAX_ALTERNATIVES
from .._settings import REFIT_CHI2
from ._swaps import GAP

__all__ = ["swapped", "verdict"]

log = logging.getLogger("symweak")


def _alternative(record, terms: dict, held: float, statistic: float) -> None:
    """``terms`` (``{term: coefficient}``) an alternative of ``record`` (reason ``"data"``,
    second after the returned equation), unless it is one already."""
    if set(terms) in [set(a["terms"]) for a in record.alternatives]:
        return
    entry = {
        "terms": dict(terms),
        "held_out": float(held),
        "margin": 1.0 - statistic / REFIT_CHI2,
        "reason": "data",
    }
    record.alternatives.insert(min(1, len(record.alternatives)), entry)
    del record.alternatives[MAX_ALTERNATIVES:]


def verdict(record, term: str, statistic: float, coef: float, without: dict) -> bool:
    """Record one refit on ``record`` (a :class:`~.._history.FitRecord`): the statistic
    in ``record.refits``; below ``REFIT_CHI2`` the term uncertain, its floor (from its
    coefficient ``coef`` in the refit with it), and the equation ``without`` it
    (``{term: coefficient}``) an alternative (reason ``"data"``). Returns whether the term
    became uncertain."""
    record.refits[term] = float(statistic)
    if statistic < -REFIT_CHI2:  # a nested fit cannot fit worse once settled: no evidence
        log.info(
            "symweak: %s: the data fit the equation better without %s (likelihood ratio "
            "%.3g): the refits are not settled, so its verdict stands", record.lhs, term,
            -statistic,
        )  # fmt: skip
        return False
    if statistic >= REFIT_CHI2:
        return False
    record.verdicts[term] = "uncertain"
    log.info(
        "symweak: %s: the data fit as well without %s (likelihood ratio %.3g < %.3g): "
        "uncertain", record.lhs, term, statistic, REFIT_CHI2,
    )  # fmt: skip
    ratio = math.sqrt(REFIT_CHI2 / max(statistic, REFIT_CHI2 / 100.0))
    record.floors[term] = max(float(record.floors.get(term, 0.0)), abs(coef) * ratio)
    record.excluded.pop(term, None)
    _alternative(record, without, record.without.get(term, record.residual), statistic)
    return True


def cutoff(tie, replaced: int) -> float:
    """The statistic a swap of ``replaced`` terms must reach for the verdicts to stand
    (:func:`swapped`)."""
    if tie == GAP:
        from scipy.stats import chi2

        return float(chi2.ppf(0.999, replaced))
    return REFIT_CHI2 if tie else -REFIT_CHI2


def swapped(record, term, other: str, statistic: float, swap: dict, tie: bool = False) -> bool:
    """Record one swap of ``term`` (a term, or a tuple of terms replaced together) for
    ``other`` on ``record``: the statistic in ``record.refits`` under ``"term -> other"``.
    Below −``REFIT_CHI2`` (the data fit the swap better), or with ``tie`` below
    ``REFIT_CHI2`` (as well: the replaced terms are the less readable model; for a
    :data:`._swaps.GAP`, χ² at 99.9 % with as many degrees of freedom as terms replaced),
    all are uncertain — the replaced terms' floors infinite (the other stands in for them)
    unless a drop measured one, the other's the one it was excluded above — and the
    ``swap`` equation an alternative.
    Returns whether the verdicts changed."""
    replaced = (term,) if isinstance(term, str) else tuple(term)
    key = f"{' + '.join(replaced)} -> {other}" if replaced else f"+ {other}"
    record.refits[key] = float(statistic)
    if statistic >= cutoff(tie, len(replaced)):
        return False
    for name in replaced:
        record.verdicts[name] = "uncertain"
        record.floors.setdefault(name, math.inf)  # a floor a drop measured stays
        record.excluded.pop(name, None)
    record.verdicts[other] = "uncertain"
    floor = record.excluded.pop(other, None)
    if floor is not None:
        record.floors[other] = float(floor)
    _alternative(record, swap, record.residual, statistic)
    return True

"""A determined term that an alternative holds below the size the data would detect.

The check on the data (:mod:`._refit`) measures how much worse the data fit without each
of the weakest determined terms: the likelihood ratio of that drop grows with the square
of the term's size, so the term's coefficient c in the returned equation scaled by
√(``REFIT_CHI2``/statistic) is the size the data would just detect. An alternative the
data refits found (reason ``"data"``) may hold the term below that size: then that
alternative without it is one too, and the term is not determined. The alternatives of
the surrogate before tuning are not weighed so (:mod:`._untuned`: a term that surrogate
cannot tell about keeps its verdict; weighed, Nagumo at σ 0.05 lost its true u², u³ and
u_xx, the zoo's tuning half, seeds 0 and 1), nor the weak form's (its search scores each
alternative without any one of its terms). A Zeldovich front,
u_t = 0.1 u_xx + u² − u³ (10 % point columns, σ = 0.1, other units), came back as
0.097 u + 0.017 u² − 0.12 u³ with u determined (its drop: 677, floor 0.012), while the
data fit −0.0009 u + 0.34 u² − 0.35 u³ + 0.0022 u_xx, the truth, better.
"""

from __future__ import annotations

import logging
import math

from ...regress import MAX_ALTERNATIVES
from .._settings import REFIT_CHI2
from ._adopt import returned_terms

__all__ = ["faint"]

log = logging.getLogger("symweak")


def faint(record) -> list[str]:
    """Make uncertain each determined term of ``record`` (a
    :class:`~.._history.FitRecord` after its refits) that a data alternative holds with
    |coefficient| below the size its drop refit says the data would detect (module notes):
    that alternative without the term joins the alternatives (reason ``"data"``) and the
    term's floor is that size. Returns the terms made uncertain."""
    returned = returned_terms(record)
    out: list[str] = []
    for term, verdict in list(record.verdicts.items()):
        statistic, coef = record.refits.get(term), returned.get(term)
        if verdict != "determined" or statistic is None or coef is None:
            continue
        if statistic < REFIT_CHI2:  # a drop below the cutoff made it uncertain already
            continue
        floor = abs(float(coef)) * math.sqrt(REFIT_CHI2 / statistic)
        holder = next(
            (
                alt
                for alt in record.alternatives
                if alt.get("reason") == "data"
                and term in alt["terms"]
                and abs(float(alt["terms"][term])) < floor
            ),
            None,
        )
        if holder is None:
            continue
        record.verdicts[term] = "uncertain"
        record.floors[term] = max(float(record.floors.get(term, 0.0)), floor)
        record.excluded.pop(term, None)
        without = {t: c for t, c in holder["terms"].items() if t != term}
        if without and set(without) not in [set(a["terms"]) for a in record.alternatives]:
            entry = {**holder, "terms": without, "reason": "data"}
            if len(record.alternatives) < MAX_ALTERNATIVES:
                record.alternatives.append(entry)
            else:  # no room: the holder gives way to itself without the term
                record.alternatives[record.alternatives.index(holder)] = entry
        log.info(
            "symweak: %s: an equation the data cannot tell apart holds %s at %.3g, below "
            "the %.3g the data would detect: uncertain",
            record.lhs, term, float(holder["terms"][term]), floor,
        )  # fmt: skip
        out.append(term)
    return out

"""What the data determine, per equation, on the final weak system of either method: the
verdict of each term, the equations the data cannot tell apart from the best one, and the
detection floor of the terms those equations differ in (:func:`symweak.regress.judge`;
docs/verdicts.md). Stored on the equation's :class:`~._history.FitRecord`."""

from __future__ import annotations

import numpy as np

from ..ir import Equation
from ..regress import judge, term_complexity
from ._library import kept_indices

__all__ = ["judge_equation", "printed_terms"]


def printed_terms(lhs, term) -> dict:
    """``{name: factor}``: the terms an equation shows for ``term`` (itself, or each
    monomial of a sum: (u² + v²)·v prints as u²·v and v³)."""
    return {t.short(): float(k) for t, k in Equation(lhs, {term: 1.0}).coefficients.items()}


def judge_equation(lhs, lib, G, b, coef, record, *, how, constraints, seed: int) -> None:
    """Fill ``record.verdicts``, ``record.alternatives`` and ``record.floors`` for one
    equation: ``lib`` its candidate terms, ``G``/``b`` its weak system (NumPy, columns as
    ``lib``), ``coef`` the returned coefficients (0 outside the support)."""
    coef = np.asarray(coef, dtype=float)
    if len(coef) != len(lib) or not len(lib):
        return
    found = judge(
        G,
        b,
        np.flatnonzero(coef),
        complexity=term_complexity(lib, how),
        keep=kept_indices(lib, constraints),
        seed=seed,
    )
    names = [printed_terms(lhs, t) for t in lib]
    record.verdicts = {n: v for j, v in found.verdicts.items() for n in names[j]}
    record.alternatives = [
        {
            "terms": {n: float(k * a.coef[j]) for j in a.support for n, k in names[j].items()},
            "held_out": a.held_out,
            "margin": a.margin,
            "reason": a.reason,
        }
        for a in found.alternatives
    ]
    record.floors = {
        n: float(abs(k) * floor) for j, floor in found.floors.items() for n, k in names[j].items()
    }

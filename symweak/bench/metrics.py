"""The paper's metrics (section 5.2): TPR, E∞, E₂ on coefficients and the reconstruction MSE ℒ.

Terms are compared as canonical IR terms, whose equality is proportionality of strong forms
(see :class:`symweak.ir.Term`): ``-0.5*d_x(u^2)`` and ``-u*u_x`` are the same term with the
same coefficient once canonical.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..ir import Equation, System

__all__ = [
    "EquationScore",
    "VerdictScore",
    "reconstruction_mse",
    "score",
    "score_system",
    "verdict_scores",
]


@dataclass(frozen=True)
class EquationScore:
    """Scores of one discovered equation against the truth."""

    tpr: float
    e_inf: float
    e_2: float
    true_positives: tuple[str, ...]
    false_negatives: tuple[str, ...]
    false_positives: tuple[str, ...]

    @property
    def exact_structure(self) -> bool:
        return self.tpr == 1.0

    def as_dict(self) -> dict:
        return {
            "TPR": self.tpr,
            "E_inf": self.e_inf,
            "E_2": self.e_2,
            "TP": list(self.true_positives),
            "FN": list(self.false_negatives),
            "FP": list(self.false_positives),
        }


def _coefficients(eq: Equation | Mapping) -> dict:
    return dict(eq.coefficients) if isinstance(eq, Equation) else dict(eq)


def score(found: Equation, truth: Equation) -> EquationScore:
    """TPR = TP/(TP+FN+FP); E∞ = max_j |ξ̂_j-ξ*_j|/|ξ*_j| over true terms; E₂ = ‖ξ̂-ξ*‖/‖ξ*‖."""
    if found.lhs != truth.lhs:
        raise ValueError(
            f"Left-hand sides differ: found {found.lhs.short()}, truth {truth.lhs.short()}."
        )
    f, t = _coefficients(found), _coefficients(truth)
    tp = [k for k in t if k in f]
    fn = [k for k in t if k not in f]
    fp = [k for k in f if k not in t]
    denom = len(tp) + len(fn) + len(fp)
    tpr = len(tp) / denom if denom else 1.0
    e_inf = max((abs(f.get(k, 0.0) - v) / abs(v) for k, v in t.items()), default=0.0)
    keys = set(t) | set(f)
    diff = math.sqrt(sum((f.get(k, 0.0) - t.get(k, 0.0)) ** 2 for k in keys))
    norm = math.sqrt(sum(v**2 for v in t.values()))
    e_2 = diff / norm if norm else diff
    names = lambda ks: tuple(k.short() for k in ks)  # noqa: E731
    return EquationScore(tpr, e_inf, e_2, names(tp), names(fn), names(fp))


def score_system(found: System | Equation, truth: System | Equation) -> list[EquationScore]:
    """One score per true equation, matched by left-hand side."""
    found_eqs = list(found) if isinstance(found, System) else [found]
    truth_eqs = list(truth) if isinstance(truth, System) else [truth]
    by_lhs = {e.lhs: e for e in found_eqs}
    out = []
    for t in truth_eqs:
        f = by_lhs.get(t.lhs, Equation(t.lhs, {}))
        out.append(score(f, t))
    return out


@dataclass(frozen=True)
class VerdictScore:
    """What a run's verdicts (docs/verdicts.md) say against the truth: ``honest`` (no false
    term determined, every true term determined or uncertain), ``exact`` (the determined
    terms are the truth, none uncertain), and the number of uncertain terms."""

    honest: bool
    exact: bool
    uncertain: int


def verdict_scores(result, truth: System | Equation) -> list[VerdictScore]:
    """One :class:`VerdictScore` per true equation of ``result`` (a Discovery); an equation
    without verdicts is judged by its returned terms, all taken as determined."""
    truth_eqs = list(truth) if isinstance(truth, System) else [truth]
    fits = {f.lhs: f.verdicts for f in result.history.fits}
    found = {e.lhs.short(): e for e in result.system}
    out = []
    for t in truth_eqs:
        lhs = t.lhs.short()
        verdicts = fits.get(lhs) or {
            k.short(): "determined" for k in (found[lhs].coefficients if lhs in found else {})
        }
        true = {k.short() for k in t.coefficients}
        sure = {k for k, v in verdicts.items() if v == "determined"}
        unsure = {k for k, v in verdicts.items() if v == "uncertain"}
        out.append(
            VerdictScore(
                honest=not (sure - true) and true <= sure | unsure,
                exact=sure == true and not unsure,
                uncertain=len(unsure),
            )
        )
    return out


def reconstruction_mse(
    predicted: Mapping[str, np.ndarray], clean: Mapping[str, np.ndarray]
) -> dict[str, float]:
    """ℒ(Û, U) = mean (Û - U)² per field, on the same points."""
    out = {}
    for name, ref in clean.items():
        if name not in predicted:
            continue
        pred = np.asarray(predicted[name])
        ref = np.asarray(ref)
        if pred.shape != ref.shape:
            raise ValueError(f"{name}: predicted shape {pred.shape} != reference {ref.shape}.")
        out[name] = float(np.mean(np.abs(pred - ref) ** 2))
    return out

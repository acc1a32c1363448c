"""Choosing among test-function scales, for both methods: the first of several fits whose
residual is within ``scale_switch`` of the least (:func:`first_within`), and the full-grid
method's choice by the supports that hold on every scale (:func:`choose_scale`)."""

from __future__ import annotations

import numpy as np

from ..regress import LOG_PENALTY, refit_support, term_complexity

__all__ = ["choose_scale", "first_within"]


def first_within(residuals: list[tuple[str, float]], switch: float) -> str:
    """The first name of ``residuals`` (``[(name, residual)]``, in the order tried) whose
    residual is within ``switch`` times the smallest."""
    smallest = min(r for _, r in residuals)
    return next(k for k, r in residuals if r <= switch * smallest)


def choose_scale(tried: dict, config) -> str:
    """The scale whose fit is kept, from ``tried`` (``{scale: (residual, tests, designs,
    fits)}``, in the order tried).

    Each scale's selected supports
    are refitted on every scale's test functions, and the supports kept are those of least
    Σ_equations [max over scales of log(r_s(S) / min_S' r_s(S')) + penalty × complexity(S)]
    — the `log` criterion's price per term against the worst scale's misfit: an equation
    must hold against every scale's test functions, and a term is kept when some scale
    needs it. Among the scales that selected those supports, the residual rule picks the
    one whose coefficients are kept (the first within ``scale_switch`` of the least).
    Residuals of different scales are not comparable:
    PDE-FIND's Kuramoto–Sivashinsky file (domain 32π, many cells) has a 1.5× smaller
    residual under the large "axis" supports, where u_xxxx's column vanishes, and the
    residual rule kept −0.499 d_x(u²) − 0.938 u_xx at σ = 0.1; the support rule keeps
    u_xxxx (the "cap" fit) at σ 0.1–1, and changes no outcome of the 54 tuning and paper
    runs (docs/benchmarks.md)."""

    def by_residual(names):
        return first_within([(k, tried[k][0]) for k in names], config.tests.scale_switch)

    names = list(tried)
    if len(names) == 1:
        return names[0]
    supports = {
        k: {lhs: tuple(int(j) for j in fit.support) for lhs, (_, fit) in tried[k][3].items()}
        for k in names
    }
    score = dict.fromkeys(names, 0.0)
    for lhs in supports[names[0]]:
        lib = tried[names[0]][2][lhs][0]
        weights = term_complexity(lib, config.selection.complexity)
        misfit = {}
        for k in names:
            for s in names:
                _, G, b = tried[s][2][lhs]
                sup = list(supports[k][lhs])
                coef = refit_support(G, b, sup, False) if sup else np.zeros(G.shape[1])
                misfit[k, s] = float(np.linalg.norm(G @ coef - b) / (np.linalg.norm(b) or 1.0))
        for k in names:
            worst = max(
                np.log(max(misfit[k, s], 1e-300) / max(min(misfit[q, s] for q in names), 1e-300))
                for s in names
            )
            sup = list(supports[k][lhs])
            size = len(sup) if weights is None else float(weights[sup].sum())
            score[k] += worst + LOG_PENALTY * size
    best = min(names, key=lambda k: score[k])
    return by_residual([k for k in names if supports[k] == supports[best]])

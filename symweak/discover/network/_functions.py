"""A function the selection could not see: where the noise hides the difference between
f(u) and its cubic Taylor polynomial, the selection is offered only the polynomial and the
verdicts judge f(u) beside it (:func:`._extract.verdict_terms`). When the verdicts
determine f(u) and the equation they prefer holds it, that equation is returned: the
selection never weighed f(u), so keeping its polynomial stand-in is not a choice the data
made. A fixture of the exp-flux family (u_t = 0.4 d_x(eᵘ) + 0.1 u_xx, |u| <= 0.9, r 10 %,
σ 0.05): the selection returned 0.41 u_x + 0.25 d_x(u²) + 0.10 u_xx, the verdicts
determined d_x(eᵘ) and u_xx (0.40 and 0.099)."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from ..._seeds import child_seed
from ...regress import Fit, judge, refit_support, term_complexity
from .._library import EXPANSION_DEGREE, kept_indices, polynomial_alternatives

__all__ = ["adopt_functions", "apart"]

log = logging.getLogger("symweak")


def adopt_functions(state, cands, system, results, readable):
    """``(results, cands)`` with each equation whose verdicts determine one of its
    verdict-only terms refitted (total least squares) on the support they prefer; such an
    equation's columns then include its verdict-only terms. Equations tied by ``pair``
    rules are left as they are."""
    if not any(cands.verdict_cols):
        return results, cands
    tied = {x for a, b_, _ in cands.ties for x in (a, b_)}
    G, b = (t.cpu().numpy() for t in system)
    cols = list(cands.cols if readable is None else cands.readable_cols)
    results = dict(results)
    changed = False
    for e, lhs in enumerate(state.problem.lhs):
        extra, fit = cands.verdict_cols[e], results[lhs][1]
        if not extra or lhs in tied or len(fit.coef) != len(cols[e]):
            continue
        wide = [*cols[e], *extra]
        lib = [cands.library[j] for j in wide]
        support = _preferred(state, e, lib, G[:, wide], b[:, e], fit.coef, len(cols[e]))
        if support is None:
            continue
        coef = refit_support(G[:, wide], b[:, e], support, True)
        residual = float(np.linalg.norm(G[:, wide] @ coef - b[:, e]) / np.linalg.norm(b[:, e]))
        new = Fit(coef, residual, fit.threshold, fit.method)
        results[lhs] = ({lib[j]: float(coef[j]) for j in new.support}, new)
        cols[e] = wide
        changed = True
        log.info(
            "symweak: %s: returned with %s instead of a polynomial stand-in (the verdicts "
            "determine it)",
            lhs.short(),
            ", ".join(lib[j].short() for j in support if j >= len(fit.coef)),
        )
    if not changed:
        return results, cands
    field = "cols" if readable is None else "readable_cols"
    verdict_cols = [
        [] if len(c) > len(o) else v
        for c, o, v in zip(cols, getattr(cands, field), cands.verdict_cols)
    ]
    return results, dataclasses.replace(cands, **{field: cols}, verdict_cols=verdict_cols)


def _preferred(state, e, lib, G, b, coef, n_fit):
    """The support the verdicts prefer when it holds a determined verdict-only term (column
    ``n_fit`` or later), else None."""
    chosen = np.zeros(len(lib))
    chosen[:n_fit] = coef
    found = judge(
        G,
        b,
        np.flatnonzero(chosen),
        complexity=term_complexity(lib, state.config.selection.complexity),
        keep=kept_indices(lib, state.problem.constraints),
        seed=child_seed(state.problem.seed, "verdicts") + e,
        floors=False,
        apart=apart(lib, n_fit),
    )
    if not found.alternatives:
        return None
    best = found.alternatives[0].support
    if any(j >= n_fit and found.verdicts.get(j) == "determined" for j in best):
        return list(best)
    return None


def apart(lib, n_fit: int) -> dict:
    """``{j: its polynomial stand-in's columns}`` for each verdict-only function (column
    ``n_fit`` or later): judged in place of its stand-in, never beside it — beside it, a
    function fits any polynomial of its own expansion (Nagumo, u − u³ on |u| <= 1, at
    σ 0.05: −8.5 u + 1.7 u² + 8.2 sin u + 0.12 u_xx, sin u "determined")."""
    alts = polynomial_alternatives(lib, EXPANSION_DEGREE)
    return {j: alts[j] for j in range(n_fit, len(lib)) if alts.get(j)}

"""The final fit's sparse selection on one weak system (:func:`select`) and the preference
for readable terms.

Readable terms: an open-form term whose F has constants fitted inside it (sin(0.8678 u −
0.0656)) is, over the range of the data, often a Taylor-disguised polynomial: d_xx of it
stands in for u_xx. A scientist cannot use that, so when the kept fit holds such a term the
fit is made again from the library's terms without fitted constants (polynomials, sin u,
u·sin v, …), and kept when its residual is at most ``READABLE_SLACK`` (25 %) larger (tuned
on the zoo's tuning half). A term the data need keeps a readable form; one with no readable
stand-in costs far more than 25 % to drop and stays.
"""

from __future__ import annotations

import logging

import numpy as np
import sympy

from ..._seeds import child_seed
from ...regress import (
    LOG_PENALTY,
    best_within,
    drop_minor_terms,
    fit_equations,
    mstls,
    prefer_neighbours,
    refit_support,
    stability_selection,
    term_complexity,
    tls_refit,
)
from .._library import (
    READABLE_SLACK,
    has_fitted_constants,
    kept_indices,
    power_neighbours,
    prefer_expansions,
    term_families,
)
from .._settings import (
    STABILITY_PENALTY,
    STABILITY_THRESHOLD,
)

log = logging.getLogger("symweak")


#: when an open-form term's fit is judged against the readable terms, each constant fitted
#: inside it counts as this many units of complexity (0: not counted)
INNER_CONSTANT_COST = 1.0


def select(state, cands, G, b, refit=None, readable=None, stable=False):
    """Sparse fits of every equation (``{lhs: (rhs, fit)}``) and the fits made, keyed by the
    design each was made on (its library and left-hand side); with ``refit`` (what a
    previous call on the same system made) each design's support is refitted by total least
    squares instead of selected again; with ``readable`` (a tuple of open-form terms, may be
    empty) only the terms without fitted constants inside F are offered (``readable_cols``:
    offering the snapped forms of open forms (sin(0.85 u) -> sin u) or the polynomial
    closure as well was measured and dropped, see docs/network.md);
    with ``stable``, stability selection (when ``stability_resamples`` > 0) instead of one
    selection on all test functions."""
    sel, constraints = state.config.selection, state.problem.constraints
    Gn, bn = G.cpu().numpy(), b.cpu().numpy()
    designs = {}
    for e, lhs in enumerate(state.problem.lhs):
        cols = cands.cols[e] if readable is None else cands.readable_cols[e]
        designs[lhs] = ([cands.library[j] for j in cols], Gn[:, cols], bn[:, e])
    made: dict[tuple, object] = {}

    def fit_fn(G, b, lib):
        # designs come in the same order on every system of one library: a support chosen
        # on one system (the scales stacked) can be refitted on another (one scale)
        key = (tuple(lib), len(made))
        keep = kept_indices(lib, constraints)
        complexity = term_complexity(lib, sel.complexity)
        families = term_families(lib)

        def select(Gs, bs, penalty=LOG_PENALTY):
            return mstls(
                Gs,
                bs,
                keep=keep,
                criterion=sel.criterion,
                complexity=complexity,
                families=families,
                penalty=penalty,
            )

        if refit is not None:
            fit = tls_refit(G, b, refit[key])
            fit.probabilities = refit[key].probabilities
        elif stable and sel.stability_resamples:
            fit = stability_selection(
                G,
                b,
                lambda Gs, bs: select(Gs, bs, STABILITY_PENALTY),
                resamples=sel.stability_resamples,
                threshold=STABILITY_THRESHOLD,
                majority=True,
                keep=keep,
                seed=child_seed(state.problem.seed, "stability"),
            )
        else:
            fit = select(G, b)
        if stable and refit is None:
            # a function term must explain the weak form clearly better than its
            # polynomial expansion (-6.35 u + 7.49 sin u is 1.2 u - 1.2 u^3 in disguise)
            fit = prefer_expansions(
                G, b, fit, lib, keep, sel.criterion, complexity, families,
                values=state.problem.obs.fields,
            )  # fmt: skip
            # a power law's neighbours (d_xx(u²) beside d_xx(u³)) compared directly
            fit = prefer_neighbours(G, b, fit, power_neighbours(lib), complexity)
        if refit is not None:
            # on the system that gives the coefficients, where the support is refitted by
            # total least squares
            fit = drop_minor_terms(
                G, b, fit, sel.minor_ratio, keep, lambda G, b, s: refit_support(G, b, s, True)
            )
        made[key] = fit
        return fit

    return fit_equations(designs, cands.ties, fit_fn), made


def prefer_readable(state, cands, system, residual, results) -> dict:
    """The fit from terms without fitted constants, when the kept fit holds an open-form
    term: ``{"open": r, "readable": r', "kept": ..., "fit": (results, made)}`` (empty when
    there was nothing to replace)."""
    slack = READABLE_SLACK
    used = open_terms(results)
    if not used:
        return {}
    found, made = select(state, cands, *system, readable=used)
    if any(not rhs for rhs, _ in found.values()):
        return {}
    other = float(np.mean([fit.residual for _, fit in found.values()]))
    kept = "readable" if other <= (1.0 + slack) * residual else "open"
    out = {"open": residual, "readable": other}
    if kept == "open" and INNER_CONSTANT_COST:
        # the readable selection pays for every term it keeps; the open form's price left
        # out what it was fitted with: its inner constants
        out["readable_within"] = within = _readable_within(state, cands, system, results)
        if within <= (1.0 + slack) * residual:
            kept = "readable"
    log.info(
        "final fit: open-form terms %s (residual %.4g) vs terms without fitted constants "
        "(%.4g; %.4g at the open fit's complexity): keeping the %s fit",
        ", ".join(map(str, used)),
        residual,
        other,
        out.get("readable_within", other),
        kept,
    )
    return {**out, "kept": kept, "fit": (found, made)}


def _inner_constants(term) -> int:
    """How many constants a fit put inside ``term``'s F (sin(0.8522 u + 0.2168): 2)."""
    return sum(1 for c in term.F.atoms(sympy.Number) if not c.is_integer)


def _readable_within(state, cands, system, results) -> float:
    """The mean over equations of the smallest weak-form residual of a support without
    fitted constants that is no more complex than the equation's kept right-hand side,
    each constant fitted inside an open form counted as ``INNER_CONSTANT_COST`` units
    (an equation without open forms counts with its own residual)."""
    how = state.config.selection.complexity

    def weights(terms):
        w = term_complexity(terms, how)
        return np.ones(len(terms)) if w is None else w

    G, b = system[0].cpu().numpy(), system[1].cpu().numpy()
    out = []
    for e, lhs in enumerate(state.problem.lhs):
        rhs, fit = results[lhs]
        if not any(has_fitted_constants(t) for t in rhs):
            out.append(fit.residual)
            continue
        terms = list(rhs)
        budget = float(weights(terms).sum()) + INNER_CONSTANT_COST * sum(
            _inner_constants(t) for t in terms
        )
        cols = cands.readable_cols[e]
        lib = [cands.library[j] for j in cols]
        keep = kept_indices(lib, state.problem.constraints)
        _, res = best_within(G[:, cols], b[:, e], weights(lib), budget, keep)
        out.append(res)
    return float(np.mean(out))


def open_terms(results) -> tuple:
    """The terms with constants fitted inside F that ``results`` hold, in order."""
    return tuple(
        dict.fromkeys(t for rhs, _ in results.values() for t in rhs if has_fitted_constants(t))
    )

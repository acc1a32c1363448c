"""The final fit's records: per equation, the inclusion probabilities, 95 % intervals, each
kept term's price and the Pareto front of supports (:class:`~.._history.FitRecord`)."""

from __future__ import annotations

import numpy as np

from ..._seeds import child_seed
from ...regress import (
    bootstrap_intervals,
    pareto_front,
    refit_support,
    self_ties,
    term_complexity,
    tied_intervals,
    tied_pareto,
    tied_probabilities,
)
from .._history import FitRecord
from .._library import kept_indices
from .._settings import (
    BOOTSTRAP_RESAMPLES,
)
from .._verdicts import agree_ties, judge_equation, record_uncertainty, split_interval
from ._functions import apart


def _designs(state, cands, G, b, readable, verdicts: bool = False) -> dict:
    """``{lhs: (terms, G, b)}`` of every equation on one final system (as :func:`select`;
    with ``verdicts``, the verdicts' own terms as columns after the fit's)."""
    Gn, bn = G.cpu().numpy(), b.cpu().numpy()
    out = {}
    for e, lhs in enumerate(state.problem.lhs):
        cols = cands.cols[e] if readable is None else cands.readable_cols[e]
        if verdicts and cands.verdict_cols:
            cols = [*cols, *cands.verdict_cols[e]]
        out[lhs] = ([cands.library[j] for j in cols], Gn[:, cols], bn[:, e])
    return out


def _tied_uncertainty(state, cands, system, others, results, readable) -> dict:
    """``{lhs: (intervals, Pareto front)}`` of equations tied by pair rules, on their joint
    design: bootstrap intervals (rows of both equations resampled) widened by the support
    refitted on the other variants, and the front of joint supports split per equation."""
    cfg = state.config

    def designs(G, b):
        return _designs(state, cands, G, b, readable)

    seed = child_seed(state.problem.seed, "stability") + 1

    def interval_fn(G, b, support):
        return bootstrap_intervals(
            G, b, support, resamples=BOOTSTRAP_RESAMPLES, seed=seed, tls=True
        )

    def front_fn(G, b, chosen, terms):
        weights = term_complexity(terms, cfg.selection.complexity)
        keep = kept_indices(terms, state.problem.constraints)
        return pareto_front(G, b, chosen=chosen, complexity=weights, keep=keep, seed=seed, tls=True)

    refit = lambda G, b, support: refit_support(G, b, support, True)  # noqa: E731
    more = [(designs(*o), refit) for o in others]
    fits = {lhs: fit for lhs, (_, fit) in results.items()}
    main = designs(*system)
    intervals = tied_intervals(main, cands.ties, fits, interval_fn, more)
    fronts = tied_pareto(main, cands.ties, fits, front_fn)
    return {lhs: (intervals.get(lhs, {}), fronts.get(lhs, [])) for lhs in intervals}


def _uncertainty(
    state, cands, system, e, cols, fit, record, others=(), groups=None, overlap=None
) -> None:
    """:func:`.._verdicts.record_uncertainty` on equation ``e``'s design of the system that
    gave the coefficients (``others``: the other variants' systems, which widen the
    intervals; ``groups``: terms tied within the equation by a ``pair`` rule; ``overlap``:
    the rows' correlation, which widens them too)."""
    lib = [cands.library[j] for j in cols]
    record_uncertainty(
        record,
        state.problem.lhs[e],
        lib,
        system[0].cpu().numpy()[:, cols],
        system[1].cpu().numpy()[:, e],
        fit.coef,
        how=state.config.selection.complexity,
        constraints=state.problem.constraints,
        seed=child_seed(state.problem.seed, "stability") + 1 + e,
        others=[(Gv.cpu().numpy()[:, cols], bv.cpu().numpy()[:, e]) for Gv, bv in others],
        groups=groups,
        overlap=overlap,
    )


def fit_records(state, cands, system, others, results, readable, overlap=None) -> list[FitRecord]:
    """One :class:`FitRecord` per equation of ``results`` (``{lhs: (rhs, fit)}``, fitted on
    ``system``; ``others``: the other variants' systems, and ``overlap``: the correlation of
    its test functions, :meth:`~symweak.weak.TestFunctionSet.overlap`, which widen the
    intervals)."""
    cfg = state.config
    tied = {x for a, b_, _ in cands.ties if a != b_ for x in (a, b_)}
    inner = {}
    if any(a == b_ for a, b_, _ in cands.ties):  # terms tied within an equation
        inner = self_ties(_designs(state, cands, *system, readable), cands.ties)
    tied_ci = {}
    if cfg.reporting.uncertainty and tied:
        tied_ci = _tied_uncertainty(state, cands, system, others, results, readable)
    designs = _designs(state, cands, *system, readable)
    tied_p = {}
    if tied:
        fits = {lhs: fit for lhs, (_, fit) in results.items()}
        tied_p = tied_probabilities(designs, cands.ties, fits)
    records = []
    for e, lhs in enumerate(state.problem.lhs):
        fit = results[lhs][1]
        cols = cands.cols[e] if readable is None else cands.readable_cols[e]
        record = FitRecord(
            lhs=lhs.short(),
            residual=fit.residual,
            method=fit.method,
            probabilities=_probabilities(cands, lhs, fit, cols, tied_p),
        )
        if cfg.reporting.uncertainty and lhs not in tied and len(fit.coef) == len(cols):
            _uncertainty(
                state, cands, system, e, cols, fit, record, others, inner.get(lhs), overlap
            )
        elif lhs in tied_ci:
            # equations fitted jointly by a pair rule: intervals and the Pareto front from
            # their joint design, each front point this equation's part of a joint support
            intervals, front = tied_ci[lhs]
            record.intervals = {
                name: interval
                for term, (lo, hi) in intervals.items()
                for name, interval in split_interval(lhs, term, lo, hi).items()
            }
            record.pareto = [
                {**point, "terms": {t.short(): c for t, c in point["terms"].items()}}
                for point in front
            ]
        records.append(record)
    if cfg.reporting.uncertainty:
        judge_fits(state, cands, system, results, readable, records)
    if cfg.reporting.uncertainty and tied:
        agree_ties(dict(zip(state.problem.lhs, records)), cands.ties)
    return records


def judge_fits(state, cands, system, results, readable, records, skip=()) -> None:
    """The verdicts of each equation of ``results`` on ``system`` (its candidates and the
    verdicts' own terms), into ``records`` (one :class:`FitRecord` per left-hand side, in
    order; those in ``skip`` are left as they are)."""
    tied = {x for a, b_, _ in cands.ties if a != b_ for x in (a, b_)}
    designs = _designs(state, cands, *system, readable)
    judged = _designs(state, cands, *system, readable, verdicts=True)
    cfg = state.config
    for e, (lhs, record) in enumerate(zip(state.problem.lhs, records)):
        if lhs in skip:
            continue
        fit = results[lhs][1]
        lib, G, b = judged[lhs]
        coef = np.asarray(fit.coef, dtype=float)
        if lhs in tied:  # the joint fit's coefficients are in the joint design's order
            coef = np.array([float(results[lhs][0].get(t, 0.0)) for t in designs[lhs][0]])
        if len(coef) == len(designs[lhs][0]):  # the verdicts' own terms: not in the fit
            coef = np.concatenate([coef, np.zeros(len(lib) - len(coef))])
        judge_equation(
            lhs,
            lib,
            G,
            b,
            coef,
            record,
            how=cfg.selection.complexity,
            constraints=state.problem.constraints,
            seed=child_seed(state.problem.seed, "verdicts") + e,
            rhs=results[lhs][0],
            apart=apart(lib),
            start=[fit.selected] if fit.selected and lhs not in tied else (),
        )


def _probabilities(cands, lhs, fit, cols, tied_p) -> dict:
    """``{term: inclusion probability}`` of one equation (a sum of monomials prints as its
    monomials: each gets the sum's probability)."""
    if lhs in tied_p:
        chosen = tied_p[lhs].items()
    elif fit.probabilities is not None and len(fit.probabilities) == len(cols):
        chosen = [(cands.library[j], p) for j, p in zip(cols, fit.probabilities) if p > 0]
    else:
        chosen = ()
    probs = {}
    for term, p in chosen:
        probs.update({name: float(p) for name in split_interval(lhs, term, 0.0, 0.0)})
    return probs

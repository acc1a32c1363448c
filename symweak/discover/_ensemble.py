"""``discover(..., surrogates=K, combine="vote")``: K network runs with child seeds, one
result.

The result shown is the run with the user's seed (so the point estimate is the same as
without an ensemble, and the intervals are about it). The K − 1 other members differ in
every random choice a seed makes — the surrogate's initialisation and Gaussians, the
held-out split, the test functions, the data batches — so their spread is the part of the
uncertainty that one run's bootstrap over test functions cannot see (the surrogate's own
variability). Per term of the shown equation:

* the inclusion probability becomes the fraction of the K members that kept the term;
* the 95 % interval becomes the envelope of the run's own bootstrap interval and every
  member's coefficient of that term.

Members run one after another (torch already uses the machine's cores for one run; on a
2-core machine parallel members only contend). Each member's equation is kept in
``history.ensemble``.
"""

from __future__ import annotations

import logging

from .._seeds import child_seed

__all__ = ["combine", "member_seeds"]

log = logging.getLogger("symweak")


def member_seeds(seed: int, ensemble: int) -> list[int]:
    """The seeds of the members after the first (which uses ``seed`` itself)."""
    base = child_seed(seed, "ensemble")
    return [base + 7919 * k for k in range(1, ensemble)]


def combine(equations, history, members) -> None:
    """Fold the members (``[(seed, equations)]``) into the shown run's fit records."""
    fits = {f.lhs: f for f in history.fits}
    total = 1 + len(members)
    history.ensemble = [
        {"seed": seed, "equations": [e.short() for e in eqs]} for seed, eqs in members
    ]
    for eq in equations:
        fit = fits.get(eq.lhs.short())
        if fit is None:
            continue
        others = []
        for _, eqs in members:
            match = [e for e in eqs if e.lhs == eq.lhs]
            others.append(
                {t.short(): float(c) for t, c in match[0].coefficients.items()} if match else {}
            )
        probabilities, intervals = dict(fit.probabilities), dict(fit.intervals)
        for term, coef in eq.coefficients.items():
            name = term.short()
            values = [o[name] for o in others if name in o]
            probabilities[name] = (1 + len(values)) / total
            lo, hi = intervals.get(name, (float(coef), float(coef)))
            intervals[name] = [min([lo, *values]), max([hi, *values])]
        fit.probabilities = probabilities
        fit.intervals = intervals
        _fold_verdicts(fit, eq, others)
    log.info("symweak: ensemble of %d runs folded into the intervals", total)


def _fold_verdicts(fit, eq, others) -> None:
    """The members are other surrogates of the same data: a term some of them hold and
    others lack is uncertain, and each member's equation that differs from the shown one
    joins the alternatives (reason "surrogate")."""
    if not fit.verdicts:
        return
    verdicts = dict(fit.verdicts)
    shown = {t.short() for t in eq.coefficients}
    seen = [set(o) for o in others if o]
    for term in set().union(shown, *seen):
        if any(term not in s for s in [shown, *seen]):
            verdicts[term] = "uncertain"
    known = [set(a["terms"]) for a in fit.alternatives]
    for o in others:
        if o and set(o) not in known:
            known.append(set(o))
            fit.alternatives.append(
                {
                    "terms": dict(o),
                    "held_out": float("nan"),
                    "margin": float("nan"),
                    "reason": "surrogate",
                }
            )
    fit.verdicts = verdicts
    # a term a member holds is uncertain, not excluded (its floor stays the main run's)
    fit.excluded = {t: v for t, v in fit.excluded.items() if t not in verdicts}

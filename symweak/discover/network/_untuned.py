"""The verdicts checked on the surrogate before tuning.

The tuning phase trains the surrogate on the data and on the weak form of the candidate
library the pruning read back, and the final fit takes the surrogate with the lowest
held-out data loss of any phase — often the tuned one. Judged on it, the library the
surrogate was pulled towards has a head start over every term outside it: the zoo's tanh
damping (u_t = 0.1 u_xx − 0.8 tanh u, r 10 %, σ 0.05, seed 1) was tuned on u and u³ and
came back as −0.77 u + 0.13 u³ + 0.086 u_xx, all determined and tanh u excluded, while the
surrogate before tuning (trained on the data and the searched network, which holds no
library yet) determines tanh u and u_xx.

So where the final surrogate is a tuned one, each equation is judged again on the best
surrogate before tuning (this run's own, without the members of ``surrogates=K``): a term
one of them determines and the other excludes is uncertain, and the alternatives of the
surrogate before tuning join the equation's (reason ``"untuned"``). A term the surrogate
before tuning cannot tell about (uncertain) keeps the tuned verdict: on the zoo's tuning
half (σ 0.05, seeds 0, 1) demoting those too cost Fisher–KPP's u_xx and Nagumo's u, u²
and u_xx, all right, and made no other run honest. The returned equation is not changed
(:func:`symweak.discover._verdicts.merge_untuned`).

The surrogate before tuning is weighed only where the held-out points do not reject it: its
held-out data loss against the final one's, n·(ℒ_before − ℒ_final)/ℒ_final over the n
held-out points, must stay below ``REFIT_CHI2``. Clean FitzHugh–Nagumo built for tuning
(seed 1) was judged on a surrogate from the pruning 1.63 times the final one's held-out loss
(a ratio of 164): it determined a false v_xx and made it uncertain, floor 0.86. The tanh
damping above: 1.014 times, a ratio of 3.7.
"""

from __future__ import annotations

import logging

from .._history import FitRecord
from .._settings import REFIT_CHI2
from .._verdicts import merge_untuned
from ._records import judge_fits

__all__ = ["recheck"]

log = logging.getLogger("symweak")


def _rejected(state, untuned) -> float | None:
    """The likelihood ratio n·(ℒ_before − ℒ_final)/ℒ_final of the held-out data loss of
    the surrogate before tuning against the final one's (n held-out points), where it is at
    least ``REFIT_CHI2``; None where it is below, or there are no held-out points."""
    check = getattr(state, "check", None)
    if check is None or len(untuned) < 3 or not state.best.loss > 0.0:
        return None
    ratio = len(check) * (untuned[2] - state.best.loss) / state.best.loss
    return ratio if ratio >= REFIT_CHI2 else None


def recheck(state, cands, system_fn, results, readable, records) -> None:
    """Judge each equation of ``results`` again on the surrogate before tuning
    (``state.untuned``; ``system_fn()`` gives the final fit's variant ``(G, b)`` on the
    surrogate as it is) and merge the verdicts into ``records``. Nothing is done where the
    final surrogate is not a tuned one, and equations tied by ``pair`` rules are left as
    they are."""
    untuned = getattr(state, "untuned", None)
    if untuned is None or state.best.phase != "tune":
        return
    tied = {x for a, b_, _ in cands.ties for x in (a, b_)}
    if all(lhs in tied for lhs in state.problem.lhs):
        return
    rejected = _rejected(state, untuned)
    if rejected is not None:
        log.info(
            "symweak: the surrogate before tuning (%s) fits the held-out points worse than "
            "the final one by a likelihood ratio of %.3g (at least %.3g): its verdicts are "
            "not weighed", untuned[0], rejected, REFIT_CHI2,
        )  # fmt: skip
        return
    state.surrogate.load_state_dict(untuned[1])
    try:
        system = system_fn()
    finally:
        state.best.restore()
    fresh = [FitRecord(lhs=r.lhs, residual=r.residual, method=r.method) for r in records]
    judge_fits(state, cands, system, results, readable, fresh, skip=tied)
    for lhs, record, other in zip(state.problem.lhs, records, fresh):
        if lhs in tied:
            continue
        disputed = merge_untuned(record, other, untuned[0])
        if disputed:
            log.info(
                "symweak: %s: the surrogate before tuning (%s) and after it disagree on %s: "
                "uncertain",
                record.lhs,
                untuned[0],
                ", ".join(disputed),
            )

"""Each weakly supported determined term checked on the data themselves.

The verdicts judge terms on the weak form of the surrogate, and a surrogate fitted to noisy
points carries errors of its own that a term can explain: a logistic spread with no drift,
u_t = 0.05 u_xx + 0.1 u − 2e-4 u² in cells/mm² and hours (10 % point columns, σ = 0.1,
seed 0), came back with −0.0025 u_x determined, the weak form without it leaving 1.26 %
unexplained against 0.44 %. The data do not need it: a surrogate trained on the data under
the equation without u_x fits them as well as one under the equation with it.

So for the weakest determined terms of each equation (those whose absence leaves the least
unexplained, at most ``REFIT_TERMS``), the surrogate is trained on from the final fit's
checkpoint for ``REFIT_EPOCHS`` epochs on ℒ_data + ``REFIT_LAMBDA``·ℒ_weak of the equation
(its coefficients by least squares every step, on this run's own surrogate), once with the
equation's terms and once without the term. With n training points the statistic
n·(ℒ_without − ℒ_with)/ℒ_with is a likelihood ratio for Gaussian errors: below
``REFIT_CHI2`` the data fit as well without the term, which is uncertain (reason
``"data"``): the equation without it, as that refit fits it, is an alternative whose margin
is 1 − statistic/``REFIT_CHI2``, and the term's detection floor is its coefficient scaled by
√(``REFIT_CHI2``/statistic) (the statistic grows with the square of a term's size).

A determined term that is a field itself (u; u_x under d_x) is also refitted with each
candidate that is a non-polynomial function of that field alone under the same derivative
in its place (sin u, tanh u; d_x(eᵘ)): where the data fit that swap better by more than
``REFIT_CHI2``, the term and the function are both uncertain (the zoo's tanh damping at
σ = 0.2, seed 1, came back as −0.706 u; the data fit −0.885 tanh u better by 13.6). A
function that fits only as well changes nothing (sin u beside u² fits Fisher–KPP's
u ∈ [0, 1] as well as u does: the readable term stays).

Nothing is done for equations tied by ``pair`` rules or terms the candidate library does
not hold; equations of one term are only swapped. A run whose tuning phase is shorter than
``REFIT_EPOCHS`` (``tune_epochs``, a quick run) is not checked, and the log says so: 20-epoch
refits gave other statistics than 50 and 100 (3.7 → 0.1 for the logistic u_x), which agreed.
``FitRecord.refits`` keeps each statistic (swaps under ``"term -> function"``).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import sympy
import torch
from sympy.core.function import AppliedUndef

from ..._trainer import adam
from ...compile import compile_expressions
from ...regress import MAX_ALTERNATIVES
from .._library import distinct_functions
from .._posed import observed_once
from .._settings import LR_JOINT_SURROGATE
from ._extract import shape_tolerance
from ._tune import _lstsq
from ._warmup import noise_ratio

__all__ = [
    "REFIT_CHI2",
    "REFIT_EPOCHS",
    "REFIT_LAMBDA",
    "REFIT_TERMS",
    "check",
    "swapped",
    "verdict",
]

log = logging.getLogger("symweak")

#: epochs of each refit (from the final fit's checkpoint)
REFIT_EPOCHS = 50
#: weight of the equation's weak form beside the data in a refit
REFIT_LAMBDA = 1.0
#: the likelihood ratio a term must reach to stay determined (χ² with one degree of
#: freedom at 99.9 %)
REFIT_CHI2 = 10.83
#: the weakest determined terms checked per equation
REFIT_TERMS = 2


class _Columns:
    """Library columns ``cols`` alone: their distinct functions compiled on their own
    (the library's module evaluates every F of the library, a refit needs a few), each
    column's function and multi-index."""

    def __init__(self, cands, cols: list[int], device) -> None:
        terms = [cands.library[c] for c in cols]
        funcs, index = distinct_functions(terms)
        inputs = cands.functions.inputs
        self.functions = compile_expressions(funcs, inputs, trainable=False).to(device)
        self.index = [index[t.F] for t in terms]
        self.alphas = [cands.lib_alphas[c] for c in cols]


def _weak(state, cands, e: int, columns: _Columns):
    """(residual of equation ``e`` on ``columns`` relative to ‖b‖², coefficients) on this
    run's own surrogate, only those columns integrated; the coefficients by the tuning
    phase's column-scaled least squares."""
    axes = state.quad.axes
    U64 = state.mean_grid(axes, members=False).double()
    J = cands.jet_values(state, axes, False)
    inputs = [*U64.unbind(-1), *(J.unbind(-1) if J is not None else ())]
    values = torch.movedim(columns.functions(*inputs), -1, 0)
    G = state.asm64.integrate(values[columns.index], columns.alphas)
    i = state.field_index[e]
    b = state.asm64.integrate(U64[..., i][None], [state.lhs_alphas[e]])[:, 0]
    coefs = _lstsq(G, b)
    return ((G @ coefs - b) ** 2).sum() / state.b_norm[e].double(), coefs


def _refit(state, cands, e: int, cols: list[int], start: dict):
    """Train the surrogate from ``start`` on the data and equation ``e``'s weak form on
    ``cols``: (data loss on every training point, coefficients at the end)."""
    data = state.data
    columns = _Columns(cands, cols, state.device)
    state.surrogate.load_state_dict(start)
    state.surrogate.train()
    opt = adam(state.surrogate.parameters(), lr=LR_JOINT_SURROGATE)
    for _ in range(REFIT_EPOCHS):
        opt.zero_grad(set_to_none=True)
        weak, _ = _weak(state, cands, e, columns)
        loss = data.loss() + REFIT_LAMBDA * weak.float()
        loss.backward()
        opt.step()
    with torch.no_grad():
        diff = (data.predictions(None, None) - data.target) / data.scale
        _, coefs = _weak(state, cands, e, columns)
    return float((diff * diff).mean()), coefs.tolist()


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
    if statistic >= REFIT_CHI2:
        return False
    record.verdicts[term] = "uncertain"
    ratio = math.sqrt(REFIT_CHI2 / max(statistic, REFIT_CHI2 / 100.0))
    record.floors[term] = max(float(record.floors.get(term, 0.0)), abs(coef) * ratio)
    record.excluded.pop(term, None)
    _alternative(record, without, record.without.get(term, record.residual), statistic)
    return True


def swapped(record, term: str, function: str, statistic: float, swap: dict) -> bool:
    """Record one swap of ``term`` for ``function`` (a function of the same field under the
    same derivative) on ``record``: the statistic in ``record.refits`` under
    ``"term -> function"``; below −``REFIT_CHI2`` (the data fit the swap better) both are
    uncertain — the term's floor infinite (the function stands in for it), the function's
    the one it was excluded above — and the ``swap`` equation an alternative. Returns
    whether the verdicts changed."""
    record.refits[f"{term} -> {function}"] = float(statistic)
    if statistic >= -REFIT_CHI2:
        return False
    record.verdicts[term] = "uncertain"
    record.verdicts[function] = "uncertain"
    record.floors[term] = math.inf
    floor = record.excluded.pop(function, None)
    if floor is not None:
        record.floors[function] = float(floor)
    record.excluded.pop(term, None)
    _alternative(record, swap, record.residual, statistic)
    return True


def _weakest(record) -> list[str]:
    """The determined terms of ``record`` whose absence leaves least unexplained, at most
    ``REFIT_TERMS`` (none when the equation has one term)."""
    terms = list(record.intervals)
    if len(terms) < 2:
        return []
    sure = [t for t in terms if record.verdicts.get(t) == "determined" and t in record.without]
    sure.sort(key=lambda t: float(record.without[t]))
    return sure[:REFIT_TERMS]


def _curved(F, field, quantiles, tol: float) -> bool:
    """Whether ``F`` (a function of ``field``) departs from a straight line by more than
    ``tol`` of its range between the field's observed 1 % and 99 % quantiles: a function
    that nearly is a line there (sin(0.25 u) over |u| < 3) is no other model than the
    field itself, and noise decides which of the two fits better."""
    z = sympy.Dummy("z")
    f = sympy.lambdify(z, F.subs(field, z), "numpy")
    x = np.linspace(float(quantiles[1]), float(quantiles[-2]), 201)
    with np.errstate(all="ignore"):
        y = np.broadcast_to(np.asarray(f(x), dtype=float), x.shape)
    if not np.all(np.isfinite(y)) or np.ptp(y) <= 0.0:
        return False
    line = np.polyval(np.polyfit(x, y, 1), x)
    return float(np.max(np.abs(y - line)) / np.ptp(y)) > tol


def _swaps(record, library, names: list[str], observed: dict, tol: float) -> list:
    """(term, function) pairs to refit: each determined term that is a field itself with
    each candidate that is a non-polynomial function of that field alone, not in the
    equation, and curved over the observed values (:func:`_curved`)."""
    pairs = []
    for term in record.intervals:
        mine = library[names.index(term)]
        if record.verdicts.get(term) != "determined" or mine.alpha:
            continue
        seen = observed.get(str(getattr(mine.F, "func", "")), {}).get("quantiles")
        if not isinstance(mine.F, AppliedUndef) or not seen:
            continue
        for other in library:
            F = other.F
            if (
                not other.alpha
                and F.atoms(AppliedUndef) == {mine.F}
                and not F.has(sympy.Derivative)
                and not F.is_polynomial(mine.F)
                and other.short() not in record.intervals
                and _curved(F, mine.F, seen, tol)
            ):
                pairs.append((term, other.short()))
    return pairs


def _judge(state, cands, e: int, record, start: dict, names: list[str], seen: tuple) -> None:
    """The refits of one equation (module notes); ``seen``: the observed values and the
    shape tolerance of the run's noise (:func:`_curved`)."""
    lhs, n = record.lhs, len(state.data)
    terms = list(record.intervals)
    drops, swaps = _weakest(record), _swaps(record, cands.library, names, *seen)
    if not drops and not swaps:
        return
    with_loss, with_coefs = _refit(state, cands, e, [names.index(t) for t in terms], start)

    def statistic(support: list[str]) -> tuple[float, list]:
        loss, coefs = _refit(state, cands, e, [names.index(t) for t in support], start)
        return n * (loss - with_loss) / max(with_loss, 1e-300), coefs

    for term in drops:
        rest = [t for t in terms if t != term]
        value, coefs = statistic(rest)
        coef = with_coefs[terms.index(term)]
        if verdict(record, term, value, coef, dict(zip(rest, coefs))):
            log.info(
                "symweak: %s: the data fit as well without %s (likelihood ratio %.3g < "
                "%.3g): uncertain", lhs, term, value, REFIT_CHI2,
            )  # fmt: skip
    for term, function in swaps:  # each, so that every function the data prefer shows
        support = [function if t == term else t for t in terms]
        value, coefs = statistic(support)
        if swapped(record, term, function, value, dict(zip(support, coefs))):
            log.info(
                "symweak: %s: the data fit better with %s in place of %s (likelihood ratio "
                "%.3g): both uncertain", lhs, function, term, -value,
            )  # fmt: skip


def check(state, cands) -> None:
    """Refit each equation of ``state.history.fits`` with and without its weakest
    determined terms, and with functions in place of its terms (module notes), and
    record the verdicts. The surrogate and the batch generator are left as they were."""
    records = state.history.fits
    if not records or state.interrupted:
        return
    if state.config.training.tune_epochs < REFIT_EPOCHS:  # a short run: a short refit misleads
        log.info(
            "symweak: the weakest terms are not checked on the data: tune_epochs=%d is below "
            "the check's %d epochs", state.config.training.tune_epochs, REFIT_EPOCHS,
        )  # fmt: skip
        return
    names = [c.short() for c in cands.library]
    tied = {x for a, b_, _ in cands.ties for x in (a, b_)}
    start = {k: v.detach().clone() for k, v in state.surrogate.state_dict().items()}
    gen = state.data._gen.get_state()
    seen = (
        observed_once(state.problem, state.history),
        shape_tolerance(noise_ratio(state.history, state.problem)),
    )
    try:
        for e, (lhs, record) in enumerate(zip(state.problem.lhs, records)):
            if lhs in tied or any(t not in names for t in record.intervals):
                continue
            _judge(state, cands, e, record, start, names, seen)
    finally:
        state.surrogate.load_state_dict(start)
        state.surrogate.eval()
        state.data._gen.set_state(gen)

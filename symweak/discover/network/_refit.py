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
√(``REFIT_CHI2``/statistic) (the statistic grows with the square of a term's size). The
equation with the term holds the one without it, so below −``REFIT_CHI2`` the refits have
not settled and the term keeps its verdict (clean Gray–Scott, seed 1: v_t's v at −146).

Determined terms are also refitted with another candidate in their place (:func:`_swaps`):
on noisy data (noise / std at least ``SHAPE_TOL_MIN``; on clean data the refits' own
differences passed the cutoff: Gray–Scott's w beside sin w), a reaction term that is a
field itself (u) with each non-polynomial function of that field alone that is curved over
the observed values (sin u, tanh u); where the data fit that swap better by more than
``REFIT_CHI2``, the term and the function are both uncertain (the zoo's tanh damping at
σ = 0.2, seed 1, came back as −0.706 u; the data fit −0.885 tanh u better by 13.6). A
function that fits only as well changes nothing (sin u beside u² fits Fisher–KPP's u ∈ [0,
1] as well as u does: the readable term stays). The other way round, a reaction term that
is such a function is refitted with the field itself, and must fit better by ``REFIT_CHI2``
(else both are uncertain, and a function of a multiple of the field gives way to it: the
field is returned); on noisy data so is such a function under a derivative (d_xx(sin u)
with u_xx), and on any data such a function the verdicts call uncertain. Under each
derivative, the powers of a field the equation holds there are refitted with the next power
alone in their place (in the library or not): one power must fit better than the next
(d_x(u²) than d_x(u³), and from the cube up than the one below) by ``REFIT_CHI2`` to stay
determined, both refitted for ``POWER_EPOCHS`` (one already uncertain too: a neighbour
that fits as well is uncertain beside it, not excluded); two or more (−0.023 u_xx
+ 0.038 d_xx(u²), a quadratic stand-in over u ∈ [0.3, 1.5] for 0.02 d_xx(u³)) must beat it.
On noisy data a reaction power k ≥ 2 that is its field's only reaction power (u² alone) is
refitted with the powers k ± 1 (u³, u), which must not fit better by ``REFIT_CHI2``; on any
data the uncertain terms the equation lacks are refitted added to it (:mod:`._swaps`). The
best swap or addition, where the data fit it better by more than ``REFIT_CHI2`` (an
addition by ``ADDED_CHI2``, refitted at weight 1 and, beside the equation's own refit at
that weight, with the weak form weighed ``ADDED_LAMBDA`` times, the better ratio counting:
at weight 1 a surrogate refitted without a term the data hold leaves its part in the weak
form rather than bend off the data, a damped heat's 0.1 u_xx at σ 0.2 read 8.4 and 23.9 at
10; at 10 a refit may not settle in its epochs, Swift–Hohenberg's u³ added read −83 and 147
at 1, and the coefficients it gives shrink, FitzHugh–Nagumo's added 0.8 u_xx to 0.50
against 0.63 at 1, so weight 1's are returned; on clean data, where the ratio measures the
surrogate's own misfit, an addition only where its refit's weak form leaves less
unexplained than the selected one: clean KdV–Burgers gained its 0.03 u_xx at 687, Zeldovich
not u⁴ at 135, 17.9 % against 0.18 %), is returned in place of the equation and judged
(:mod:`._adopt`); so is an uncertain function's field where the data fit the function
better but the field's refit explains more of the weak form
(:func:`._adopt.weak_form_prefers`). Where the equation couples no points and the data's
own time series contradict it (:mod:`.._pointwise`), the surrogate may not have followed
the field, and a swap is returned only if the surrogate trained under it follows those time
series (``FOLLOWS``) and they do not contradict the swap, its terms that couple points read
from that surrogate (Swift–Hohenberg on clean points: −0.45 u, contradicted, came back as
−0.091 u + 0.039 u_xx determined from a surrogate 6.4 times the local quadratics' misfit
off the data; FitzHugh–Nagumo's added diffusion is returned).

Nothing is done for equations tied by ``pair`` rules or fitted together under the U(1)
hypothesis the data kept (λ–ω at σ = 0.05, seed 0: u_xx added to u_t alone by a likelihood
ratio of 10.9 came back 0.74 for a true 0.1, the cubic terms untied), or terms the
candidate library does not hold; equations of one term are only swapped. A run whose
tuning phase is shorter than ``REFIT_EPOCHS`` (``tune_epochs``, a quick run) is not
checked, and the log says so: 20-epoch refits gave other statistics than 50 and 100 (3.7 →
0.1 for the logistic u_x), which agreed.
``FitRecord.refits`` keeps each statistic (swaps under ``"term -> function"``).
"""

from __future__ import annotations

import logging

from ..._seeds import child_seed
from ...ir import Equation
from .._pointwise import contradicted, time_series_check
from .._posed import ill_posed, observed_once
from .._settings import (
    ADDED_CHI2,
    ADDED_LAMBDA,
    REFIT_CHI2,
    REFIT_LAMBDA,
    SHAPE_TOL_MIN,
)
from ._adopt import adopt, explains_more, weak_form_prefers
from ._extract import shape_tolerance
from ._recorded import cutoff as tie_cutoff
from ._recorded import swapped, verdict
from ._refitting import REFIT_EPOCHS, _refit
from ._richer import richer_on_data
from ._strong import evaluator, readable
from ._substituted import substituted
from ._swaps import GAP, NEIGHBOUR, OWN, READABLE, RETURNED_ON_TIE, additions, specific
from ._swaps import swaps as offered
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

#: epochs of a power's refits with the next power in its place (``NEIGHBOUR``; at most
#: ``tune_epochs``): from the checkpoint the selected power's surrogate is slow to leave
#: (the nonlinear diffusion variant built for tuning, 0.08 d_xx(u³) at σ 0.1, seed 1,
#: returned d_xx(u²); the cube in its place fit worse by 13.5 after 50 epochs, 7.6 after
#: 100, 3.0 after 150; the porous medium's true square held by 66 and 53 after 150)
POWER_EPOCHS = 150
#: the weakest determined terms checked per equation
REFIT_TERMS = 2
#: where the data's own time series contradict the selected pointwise equation, a swap is
#: returned only if the surrogate trained under it follows them: its root-mean-square
#: misfit at their points at most this many times the local quadratics' (both are the
#: noise where each follows the data; else what the data "fit better" is the surrogate's:
#: Swift–Hohenberg 6.4 on clean points, 1.99 at σ = 0.1; FitzHugh–Nagumo 0.33 at σ = 0.1)
FOLLOWS = 1.5


def _weights(adding: bool) -> tuple:
    """The weak form's weights a refit that adds a term is made at (the better ratio
    counts), or any other."""
    return (REFIT_LAMBDA, ADDED_LAMBDA) if adding else (REFIT_LAMBDA,)


def _weakest(record) -> list[str]:
    """The determined terms of ``record`` whose absence leaves least unexplained, at most
    ``REFIT_TERMS`` (none when the equation has one term)."""
    terms = list(record.intervals)
    if len(terms) < 2:
        return []
    sure = [t for t in terms if record.verdicts.get(t) == "determined" and t in record.without]
    sure.sort(key=lambda t: float(record.without[t]))
    return sure[:REFIT_TERMS]


def _planned(record, lib: dict, seen: tuple, adopt: bool, ill=False) -> tuple[list, list]:
    """(the terms to drop, the swaps and additions) refitted for ``record`` (``ill``: the
    equation is ill-posed): uncertain terms are added where the data determine some of the
    equation (one they determine nothing of, 95 % of u_t unexplained, gained u_x
    "determined")."""
    drops, swaps = _weakest(record), offered(record, lib, *seen, ill=ill)
    if adopt and not record.richer and "determined" in record.verdicts.values():
        swaps += [((), lib[t], False) for t in additions(record, lib, noisy=seen[2])]
    return drops, swaps


def _judge(state, cands, e: int, record, start, lib: dict, seen, selected=None, ties=False):
    """The refits of one equation (module notes); ``lib``: ``{short name: term}`` of the
    candidates; ``seen``: the observed values and the shape tolerance of the run's noise
    (:func:`._swaps.curved`). With ``selected`` (the returned equation), the swap the data
    fit best, where they fit it better by more than ``REFIT_CHI2``, is returned in place
    of it (:mod:`._adopt`, then judged itself) — where the data's own time series
    contradict ``selected``, only if they do not contradict the swap (:func:`_explains`):
    returns that equation, else None. Additions (and the equation's own refit beside them)
    are refitted at ``ADDED_LAMBDA``; an added term returned is determined by that ratio
    (:mod:`._adopt` measures no drop of it). ``ties``: only a ``RETURNED_ON_TIE`` swap may
    be returned (``selected`` is itself a swap returned), and nothing is added."""
    lhs, n = record.lhs, len(state.data)
    terms = list(record.intervals)
    adopt = selected is not None
    verify = adopt and _contradicted(state.problem, selected)
    ill = isinstance(selected, Equation) and ill_posed(selected, seen[0]) is not None
    drops, swaps = _planned(record, lib, seen, adopt and not ties, ill)
    if not drops and not swaps:
        return None
    longer = min(POWER_EPOCHS, state.config.training.tune_epochs)
    base, (_, with_coefs, with_system) = _own(
        state, cands, e, [lib[t] for t in terms], start, swaps, longer
    )
    own = (with_coefs, with_system)  # the equation's own refit, for weak_form_prefers

    def statistic(support: list, how=(REFIT_LAMBDA, REFIT_EPOCHS)) -> tuple[float, list, tuple]:
        if how not in base:
            base[how] = _refit(state, cands, e, [lib[t] for t in terms], start, *how)[0]
        loss, coefs, system = _refit(state, cands, e, support, start, *how)
        return n * (loss - base[how]) / max(base[how], 1e-300), coefs, system

    unconverged = None  # a term whose drop the data fit better: the refits are not settled
    for term in drops:
        rest = [t for t in terms if t != term]
        value, coefs, _ = statistic([lib[t] for t in rest])
        unconverged = unconverged or ((term, value) if value < -REFIT_CHI2 else None)
        verdict(record, term, value, with_coefs[terms.index(term)], dict(zip(rest, coefs)))
    better, added = [], {}
    for replaced, other, tie in swaps:  # each, so that every one the data prefer shows
        at = terms.index(replaced[0]) if replaced else len(terms)  # where the first was
        kept = [lib[t] for t in terms if t not in replaced]
        support = [*kept[:at], other, *kept[at:]]
        epochs = longer if tie == NEIGHBOUR else REFIT_EPOCHS
        fits = [(*statistic(support, (w, epochs)), (w, epochs)) for w in _weights(not replaced)]
        value, how = min((fit[0], fit[3]) for fit in fits)
        coefs, system = fits[0][1:3]  # weight 1's: a heavier weak form biases them (notes)
        swap = dict(zip([t.short() for t in support], coefs))
        if swapped(record, replaced, other.short(), value, swap, tie) and replaced:
            log.info(
                "symweak: %s: the data fit %s with %s in place of %s (likelihood ratio "
                "%.3g): uncertain", lhs, "better" if value < -REFIT_CHI2 else "as well",
                other.short(), " + ".join(replaced), abs(value),
            )  # fmt: skip
        cutoff = -(REFIT_CHI2 if replaced else ADDED_CHI2)
        cutoff = tie_cutoff(tie, len(replaced)) if tie in RETURNED_ON_TIE else cutoff
        weak = tie == READABLE and value >= cutoff  # the data prefer an uncertain function
        if value < cutoff or (
            weak and weak_form_prefers(record, replaced, other, (coefs, system), own)
        ):
            loss = (base[how], how)
            better.append((value, replaced, other, support, coefs, system, loss, tie))
        elif not replaced and value < -REFIT_CHI2:
            log.info(
                "symweak: %s: the data fit %s added better by a likelihood ratio of %.3g, "
                "under the %.3g an added term needs: it stays uncertain",
                lhs, other.short(), -value, ADDED_CHI2,
            )  # fmt: skip
        if not replaced:
            added[other.short()] = value
    better = [x for x in better if not ties or (x[1] and x[7] in RETURNED_ON_TIE)]
    adopt = adopt and not (better and _unsettled(lhs, unconverged))
    for best in sorted(specific(lhs, better, added), key=lambda b: b[0]) if adopt else ():
        equation = Equation(state.problem.lhs[e], dict(zip(best[3], best[4])))
        if ill_posed(equation, seen[0]) is not None:  # never a backward diffusion
            continue
        if not (seen[-1] or best[1] or explains_more(record, best[2].short(), *best[4:6])):
            continue  # clean data: an addition the weak form explains less with (notes)
        if not verify or _explains(state, cands, e, start, best[3], equation):
            return _adopted(state, cands, e, record, start, lib, seen, best, selected, ties)
    return None


def _own(state, cands, e: int, own: list, start: dict, swaps: list, longer: int):
    """The equation's own refit (its terms ``own``): ({(weight, epochs): data loss}, what
    :func:`_refit` returns at ``REFIT_EPOCHS``). Where a power's neighbour is refitted for
    ``longer`` epochs both lengths come from one run, if every step sees all the points
    (the batches drawn stay those of two runs)."""
    marks = {REFIT_EPOCHS: None}
    whole = state.data.max_points is None
    if whole and longer > REFIT_EPOCHS and any(tie == NEIGHBOUR for *_, tie in swaps):
        how = (REFIT_LAMBDA, longer)
        base = {how: _refit(state, cands, e, own, start, *how, marks)[0]}
        fit = marks[REFIT_EPOCHS]
    else:
        base, fit = {}, _refit(state, cands, e, own, start)
    base[(REFIT_LAMBDA, REFIT_EPOCHS)] = fit[0]
    return base, fit


def _unsettled(lhs: str, unconverged) -> bool:
    """Whether a drop the data fit better (``(term, statistic)`` or None) unsettles the
    refits, so that no swap or addition is returned (logged)."""
    if unconverged is None:
        return False
    log.info(
        "symweak: %s: the data fit the equation better without %s (likelihood ratio %.3g) "
        "than with it: the refits are not settled here, so no swap or addition is "
        "returned", lhs, *unconverged,
    )  # fmt: skip
    return True


def _explains(state, cands, e: int, start: dict, support: list, equation) -> bool:
    """Whether the data's own time series (which contradict the selected pointwise
    equation) do not contradict the swap ``equation``, its terms that couple points read
    from the surrogate trained under it (:mod:`._strong`; the reading's error then holds
    its error on that surrogate's field), and that surrogate follows them (``FOLLOWS``):
    FitzHugh–Nagumo's added 0.42 u_xx at σ = 0.1 leaves 155 % of the reading unexplained,
    its error 132 % (13 times per place over 30 time units), the surrogate's misfit 0.33
    times the local fits': returned; Swift–Hohenberg's +0.039 u_xx on clean points leaves
    90 %, but the surrogate, which did not follow the pattern, misses the data by 6.4 times
    the local fits' misfit (truth −2 u_xx − u_xxxx): not returned."""
    if not readable(support):
        return False
    _refit(state, cands, e, support, start)
    problem = state.problem
    by_name = {f.func.__name__: f for f in problem.fields}
    values = evaluator(state.surrogate, [by_name[n] for n in state.surrogate.field_names])
    found = time_series_check(problem.obs, equation.lhs, equation.coefficients, values)
    explained = found is not None and found["follows"] <= FOLLOWS and not contradicted(found)
    if found is not None:
        log.info(
            "symweak: %s: %s leaves %.0f %% of the data's own time derivative unexplained "
            "(the reading's error %.0f %%; the surrogate's misfit there %.3g times the local "
            "fits'): %s", problem.lhs[e].short(), equation.short(), 100 * found["unexplained"],
            100 * found["noise"], found["follows"],
            "returned" if explained else "contradicted, not returned",
        )  # fmt: skip
    return explained


def _adopted(
    state, cands, e: int, record, start: dict, lib: dict, seen: tuple, best, selected, again
):
    """Return the swap ``best`` in place of equation ``e`` (:mod:`._adopt`) and judge it.
    The selected equation's alternatives that hold a replaced term are refitted with the
    swap made in them too (at most ``SUBSTITUTES``): the terms only they held stay
    uncertain beside the swap (tanh damping's u_xx beside tanh u). Judged, the swap may
    itself give way to a swap returned on a tie (``again``: this one is that; then
    ``record.adopted["then"]`` says so): the Swift–Hohenberg variant at σ 0.2 (tuning
    half, seed 1) gained its u³ added, then fit u_xx in place of d_xx(sin u) as well."""
    first = dict(record.adopted) if again else None
    value, replaced, other, support, coefs, (G, b), (with_loss, how), tie = best
    # as well, not better (a readable swap the data fit better is returned as any other):
    # the selected equation stays an alternative
    own, kind = tie == OWN, tie
    tie = tie in RETURNED_ON_TIE and value > -REFIT_CHI2  # returned as well, not better
    lib = {**lib, other.short(): other}
    n, mine = len(state.data), {t.short() for t in support}
    swap_loss = with_loss * (1.0 + value / n)
    extra = []
    for names in () if tie else substituted(record, replaced, other.short(), mine, lib):
        loss, alt_coefs, _ = _refit(state, cands, e, [lib[t] for t in names], start, *how)
        stat = n * (loss - swap_loss) / max(swap_loss, 1e-300)
        entry = {"terms": dict(zip(names, alt_coefs)), "held_out": record.residual}
        extra.append({**entry, "margin": 1.0 - stat / REFIT_CHI2, "reason": "data"})
    seed = child_seed(state.problem.seed, "stability") + 1 + e
    how = state.config.selection.complexity
    found = (value, replaced, other.short(), tie)
    tests = getattr(state, "tests", None)  # the refits' test functions (the tuning phase's)
    overlap = tests.overlap() if tests is not None else None
    lhs = state.problem.lhs[e]
    chosen = (
        {t.short(): float(c) for t, c in selected.coefficients.items()}
        if isinstance(selected, Equation)
        else None
    )
    equation = adopt(
        record, lhs, support, coefs, G, b, found, seed, how, overlap, extra, chosen
    )  # fmt: skip
    if tie and own:  # for the warning: the own field's derivative, not a simpler function
        record.adopted["own"] = True
    if tie and kind == GAP:  # for the warning: one power in place of several
        record.adopted["gap"] = True
    log.info(
        "symweak: %s: the data fit %s %s %s (likelihood ratio %.3g): returned",
        record.lhs, other.short(),
        f"in place of {' + '.join(replaced)}" if replaced else "added",
        "as well" if tie else "better", abs(value) if tie else -value,
    )  # fmt: skip
    if again:
        record.adopted = {**first, "then": record.adopted}
        _judge(state, cands, e, record, start, lib, seen)
        return equation
    return _judge(state, cands, e, record, start, lib, seen, equation, ties=True) or equation


def _contradicted(problem, equation) -> bool:
    """Whether ``equation`` couples no points and the data's own time series contradict it
    (:func:`.._pointwise.contradicted`); False where they cannot be read."""
    obs = getattr(problem, "obs", None)
    if obs is None or not isinstance(equation, Equation):
        return False
    return contradicted(time_series_check(obs, equation.lhs, equation.coefficients))


def check(state, cands, equations: list) -> list:
    """Refit each equation of ``state.history.fits`` with and without its weakest
    determined terms, and with functions in place of its terms (module notes), and
    record the verdicts. Returns ``equations`` with each swap the data fit better in place
    (:mod:`._adopt`). The surrogate and the batch generator are left as they were."""
    records = state.history.fits
    if not records or state.interrupted:
        return equations
    if state.config.training.tune_epochs < REFIT_EPOCHS:  # a short run: a short refit misleads
        log.info(
            "symweak: the weakest terms are not checked on the data: tune_epochs=%d is below "
            "the check's %d epochs", state.config.training.tune_epochs, REFIT_EPOCHS,
        )  # fmt: skip
        return equations
    lib = {c.short(): c for c in cands.library}
    equations = list(equations)
    tied = {x for a, b_, _ in cands.ties for x in (a, b_)}
    if (state.history.symmetry or {}).get("kept") == "symmetric":
        # fitted as one complex equation (the U(1) hypothesis the data kept): a refit of
        # one of them alone unties them, as it would a pair rule's
        tied |= set(state.problem.lhs)
    start = {k: v.detach().clone() for k, v in state.surrogate.state_dict().items()}
    gen = state.data._gen.get_state()
    noise = noise_ratio(state.history, state.problem)
    seen = (observed_once(state.problem, state.history), shape_tolerance(noise))
    seen += (noise >= SHAPE_TOL_MIN,)  # clean data: no field swapped for a function
    try:
        for e, (lhs, record) in enumerate(zip(state.problem.lhs, records)):
            if lhs in tied or any(t not in lib for t in record.intervals):
                continue
            found = _judge(state, cands, e, record, start, lib, seen, equations[e])
            equations[e] = found or equations[e]
            richer_on_data(state, cands, e, record, start, lib, equations[e])
    finally:
        state.surrogate.load_state_dict(start)
        state.surrogate.eval()
        state.data._gen.set_state(gen)
    return equations

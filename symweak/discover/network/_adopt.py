"""An equation the data fit better than the selected one, returned in its place.

The check on the data (:mod:`._refit`) refits the returned equation with other terms in
the place of some of its own, and with its uncertain terms added. Where the
data fit such a swap better by more than ``REFIT_CHI2``, the data resolve what the weak
form on the surrogate could not (offered the neighbouring powers, the weak form explained
no more with them): cubic diffusion 0.02 d_xx(u³) over u ∈ [0.3, 1.5] was selected as
−0.021 u_xx + 0.037 d_xx(u²), and the data fit 0.020 d_xx(u³) alone better by 27. The
swap is returned instead (the best of them where several fit better), with

- its coefficients from the refit (the surrogate trained under it, least squares on its
  weak form) and 95 % intervals by a bootstrap over that weak form's test functions,
  widened by their overlap as the final fit's are, and to hold each term's interval in
  the selected equation and its coefficients in that equation's alternatives;
- the term it brought in determined, the terms it replaced excluded (they leave the
  verdicts, their floors and the alternatives that hold them; those alternatives are
  refitted with the swap made in them, :func:`._refit._adopted`, so that the terms only
  they held stay uncertain; an added term leaves the alternatives without it the same
  way), every other verdict as it was (an uncertain term stays uncertain even where no
  alternative kept holds it); the swap's own refits then run on it like on any
  returned equation (its drops and its own swaps: d_xx(u³) against d_xx(u⁴) and
  d_xx(u²)), which may make terms uncertain again but swap nothing more;
- the selected equation kept in ``FitRecord.adopted`` (``{"replaced", "by", "statistic",
  "selected"}``; ``replaced`` empty for an added term) and on the Pareto front, no longer
  chosen.
"""

from __future__ import annotations

import logging

import numpy as np

from ...ir import Equation
from ...regress import bootstrap_intervals, term_complexity
from .._settings import BOOTSTRAP_RESAMPLES, REFIT_CHI2
from ._recorded import cutoff
from ._swaps import GAP

__all__ = ["adopt", "explains_more", "returned_terms", "said", "unexplained"]

log = logging.getLogger("symweak")


def returned_terms(record) -> dict:
    """The returned equation of ``record`` as ``{term: coefficient}``."""
    for alt in record.alternatives:
        if alt.get("reason") == "fit":
            return dict(alt["terms"])
    return {t: float(np.mean(iv)) for t, iv in record.intervals.items()}


def _without(G, b, names: list, i: int, alternatives: list) -> dict:
    """The alternative without term ``i``: least squares on the swap's weak system, the
    margin of the selected equation's alternative without that term (0 if none)."""
    cols = [j for j in range(len(names)) if j != i]
    coef = np.linalg.lstsq(G[:, cols], b, rcond=None)[0]
    held = float(np.linalg.norm(G[:, cols] @ coef - b) / max(float(np.linalg.norm(b)), 1e-300))
    margin = next(
        (
            a["margin"]
            for a in alternatives
            if a.get("reason") != "fit" and names[i] not in a["terms"]
        ),
        0.0,
    )
    return {
        "terms": {names[j]: float(c) for j, c in zip(cols, coef)},
        "held_out": held,
        "margin": float(margin),
        "reason": "data",
    }


def _hulls(record, names: list, lo, hi) -> dict:
    """Each term's bootstrap interval on the swap's refit, widened to hold its interval in
    the selected equation and its coefficients in the selected equation's alternatives:
    where the weak form and the data disagree on a term's size, the interval says so
    (tanh damping's added u_xx: 0.146 on the data, 0.027 in the weak form's alternative,
    0.1 the truth)."""
    seen: dict = {}
    for alt in record.alternatives:
        for t, c in alt["terms"].items():
            seen.setdefault(t, []).append(float(c))
    out = {}
    for n, x, y in zip(names, lo, hi):
        values = [float(x), float(y), *record.intervals.get(n, []), *seen.get(n, [])]
        out[n] = [min(values), max(values)]
    return out


def _kept(record, names: list, other: str, gone: set, tie: bool, extra) -> list:
    """The alternatives of ``record`` kept beside the swap ``names``: not the selected fit
    nor the swap itself, none holding a replaced term (``gone``; with none replaced, none
    without the added ``other``; with ``tie``, all), then ``extra``."""
    return [
        alt
        for alt in record.alternatives
        if alt.get("reason") != "fit" and set(alt["terms"]) != set(names)
        and (tie or not (gone & set(alt["terms"]) if gone else other not in alt["terms"]))
    ] + list(extra)  # fmt: skip


def adopt(
    record,
    lhs,
    support: list,
    coefs,
    G,
    b,
    found: tuple,
    seed: int,
    how,
    overlap=None,
    extra=(),
    selected=None,
) -> Equation:
    """Make the swap ``support`` (terms, in order) with ``coefs`` (its refit's, on the weak
    system ``G``, ``b`` of that refit) the returned equation of ``record`` (module notes);
    ``found`` = (statistic, replaced term names, the term brought in); ``overlap``: the
    correlation of that system's test functions, which widens the intervals as the final
    fit's (:func:`~symweak.regress.bootstrap_intervals`); ``extra``: alternatives of the
    swap (the selected equation's, with the swap made in them); ``selected``: the selected
    equation (``{term: coefficient}``; else the record's fit). With ``found[3]`` (a tie:
    the field returned in place of an uncertain function of it that the data fit no
    better) nothing is excluded, the field stays uncertain, and the selected equation
    becomes an alternative. Returns the equation with left-hand side ``lhs``."""
    statistic, replaced, other = found[:3]
    tie = bool(found[3]) if len(found) > 3 else False
    names = [t.short() for t in support]
    G, b, coefs = np.asarray(G), np.asarray(b), np.asarray(coefs, dtype=float)
    lo, hi = bootstrap_intervals(
        G, b, list(range(len(names))), resamples=BOOTSTRAP_RESAMPLES, seed=seed, tls=False,
        overlap=overlap,
    )  # fmt: skip
    residual = unexplained(G, b, coefs)
    terms = dict(zip(names, coefs.tolist()))
    selected = returned_terms(record) if selected is None else dict(selected)
    record.adopted = {
        "replaced": list(replaced),
        "by": other,
        "statistic": float(statistic),
        "selected": selected,
    }
    if tie:
        record.adopted["tie"] = True
    record.intervals = _hulls(record, names, lo, hi)
    record.residual = residual
    gone = set() if tie else set(replaced)
    kept = _kept(record, names, other, gone, tie, extra)
    if tie:  # the data cannot tell: the selected equation is one of the alternatives
        margin = 1.0 - max(float(statistic), 0.0) / REFIT_CHI2
        entry = {"terms": selected, "held_out": record.residual, "reason": "data"}
        kept.insert(0, {**entry, "margin": margin})
    # every other term keeps its verdict: an uncertain one stays so, whether or not an
    # alternative kept holds it (Gray–Scott's twenty, uncertain beside a richer front)
    verdicts = {k: v for k, v in record.verdicts.items() if k not in gone}
    verdicts.update({n: verdicts.get(n, "determined") for n in names})
    verdicts[other] = "uncertain" if tie else "determined"
    for i, name in enumerate(names):  # an uncertain term kept: the swap without it too
        lacking = any(name not in alt["terms"] for alt in kept)
        if verdicts[name] == "uncertain" and len(names) > 1 and not lacking:
            kept.append(_without(G, b, names, i, record.alternatives))
    first = {"terms": terms, "held_out": residual, "margin": 0.0, "reason": "fit"}
    record.alternatives = [first, *kept]
    held = {t for alt in kept for t in alt["terms"]}
    verdicts.update({t: "uncertain" for t in held if t not in verdicts})
    record.verdicts = verdicts
    record.floors = {k: v for k, v in record.floors.items() if verdicts.get(k) == "uncertain"}
    for store in (record.without, record.probabilities):
        for name in gone:
            store.pop(name, None)
    for name in (other, *names):
        record.excluded.pop(name, None)
    _front(record, support, terms, residual, how)
    return Equation(lhs, dict(zip(support, coefs.tolist())))


def unexplained(G, b, coefs) -> float:
    """The part of the weak system's left-hand side ``b`` that ``G``·``coefs`` leaves
    unexplained (relative residual)."""
    G, b, coefs = np.asarray(G), np.asarray(b), np.asarray(coefs, dtype=float)
    return float(np.linalg.norm(G @ coefs - b) / max(float(np.linalg.norm(b)), 1e-300))


def explains_more(record, other: str, coefs, system) -> bool:
    """Whether the refit of ``record``'s equation with ``other`` added (``coefs`` on its
    weak ``system``, (G, b)) leaves less of its weak form unexplained than the selected
    fit does (``record.residual``); the log says so where not. On clean data the data's
    ratio measures the surrogate's own misfit, and an addition must show in the weak form
    too: clean Zeldovich took u⁴ at a ratio of 135, 17.9 % unexplained against 0.18 %."""
    residual = unexplained(*system, coefs)
    if residual <= record.residual:
        return True
    log.info(
        "symweak: %s: the data fit %s added better, but its weak form leaves %.3g %% "
        "unexplained against %.3g %%: not returned on clean data", record.lhs, other,
        100 * residual, 100 * record.residual,
    )  # fmt: skip
    return False


def weak_form_prefers(record, replaced: tuple, other, swap: tuple, own: tuple) -> bool:
    """Whether an uncertain function's swap for its field (``swap``, its refit's
    coefficients and weak system; the only uncertain term :func:`._swaps.swaps` offers a
    readable swap) leaves less of its weak form unexplained than the equation's own refit
    (``own``) though the data fit the function better: the ratio then reads the surrogate's
    own misfit as much as the data, so the weak form decides and the field is returned,
    both uncertain (the Swift–Hohenberg variant, clean, seed 0, its noise read as 0.013:
    d_xx(sin u) fit the data better by 292, its weak form 4.59 % unexplained against 4.36 %
    with the true u_xx). A determined function keeps its cutoff."""
    if len(replaced) != 1 or record.verdicts.get(replaced[0]) != "uncertain":
        return False
    other = other.short()
    mine, theirs = unexplained(*swap[1], swap[0]), unexplained(*own[1], own[0])
    if mine >= theirs:
        return False
    log.info(
        "symweak: %s: the data fit %s better than %s in its place, but the weak form "
        "leaves %.3g %% unexplained with %s against %.3g %%: the field is returned, both "
        "uncertain", record.lhs, replaced[0], other,
        100 * mine, other, 100 * theirs,
    )  # fmt: skip
    return True


def _front(record, support: list, terms: dict, residual: float, how) -> None:
    """The swap on ``record``'s Pareto front, chosen; the selected equation stays on it."""
    weights = term_complexity(support, how)
    point = {
        "terms": terms,
        "complexity": float(np.sum(weights)) if weights is not None else float(len(terms)),
        "held_out": residual,
        "chosen": True,
    }
    front = [{**p, "chosen": False} for p in record.pareto]
    record.pareto = sorted([*front, point], key=lambda p: float(p["complexity"]))


def said(lhs: str, adopted: dict) -> str:
    """The warning for an equation returned in place of the selected one (:func:`adopt`;
    ``adopted["then"]``: a second swap returned in place of that one)."""
    chosen = " + ".join(f"{c:.4g}*{t}" for t, c in adopted["selected"].items())
    text, after = _swap_said(lhs, adopted), ". The" if adopted.get("tie") else "; the"
    if adopted.get("then"):
        text += "; then " + _swap_said(lhs, adopted["then"]).removeprefix(f"{lhs}: ")
        after = ". The"
    return f"{text}{after} weak form selected {lhs} = {chosen.replace('+ -', '- ')}."


def _swap_said(lhs: str, adopted: dict) -> str:
    """What one swap of :func:`said` did, in words (no full stop)."""
    where = " + ".join(adopted["replaced"])
    value = float(adopted["statistic"])
    if adopted.get("tie") and value >= REFIT_CHI2 and not adopted.get("gap"):  # weak form
        return (
            f"{lhs}: the data fit {where} better than {adopted['by']} in its place (likelihood "
            f"ratio {value:.3g}), but the weak form leaves less unexplained with "
            f"{adopted['by']}, so the equation returned has the simpler {adopted['by']}; both "
            "stay uncertain"
        )
    if adopted.get("tie"):
        which = "the selected one" if value > 0 else f"{adopted['by']}"
        kept = "its own field's" if adopted.get("own") else "the simpler"
        below, every = f"{REFIT_CHI2}", "both"
        if adopted.get("gap"):  # several powers against one: their own cutoff
            n = len(adopted["replaced"])
            below = f"the {cutoff(GAP, n):.3g} that {n} terms need against one"
            kept, every = "the one power", "all"
        return (
            f"{lhs}: the data fit {adopted['by']} in place of {where} as well ({which} fits "
            f"better by a likelihood ratio of {abs(value):.3g}, below {below}), so the "
            f"equation returned has {kept} {adopted['by']}; {every} stay uncertain"
        )
    how = f"{adopted['by']} in place of {where}" if where else "the equation"
    how += " better" if where else f" better with {adopted['by']} added"
    return (
        f"{lhs}: the data fit {how} (likelihood ratio {-value:.3g}), so the equation "
        "returned has it"
    )

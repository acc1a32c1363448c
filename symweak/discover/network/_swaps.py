"""What the check on the data (:mod:`._refit`) refits in place of a returned equation's
terms: functions for fields and fields for functions, neighbouring powers, and the
uncertain terms the equation lacks (module notes of :mod:`._refit`)."""

from __future__ import annotations

import logging

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .._library import EXPANSION_DEGREE, has_fitted_constants, polynomial_alternatives
from .._settings import ADDED_CHI2, REFIT_CHI2

__all__ = [
    "NEIGHBOUR",
    "OWN",
    "READABLE",
    "RETURNED_ON_TIE",
    "SHIFT",
    "additions",
    "curved",
    "specific",
    "swaps",
]

log = logging.getLogger("symweak")

#: the uncertain terms refitted added to an equation, at most (as many as its drops)
ADDITIONS = 2
#: the ``tie`` of an uncertain function swapped for its field: returned unless the data
#: fit the function better by the cutoff
READABLE = "readable"
#: a shift of the powers under a derivative by one (:func:`_power_swaps`): where the data
#: fit it as well or better, both terms are uncertain, but it is never returned: it keeps
#: one term more than the swap of all the powers for the next one, and the refits favour
#: more freedom (cubic diffusion's u_xx + d_xx(u²): the cube alone fits better by 27, the
#: shift d_xx(u²) + d_xx(u³) by 41.7, and its cube came back 0.016 for 0.02)
SHIFT = "shift"
#: the ``tie`` of a power alone under a derivative swapped for the next power (and from the
#: cube up the one below): where the data fit it as well, both are uncertain, and where
#: better, it is returned; refitted for ``POWER_EPOCHS`` (:mod:`._refit`)
NEIGHBOUR = "neighbour"
#: the ``tie`` of two or more powers under a derivative with a gap between them swapped for
#: a power in the gap alone: they must fit better than it by χ² at 99.9 % with as many
#: degrees of freedom as they are (:func:`._recorded.cutoff`), else all are uncertain and
#: the one power, fitting as well with fewer terms, is returned; the porous
#: medium's 0.2 d_xx(u²) (tuning half, σ 0.1, seed 2) came back as 0.19 u_xx + 0.068
#: d_xx(u³), both determined, and the data fit the pair better than the square by 12.5
GAP = "gap"
#: the ``tie`` of another field's derivative swapped for the left-hand side's own field
#: under it (:func:`_other_field`): where the data fit it as well, both are uncertain and
#: the own field's is returned; where better, it is returned
OWN = "own"
#: the ties whose swap is returned where the data fit it as well (both stay uncertain)
RETURNED_ON_TIE = (READABLE, OWN, GAP)


def curved(F, field, quantiles, tol: float, powers=()) -> bool:
    """Whether ``F`` (a function of ``field``) departs from the best straight line — plus
    the field's ``powers`` the equation holds beside it — by more than ``tol`` of its range
    between the field's observed 1 % and 99 % quantiles: a function that nearly is a line
    there (sin(0.25 u) over |u| < 3), or that the equation's own powers complete (sin u
    beside u³ over |u| ≤ 1: u − u³/6), is no other model than the field itself, and the
    refits' own differences decide which of the two fits better (Allen–Cahn and
    FitzHugh–Nagumo's u came back uncertain on clean data)."""
    z = sympy.Dummy("z")
    f = sympy.lambdify(z, F.subs(field, z), "numpy")
    x = np.linspace(float(quantiles[1]), float(quantiles[-2]), 201)
    with np.errstate(all="ignore"):
        y = np.broadcast_to(np.asarray(f(x), dtype=float), x.shape)
    if not np.all(np.isfinite(y)) or np.ptp(y) <= 0.0:
        return False
    basis = np.stack([np.ones_like(x), x, *(x**k for k in powers)], axis=1)
    fit = basis @ np.linalg.lstsq(basis, y, rcond=None)[0]
    return float(np.max(np.abs(y - fit)) / np.ptp(y)) > tol


def _power(F):
    """(field, k) where ``F`` is a field to an integer power k ≥ 1, else None."""
    if isinstance(F, AppliedUndef):
        return F, 1
    if isinstance(F, sympy.Pow) and isinstance(F.base, AppliedUndef) and F.exp.is_Integer:
        return (F.base, int(F.exp)) if F.exp > 1 else None
    return None


def _function_of(F):
    """The one field ``F`` is a non-polynomial function of (no derivative inside), else
    None."""
    fields = F.atoms(AppliedUndef)
    if len(fields) != 1 or F.has(sympy.Derivative):
        return None
    field = next(iter(fields))
    return None if F.is_polynomial(field) else field


def _of_linear(F) -> bool:
    """Whether ``F`` is a function applied to a multiple of one field (sin(0.8 u), tanh
    u): its field is its first-order stand-in (sin(u)³ is not)."""
    if not isinstance(F, sympy.Function) or isinstance(F, AppliedUndef) or len(F.args) != 1:
        return False
    (arg,) = F.args
    fields = arg.atoms(AppliedUndef)
    if len(fields) != 1:
        return False
    field = next(iter(fields))
    return bool(arg.is_polynomial(field)) and sympy.degree(arg, field) == 1


def _leading(F, field) -> int | None:
    """The power of ``field`` in the first non-constant term of ``F``'s Taylor series at
    0 (sin(0.8 u): 1; u·sin(0.91 u): 2; eᵘ: 1), None where there is none to read."""
    z = sympy.Dummy("z")
    try:
        series = sympy.series(F.subs(field, z), z, 0, EXPANSION_DEGREE + 1).removeO()
    except (ValueError, TypeError, NotImplementedError, sympy.PoleError):
        return None
    for k in range(1, EXPANSION_DEGREE + 1):
        if series.coeff(z, k) != 0:
            return k
    return None


def _tie(F):
    """The ``tie`` of a function ``F`` swapped for its field: :data:`READABLE` (the field
    returned unless the function fits better) where the field is its first-order
    stand-in, else True (both uncertain)."""
    return READABLE if _of_linear(F) else True


def swaps(record, lib: dict, observed: dict, tol: float, noisy: bool = True, ill=False) -> list:
    """(replaced terms, other term, tie) to refit, ``other`` not in the equation: a
    determined field itself (u) with each non-polynomial function of that field alone
    among the candidates (``lib``: ``{short name: term}``) that is curved over the
    observed values (:func:`curved`); a determined such function, under a derivative or
    not, with the field itself under the same derivative (``tie``: the function must fit
    better, and where it does not, a function of a multiple of the field gives way to it:
    :func:`_tie`); and the powers of a field
    (:func:`_power_swaps`). An uncertain non-polynomial function of one field (the weak
    form cannot tell it from others) is swapped for the field under the same derivative,
    on clean data too (``tie`` :data:`READABLE`: the field is returned unless the function
    fits better). On clean data (not ``noisy``) no field is swapped for a
    function, no function under a derivative for the field and no reaction power for its
    neighbours (the refits' own differences pass the cutoff there). A determined function
    whose Taylor series starts with a power of the field above the first (u·sin(0.91 u))
    is swapped for that power under the same derivative instead (:data:`READABLE`): a
    Burgers flux with damping (−0.5 d_x(u²) + 0.05 u_xx − 0.1 u, 21 snapshots of 256
    places, σ 0.05) came back as −0.596 d_x(u·sin(0.9086 u)), determined beside its
    swap for u_x (20 154 worse). Where the equation is
    ill-posed (``ill``), a square alone under an even-order derivative is swapped for the
    field itself as well (:func:`_power_swaps`)."""
    from ...ir import Term

    out, groups, reactions = [], {}, {}

    def beside(field) -> list[int]:  # the field's powers among the equation's reactions
        held = [lib[t] for t in record.intervals]
        powers = [_power(t.F) for t in held if not t.alpha]
        return [p[1] for p in powers if p and p[0] == field and p[1] > 1]

    for term in record.intervals:
        mine = lib[term]
        power, field = _power(mine.F), _function_of(mine.F)
        if power and mine.alpha:
            groups.setdefault((mine.alpha, power[0]), []).append((power[1], term))
        elif power:
            reactions.setdefault(power[0], []).append((power[1], term))
        if record.verdicts.get(term) == "uncertain" and field is not None:
            if _of_linear(mine.F) and str(field.func) in observed:  # the field if as good
                out.append(((term,), Term(field, mine.alpha), READABLE))
            continue
        if record.verdicts.get(term) != "determined":
            continue
        lead = None if field is None or _of_linear(mine.F) else _leading(mine.F, field)
        if lead is not None and lead > 1 and str(field.func) in observed:
            # its stand-in is a power of the field (u·sin(0.91 u) for u²): READABLE
            out.append(((term,), Term(field**lead, mine.alpha), READABLE))
            continue
        if mine.alpha:
            if field is not None and noisy and str(field.func) in observed:
                out.append(((term,), Term(field, mine.alpha), _tie(mine.F)))
            continue
        seen = observed.get(str(getattr(power[0] if power else None, "func", "")), {})
        for other in lib.values():
            F, short = other.F, other.short()
            if short in record.intervals or other.alpha:
                continue
            if power and power[1] == 1 and seen.get("quantiles") and noisy:
                near = _function_of(F) == mine.F and not has_fitted_constants(other)
                if near and curved(F, mine.F, seen["quantiles"], tol, beside(mine.F)):
                    out.append(((term,), other, False))
            elif field == F and str(getattr(field, "func", "")) in observed:
                out.append(((term,), other, _tie(mine.F)))
    out += _power_swaps(record, groups, reactions if noisy else {}, ill)
    out += _stood_in(record, lib, groups, reactions)
    out += _other_field(record, lib, observed) if noisy else []
    return [(r, o, t) for r, o, t in out if o.short() not in record.intervals]


def _other_field(record, lib: dict, observed: dict) -> list:
    """A determined derivative of a field other than the left-hand side's own (v_xx in
    u_t) with the own field under the same derivative in its place (:data:`OWN`: where
    the data fit it as well, both are uncertain and the own field's is returned — a field
    that diffuses itself is the plainer model, and the returned equation then holds the
    true term where the data cannot tell; better, it is returned). A field driven by
    another (v_t = 0.1 u − 0.08 v) follows its shape, smoothed, and its derivatives stand
    in for the driver's: the FitzHugh–Nagumo variant built for tuning (0.8 u_xx in u_t,
    10 % point columns, σ 0.1, seed 1) came back with 4.4 v_xx + 13 v_xxx in place of
    u_xx, and u_xx excluded. On noisy data only, as the other stand-ins."""
    from ...ir import Term

    name = record.lhs.split("_")[0]
    own = next(
        (f for t in lib.values() for f in t.F.atoms(AppliedUndef) if str(f.func) == name), None
    )
    if own is None or name not in observed:
        return []
    out = []
    for term in record.intervals:
        mine = lib.get(term)
        if mine is None or not mine.alpha or record.verdicts.get(term) != "determined":
            continue
        if isinstance(mine.F, AppliedUndef) and own != mine.F:
            out.append(((term,), Term(own, mine.alpha), OWN))
    return out


def _stood_in(record, lib: dict, groups: dict, reactions: dict) -> list:
    """Two or more powers of one field under one derivative (``groups``) — or as reactions
    (``reactions``), none of them determined — with an uncertain candidate function of a
    multiple of that field under the same derivative (alone) in their place
    (:data:`READABLE`: the one term is returned unless the powers fit better): the zoo's
    exp flux −0.3 d_x(eᵘ) came back as its Taylor stand-in −0.31 u_x − 0.17 d_x(u²) and
    its tanh damping −0.8 tanh u as −0.77 u + 0.13 u³, the function uncertain. Reaction
    powers the data determine (Allen–Cahn's u − u³) are left as they are."""
    held_by = dict(groups)
    for field, held in reactions.items():
        if not any(record.verdicts.get(t) == "determined" for _, t in held):
            held_by[((), field)] = held
    out = []
    for (alpha, field), held in held_by.items():
        if len(held) < 2:
            continue
        for name, verdict in record.verdicts.items():
            other = lib.get(name)
            if verdict != "uncertain" or other is None or other.alpha != alpha:
                continue
            if _of_linear(other.F) and _function_of(other.F) == field:
                out.append((tuple(t for _, t in sorted(held)), other, READABLE))
    return out


def _power_swaps(record, groups: dict, reactions: dict, ill: bool = False) -> list:
    """Under each derivative (``groups``: ``{(α, field): [(k, term)]}``), the powers of one
    field the equation holds there, any determined (or one power k ≥ 2 alone, uncertain),
    with the next power alone (``tie``
    where it replaces more than one term: u_xx + d_xx(u²) must beat d_xx(u³)), two or more
    shifted by one (:data:`SHIFT`: the lowest in place of the next above the top, the top in
    place of the next below the lowest; a Gardner flux −0.6 d_x(u²) − 0.3 d_x(u³) over a soliton
    u ∈ [0, 1.2], σ 0.1, came back as 0.19 u_x − 1.16 d_x(u²), u_x determined, and the data
    fit d_x(u³) in its place as well, by 5.4), and a single
    power of at least 3 with the one below; a reaction power k ≥ 2 that is the only power
    of its field among the reactions (``reactions``: ``{field: [(k, term)]}``) or beside its
    first power only, determined, with k + 1 and k − 1 (u² alone with u³ and u; a logistic's
    u² beside u with u³). Beside u the power below is a tie, the simpler equation, which k
    must beat to stay determined (Allen–Cahn's u³ with u²; u⁴ must only not fit better):
    Burgers–Fisher built for tuning, σ 0.1, came back as u − u³ with u³ determined, and the
    data fit its true u² in place better (by 5.1). A square alone under an even-order
    derivative of an ill-posed equation (``ill``: its diffusion changes sign over the observed
    values) with the field itself (:data:`READABLE`: the well-posed one is returned unless
    the square fits better): an advection–diffusion–dispersion −0.3 u_x + 0.02 u_xx −
    0.05 u_xxx (10 % point columns, σ 0.05, u ∈ [−0.2, 1.2]) came back with 0.022 d_xx(u²)
    determined, D(u) = 0.044 u negative below 0, and u_xx excluded above 0.027."""
    from ...ir import Term

    out = []
    for (alpha, field), held in groups.items():
        held.sort()
        top = held[-1][0]
        sure = any(record.verdicts.get(t) == "determined" for _, t in held)
        # an uncertain power k ≥ 2 alone is refitted with its neighbours too: where the data
        # do not settle the term, they may not settle its power (the fast diffusion variant,
        # σ 0.2, seed 2: d_xx(u²) uncertain beside u_xx, its true cube excluded)
        if not sure and (len(held) > 1 or top < 2):
            continue
        # a drift u_x alone must beat the flux d_x(u²) too: over a front they stand in for
        # each other (Burgers–Fisher built for tuning, σ 0.1: u_x determined, ratio 0.09)
        drift = top == 1 and sum(n for _, n in alpha) == 1
        if len(held) > 1 or top > 1 or drift:
            swap = Term(field ** (top + 1), alpha)
            tie = len(held) > 1 or drift or NEIGHBOUR
            out.append((tuple(t for _, t in held), swap, tie))
            have = {k for k, _ in held}
            for k in range(held[0][0] + 1, top):  # a power in a gap between them (:data:`GAP`)
                if k not in have:
                    out.append((tuple(t for _, t in held), Term(field**k, alpha), GAP))
        if len(held) > 1:  # the powers shifted by one: as well, both are uncertain
            out.append(((held[0][1],), Term(field ** (top + 1), alpha), SHIFT))
            if held[0][0] > 1:
                out.append(((held[-1][1],), Term(field ** (held[0][0] - 1), alpha), SHIFT))
        even = sum(n for _, n in alpha) % 2 == 0
        if len(held) == 1 and top == 2 and even and sure and ill:
            out.append(((held[0][1],), Term(field, alpha), READABLE))
        elif len(held) == 1 and (top > 2 or (top == 2 and even)):
            out.append(((held[0][1],), Term(field ** (top - 1), alpha), NEIGHBOUR))
    for field, held in reactions.items():
        held.sort()
        # the field's one power k ≥ 2, alone or beside its first power (u − u³ or u − u²)
        lone = len(held) == 1 or (len(held) == 2 and held[0][0] == 1)
        k, term = held[-1]
        if not lone or k < 2 or record.verdicts.get(term) != "determined":
            continue
        out += [((term,), Term(field ** (k + 1), ()), False)]
        if k - 1 > held[0][0] or len(held) == 1:
            # beside u the lower power is the simpler equation: k must beat it to stay
            out.append(((term,), Term(field ** (k - 1), ()), len(held) == 2))
    return out


def additions(record, lib: dict, noisy: bool = True) -> list[str]:
    """The uncertain terms of ``record`` its equation lacks (candidates only), those of the
    closest alternatives first, at most ``ADDITIONS``, then on noisy data the next power of
    each power series the equation holds determined (:func:`_next_powers`; on clean data the
    refits' own differences pass the cutoff: clean Burgers–Fisher's u³ came back uncertain
    beside u − u²): refitted added to the equation, and
    returned with it where the data fit it better by more than ``ADDED_CHI2`` (Nagumo's u³
    beside u − u²). Never a
    function beside a monomial of its own expansion, nor such a monomial beside the
    function (the verdicts judge them only in each other's place): a damped heat equation
    built for tuning, u_t = 0.1 u_xx − 0.5 u at σ 0.05, came back as −0.40 u − 0.0011 u²
    − 0.10 sin u + 0.12 u_xx, sin u added and determined by a likelihood ratio of 14.1."""
    out: list[str] = []
    have = [lib[n] for n in record.intervals if n in lib]
    for alt in record.alternatives:
        for t in alt["terms"]:
            held = t in record.intervals or t in out or t not in lib
            if held or record.verdicts.get(t) != "uncertain":
                continue
            if not _beside_expansion(have, lib[t]):
                out.append(t)
    nxt = _next_powers(record, lib) if noisy else []
    return out[:ADDITIONS] + [t for t in nxt if t not in out]


def _next_powers(record, lib: dict) -> list[str]:
    """The next power of each field whose reactions in ``record``'s equation are its
    powers 1 to k (k ≥ 2, every one determined), where the candidates hold it and neither a
    function of that field nor its product with another field is among the reactions (clean
    Gray–Scott's v³ came back uncertain beside v²·w): refitted added, whatever the verdicts
    say of it. The Swift–Hohenberg variant built for tuning (−0.5 u + 0.8 u² − u³ − 1.5 u_xx
    − 0.6 u_xxxx, 10 % point columns, σ 0.1, seed 1) came back as −0.645 u + 0.504 u² −
    1.394 d_xx(sin u) − 0.56 u_xxxx, all determined and u³ excluded: no equation near the
    selection held it, so nothing offered it back (added, the data fit it better by 147)."""
    powers: dict = {}  # field -> its determined reaction powers (None: no power series)
    for name in record.intervals:
        term = lib.get(name)
        if term is None or term.alpha:
            continue
        fields = term.F.atoms(AppliedUndef)
        if len(fields) > 1:  # v²·w beside v, v² (Gray–Scott, w ≈ 1 − v): it carries v³
            powers.update(dict.fromkeys(fields))
        elif record.verdicts.get(name) == "determined":
            found = _power(term.F)
            if found is None:
                if (field := _function_of(term.F)) is not None:
                    powers[field] = None  # a function of the field: not a power series
            elif powers.get(found[0], set()) is not None:
                powers.setdefault(found[0], set()).add(found[1])
    out = []
    for field, held in powers.items():
        if not held or len(held) < 2 or held != set(range(1, max(held) + 1)):
            continue
        top = (field, max(held) + 1)
        nxt = next((n for n, t in lib.items() if not t.alpha and _power(t.F) == top), None)
        if nxt is not None and nxt not in record.intervals:
            out.append(nxt)
    return out


def _beside_expansion(terms: list, term) -> bool:
    """Whether ``term`` is a function of fields one of ``terms`` is a monomial of the
    expansion of (sin u beside u or u³), or a monomial of the expansion of a function
    among ``terms``."""
    group = [*terms, term]
    last = len(group) - 1
    alts = polynomial_alternatives(group, EXPANSION_DEGREE)
    return any((j == last and cols) or last in cols for j, cols in alts.items())


def specific(lhs: str, better: list, added: dict) -> list:
    """``better`` less the shifts (:data:`SHIFT`) and each addition the data do not fit
    better by ``REFIT_CHI2`` than
    another that passes ``ADDED_CHI2`` too (``added``: ``{term: statistic}``): the equation
    gains from more freedom, not from that term, and it stays uncertain (the assay twin,
    five snapshots, σ 0.2, seed 1: u³ added 18.5, u⁴ 18.0; u³ came back determined)."""
    out = []
    for entry in better:
        value, replaced, other = entry[:3]
        if entry[-1] == SHIFT:  # it makes terms uncertain, and is never returned
            continue
        rivals = {t: v for t, v in added.items() if t != other.short() and v < -ADDED_CHI2}
        rival = min(rivals, key=rivals.get) if rivals else None
        if replaced or rival is None or rivals[rival] - value >= REFIT_CHI2:
            out.append(entry)
            continue
        log.info(
            "symweak: %s: the data fit %s added better (likelihood ratio %.3g) and %s about "
            "as well (%.3g): they do not tell which term the equation lacks, so neither is "
            "returned", lhs, other.short(), -value, rival, -rivals[rival],
        )  # fmt: skip
    return out

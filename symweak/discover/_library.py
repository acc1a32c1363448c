"""The candidate library for both methods: symbols, filtering by constraints and rules,
per-equation libraries and conservation form, distinct functions F, term families, and the
preference for a function's polynomial expansion."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import sympy

from .._errors import IRError
from ..ir import Term, function_applications, is_field

log = logging.getLogger("symweak")


def symbols(coord_names: Sequence[str], field_names: Sequence[str]):
    """The coordinate symbols and the fields as applied functions ``u(t, x)``."""
    coords = [sympy.Symbol(n) for n in coord_names]
    return coords, [sympy.Function(f)(*coords) for f in field_names]


def filter_library(library: Sequence[Term], lhs_terms: Sequence[Term], constraints=None):
    """Drop the left-hand sides and forbidden terms; append the ``add:`` and ``keep:``
    terms that are missing."""
    lhs_set = set(lhs_terms)
    out = [t for t in library if t not in lhs_set]
    if constraints is not None:
        forbid = set(constraints.forbid)
        out = [t for t in out if t not in forbid]
        out += [
            t
            for t in dict.fromkeys([*constraints.add, *constraints.keep])
            if t not in out and t not in lhs_set
        ]
    return out


def has_fitted_constants(term) -> bool:
    """Whether ``term``'s F holds numbers that are not integers (constants a fit put there:
    sin(0.8678 u − 0.0656) yes; u², sin u, u·sin v no)."""
    return any(not c.is_integer for c in term.F.atoms(sympy.Number))


def term_families(terms: Sequence[Term]) -> list[tuple]:
    """Each term's ``(F, α)`` key for :func:`symweak.regress.family_swaps`: F up to a
    numeric factor (as a term without derivatives) and the multi-index."""
    return [(Term(t.F), t.alpha) for t in terms]


def polynomial_alternatives(terms: Sequence[Term], degree: int = 3) -> dict[int, list[int]]:
    """For each term D^α f(U) whose f applies a function (sin u, tanh u, u·exp v), the
    positions of the terms that expand it: D^α of a monomial of f's fields up to ``degree``
    (the ones ``terms`` holds). Product terms (derivatives inside f) have none."""

    def applies(F) -> bool:
        return function_applications(F) > 0

    out: dict[int, list[int]] = {}
    for j, t in enumerate(terms):
        if not applies(t.F) or t.F.atoms(sympy.Derivative):
            continue
        own = set(t.fields)
        alts = []
        for i, s in enumerate(terms):
            if i == j or s.alpha != t.alpha or applies(s.F) or s.F.atoms(sympy.Derivative):
                continue
            if not set(s.fields) <= own or not s.F.is_polynomial(*s.fields):
                continue
            d = sympy.Poly(s.F, *s.fields).total_degree() if s.fields else 0
            if 1 <= d <= degree:
                alts.append(i)
        out[j] = alts
    return out


#: a function term's polynomial expansion: monomials of its fields up to this degree
EXPANSION_DEGREE = 3


#: prefer readable terms (no fitted constants inside F; a function's polynomial expansion)
#: while the residual grows at most this much (both methods)
READABLE_SLACK = 0.25


def prefer_expansions(
    G, b, fit, lib, keep, criterion, complexity, families, slack=READABLE_SLACK,
    degree=EXPANSION_DEGREE, values=None,
):  # fmt: skip
    """``fit`` with each function term of ``lib`` (sin u, tanh u; not those in ``keep``)
    replaced by its polynomial expansion up to ``degree`` wherever that scores at most
    ``slack`` worse (:func:`symweak.regress.prefer_polynomials`), the replacement chosen by
    the same selection (``criterion``, ``complexity``, ``families``) among the rest of the
    support and the expansion's columns. With ``values`` (``{field name: the data's
    values}``) the slack applies only where the function and the chosen monomials agree over
    the data (:func:`stand_in_error` at most ``RANGE_TOLERANCE``); where they differ (sin u
    against u when |u| reaches 2.6) the expansion must score no worse than the function."""
    from ..regress import LOG_PENALTY, mstls, prefer_polynomials

    kept = set(keep)
    alts = {j: a for j, a in polynomial_alternatives(lib, degree).items() if j not in kept}
    if not (alts and slack):
        return fit

    def select_among(Gs, bs, cols):
        return mstls(
            Gs,
            bs,
            keep=[i for i, c in enumerate(cols) if c in kept],
            criterion=criterion,
            complexity=None if complexity is None else complexity[cols],
            families=[families[c] for c in cols],
        )

    differs = None
    if values is not None:

        def differs(j, chosen):
            error = stand_in_error(lib[j], [lib[i] for i in chosen], values)
            if error > RANGE_TOLERANCE:
                log.info(
                    "final fit: %s differs from %s over the data (%.1f %% of its size): "
                    "the expansion must fit at least as well",
                    lib[j].short(),
                    ", ".join(lib[i].short() for i in chosen) or "nothing",
                    100 * error,
                )
                return True
            return False

    return prefer_polynomials(
        G, b, fit, alts, select_among, slack, complexity, LOG_PENALTY, differs=differs
    )


#: a function and its polynomial stand-in differ over the data's range when the stand-in's
#: best fit to it misses it by more than this share of the function's size (RMS over the data)
RANGE_TOLERANCE = 0.01

#: at most this many of the data's points measure a stand-in (every k-th point)
RANGE_POINTS = 20_000


def stand_in_error(term: Term, monomials: Sequence[Term], values: Mapping) -> float:
    """How far the polynomial terms ``monomials`` (their F) are from ``term``'s F over the
    data's ``values`` (``{field name: array}``, one entry per point): the RMS of F minus its
    least-squares fit on the monomials (and a constant when ``term`` is differentiated,
    which d_x ignores) over the RMS of F (0: the same function there; 1: nothing of F).
    A term whose fields are not all in ``values`` counts as agreeing (0)."""
    import numpy as np

    from ..ir import field_name

    fields = list(term.fields)
    names = [field_name(f) for f in fields]
    if not fields or any(n not in values for n in names):
        return 0.0
    n = len(np.asarray(values[names[0]]))
    step = max(1, -(-n // RANGE_POINTS))
    cols = [np.asarray(values[name], dtype=float).ravel()[::step] for name in names]

    def evaluate(F):
        out = sympy.lambdify(fields, F, "numpy")(*cols)
        return np.broadcast_to(np.asarray(out, dtype=float), cols[0].shape)

    f = evaluate(term.F)
    if term.alpha:
        f = f - f.mean()
    size = float(np.sqrt(np.mean(f**2)))
    if not np.isfinite(size) or size == 0.0:
        return 0.0
    basis = [evaluate(m.F) for m in monomials] + ([np.ones_like(f)] if term.alpha else [])
    if not basis:
        return 1.0
    A = np.stack(basis, axis=1)
    coef = np.linalg.lstsq(A, f, rcond=None)[0]
    return float(np.sqrt(np.mean((f - A @ coef) ** 2)) / size)


def power_neighbours(terms: Sequence[Term]) -> dict[int, list[int]]:
    """For each power of one field under a derivative, D^α(u^k) (u_xx is k = 1), the
    positions of D^α(u^(k-1)) and D^α(u^(k+1)) among ``terms`` (those it holds): the
    neighbouring powers :func:`symweak.regress.prefer_neighbours` compares directly."""
    where: dict = {}
    for i, t in enumerate(terms):
        fields = list(t.fields)
        if not t.alpha or len(fields) != 1 or t.F.atoms(sympy.Derivative):
            continue
        base, k = t.F.as_base_exp()
        if base == fields[0] and k.is_Integer and int(k) >= 1:
            where[(base, t.alpha, int(k))] = i
    out: dict[int, list[int]] = {}
    for (base, alpha, k), i in where.items():
        near = [where.get((base, alpha, n)) for n in (k - 1, k + 1)]
        if any(n is not None for n in near):
            out[i] = [n for n in near if n is not None]
    return out


#: the steps in each field's power that make a monomial's neighbours; two up only for a
#: power of one field (its parity partner: u³ beside u, as in u_tt = 0.5 u_xx − u − u³,
#: whose read-back gave u alone and which came back as −1.585 u + 0.417 u_xx, 12 % of u_tt
#: unexplained, on clean data)
NEIGHBOUR_STEPS = (1, 2, -1)


def monomial_neighbours(terms: Sequence[Term], fields: Sequence, max_degree: int) -> list[Term]:
    """The monomials one degree up and one down from each monomial of ``terms`` under the
    same multi-index, and two up from a power of one field (D^α(u²) gives D^α(u³), D^α(u⁴)
    and D^α(u); u·v gives u²·v, u·v², u and v; u gives u², u³ and the constant 1, u_x gives
    d_x(u²), d_x(u³) but no constant), of total degree
    at most ``max_degree``, that ``terms`` do not hold: the library's neighbours offered
    when its fit leaves a clear part of the left-hand side unexplained."""
    present = set(terms)
    out: list[Term] = []
    for term in terms:
        try:
            poly = sympy.Poly(term.F, *fields)
        except sympy.PolynomialError:
            continue
        if len(poly.terms()) != 1 or poly.LC() != 1:
            continue
        powers = poly.monoms()[0]
        for i in range(len(fields)):
            for step in NEIGHBOUR_STEPS:
                if step == 2 and any(n for j, n in enumerate(powers) if j != i):
                    continue
                new = [n + step * (j == i) for j, n in enumerate(powers)]
                if min(new) < 0 or sum(new) > max_degree or (term.alpha and not sum(new)):
                    continue
                F = sympy.Mul(*(f**n for f, n in zip(fields, new)))
                try:
                    found = Term(F, term.alpha).canonical()[1]
                except IRError:
                    continue
                if found not in present and found not in out:
                    out.append(found)
    return out


def time_terms(lhs_terms: Sequence[Term], library: Sequence[Term] = ()) -> list[Term]:
    """The lower time derivatives of each left-hand side's own field that ``library`` does
    not hold: u_t for u_tt (a damping: the telegraph equation u_tt = u_xx − 0.3 u_t came
    back as 1.02 u_xx, 26 % of u_tt unexplained, with nothing uncertain), u_t and u_tt for
    u_ttt. Neither library reaches them otherwise: both pair F(U) with spatial derivatives
    only. A left-hand side of first order in time gives none."""
    present = set(library) | set(lhs_terms)
    out: list[Term] = []
    for lhs in lhs_terms:
        for axis, n in lhs.alpha:
            if str(axis) != "t" or not is_field(lhs.F) or len(lhs.alpha) != 1:
                continue
            for k in range(1, n):
                term = Term(lhs.F, {axis: k})
                if term not in present and term not in out:
                    out.append(term)
    return out


def distinct_functions(terms: Sequence[Term]) -> tuple[list[sympy.Expr], dict]:
    """The distinct F of ``terms`` in first-seen order, and ``{F: position}``."""
    funcs: list[sympy.Expr] = []
    index: dict = {}
    for term in terms:
        if term.F not in index:
            index[term.F] = len(funcs)
            funcs.append(term.F)
    return funcs, index


def union(libraries: Mapping) -> list[Term]:
    """The terms of several libraries, each once, in first-seen order."""
    return list(dict.fromkeys(t for lib in libraries.values() for t in lib))


def problem_rules(problem) -> list:
    """The rules that act on ``problem``'s libraries as rule objects: the constraints'
    first, then the problem's own."""
    from ..rules import Rule, rule_from_spec

    constraints = problem.constraints
    specs = [*(constraints.rules if constraints is not None else ()), *problem.rules]
    return [r if isinstance(r, Rule) else rule_from_spec(r) for r in specs]


def equation_libraries(problem, library):
    """Per-equation libraries ``{lhs: [terms]}`` after the rules (constraint rules first,
    then the problem's rules), the rule reports, and the ties of ``pair`` rules (see
    :func:`fit_equations`). Kept terms (``keep:``) survive every rule."""
    from ..rules import apply_rules

    constraints = problem.constraints
    rules = problem_rules(problem)
    libs = conservation_form({lhs: list(library) for lhs in problem.lhs}, constraints)
    if not rules:
        return libs, [], []
    coords, fields = problem.coords, problem.fields
    libs, reports = apply_rules(libs, rules, coords, fields)
    ties = [tie for r in rules for tie in r.ties(libs, coords, fields)]
    for report in reports:
        report.ties = [
            [a.short(), b.short(), [[t.short(), p.short(), k] for t, p, k in pairs]]
            for a, b, pairs in ties
        ]
    libs = conservation_form(libs, constraints)  # again: rules may have added terms
    if constraints is not None and constraints.keep:
        for lhs, lib in libs.items():
            lib.extend(t for t in constraints.keep if t not in lib and t != lhs)
    for report in reports:
        log.info("%s", report)
    return libs, reports, ties


def kept_by_filters(problem, lhs, terms) -> list[Term]:
    """``terms`` less those a filter rule (constraint rules, then the problem's) removes
    from ``lhs``'s library: for terms that join a library after the rules ran (product
    terms of the final fit)."""
    from ..rules import apply_rules

    filters = [r for r in problem_rules(problem) if r.action == "filter"]
    if not filters or not terms:
        return list(terms)
    libs, _ = apply_rules({lhs: list(terms)}, filters, problem.coords, problem.fields)
    return libs[lhs]


def conserves(lhs: Term, constraints) -> bool:
    """Whether ``conserved:`` puts the equation of ``lhs`` in conservation form."""
    return bool(
        constraints is not None
        and constraints.conserved
        and any(f.func.__name__ in constraints.conserved for f in lhs.fields)
    )


def is_flux_term(term: Term, lhs: Term) -> bool:
    """A derivative along a coordinate the left-hand side does not take (d_x(J) for u_t):
    what a conservation law u_t = d_x(J) may hold."""
    own = set(lhs.order)
    return any(n and c not in own for c, n in term.order.items())


def conservation_form(libs: dict, constraints) -> dict:
    """``libs`` with the equations that ``conserved:`` names reduced to terms in
    conservation form (:func:`is_flux_term`); the others unchanged."""
    out = {}
    for lhs, lib in libs.items():
        if conserves(lhs, constraints):
            kept = [t for t in lib if is_flux_term(t, lhs)]
            gone = [t.short() for t in lib if t not in kept]
            if gone:
                log.info("conserved: %s loses %s", lhs.short(), ", ".join(gone))
            out[lhs] = kept
        else:
            out[lhs] = lib
    return out


def kept_indices(terms: Sequence[Term], constraints) -> list[int]:
    """Positions of the ``keep:`` terms in ``terms`` (the sparse fit never drops them)."""
    keep = set(constraints.keep) if constraints is not None else set()
    return [i for i, t in enumerate(terms) if t in keep]

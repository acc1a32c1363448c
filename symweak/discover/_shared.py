"""Steps both discovery methods use: symbols, test functions, the candidate library's
filtering and rules, distinct functions F of the library, per-term complexity, and the
sparse fits of (possibly tied) equations."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

from .._errors import SymweakError
from ..ir import Term, function_applications

__all__ = [
    "bump_for_orders",
    "conservation_form",
    "conserves",
    "distinct_functions",
    "equation_libraries",
    "filter_library",
    "is_flux_term",
    "kept_indices",
    "make_tests",
    "spectral_radius",
    "symbols",
    "union",
]

log = logging.getLogger("symweak")


def symbols(coord_names: Sequence[str], field_names: Sequence[str]):
    """The coordinate symbols and the fields as applied functions ``u(t, x)``."""
    coords = [sympy.Symbol(n) for n in coord_names]
    return coords, [sympy.Function(f)(*coords) for f in field_names]


def bump_for_orders(test_function: str, orders: Mapping[str, int]) -> str:
    """``"poly"`` becomes ``"poly:P"`` smooth enough for every derivative order used (and
    well resolved by quadrature); other names are kept."""
    if test_function == "poly":
        return f"poly:{max(8, max(orders.values()) + 4)}"
    return test_function


def spectral_radius(axes, grids: Sequence[np.ndarray], bump: str) -> dict[str, float]:
    """Per-axis radius read off the spectrum of each field (the largest over the fields)."""
    from ..weak import TestFunctionSet

    radius: dict[str, float] = {}
    for values in grids:
        r = TestFunctionSet.auto_radius(axes, values, bump)
        radius = {n: max(radius.get(n, 0.0), v) for n, v in r.items()}
    return radius


#: a lattice axis of the data is integrated on only with at least this many points ...
LATTICE_MIN_POINTS = 32
#: ... and no gap wider than this many times its median spacing
LATTICE_MAX_GAP = 1.5


def lattice_axis_ok(axis) -> bool:
    """Whether a data lattice's axis is fine and even enough to integrate test functions on:
    a simulation grid is; 24 sensors at scattered positions, or 12 snapshots at scattered
    times, are not (a support then holds a handful of unevenly spaced nodes)."""
    a = np.asarray(axis, dtype=float)
    if len(a) < LATTICE_MIN_POINTS:
        return False
    steps = np.diff(a)
    return bool(steps.max() <= LATTICE_MAX_GAP * np.median(steps))


#: no test-function radius below this many quadrature spacings of its axis: a support then
#: spans more than 3 spacings, so it holds the 3 grid points the assembly asks for at least
#: (a draw with smaller radii stopped discover with an error; every benchmark row's radii
#: are above this, so none changes)
MIN_SUPPORT_SPACINGS = 1.5


def support_floor(axes) -> dict[str, float]:
    """Per axis, :data:`MIN_SUPPORT_SPACINGS` times the quadrature grid's widest spacing."""
    return {
        n: MIN_SUPPORT_SPACINGS * float(np.max(np.diff(np.asarray(a, dtype=float))))
        for n, a in axes.items()
        if len(a) > 1
    }


def _draw_tests(bounds, n: int, eta, seed: int, bump: str, scale: str, radius=None, floor=None):
    from ..weak import TestFunctionSet

    if scale == "cap":
        return TestFunctionSet.random(
            bounds, n, eta, seed, bump, scale="cap", radius=radius, floor=floor
        )
    if scale == "spectrum":
        return TestFunctionSet.random(
            bounds, n, eta, seed, bump, scale="paper", radius=radius, floor=floor
        )
    return TestFunctionSet.random(bounds, n, eta, seed, bump, scale=scale, floor=floor)


#: draws of candidate test functions tried before giving up on filling a domain
DOMAIN_DRAWS = 40


def points_inside(points: np.ndarray, centers: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """How many of ``points`` (N, d) lie inside each support box ``centers ± radii`` (K, d);
    in blocks of test functions so that no intermediate exceeds about 4 million entries."""
    points = np.asarray(points, dtype=float)
    out = np.zeros(len(centers), dtype=np.int64)
    block = max(1, 4_000_000 // max(1, points.size))
    for s in range(0, len(centers), block):
        c, r = centers[s : s + block, None, :], radii[s : s + block, None, :]
        out[s : s + block] = np.all(np.abs(points[None] - c) < r, axis=-1).sum(axis=1)
    return out


def make_tests(
    bounds,
    n: int,
    eta,
    seed: int,
    bump: str,
    scale: str,
    radius=None,
    domain=None,
    points=None,
    min_points: int = 0,
    floor=None,
):
    """The test functions for one radii ``scale`` (see :mod:`symweak.discover._config`);
    ``radius`` is the spectral radius that ``"cap"`` and ``"spectrum"`` use; ``floor``
    (:func:`support_floor`) the smallest radius per axis.

    With a ``domain`` (:class:`symweak.Domain`), candidates are drawn in seeded batches and
    only those whose support lies wholly inside the domain (in space) are kept, until ``n``
    are found. Where fewer than a quarter of ``n`` (or 8) fit, the radii are halved (up to
    twice, with a warning) before it is an error that says how many fit; ``how`` records
    how many were drawn and any shrinking.

    With ``points`` (the observations' coordinates, (N, d) in the order of ``bounds``) and
    ``min_points`` > 0, a test function is kept only where its support holds at least
    ``min_points`` observations (the surrogate has data nearby). Where every test function
    of the usual draw passes, that draw is returned unchanged; otherwise the ones that pass
    are topped up from seeded batches, and ``how`` says how many were kept of how many."""
    near = None
    if points is not None and min_points > 0:
        pts = np.asarray(points, dtype=float)

        def near(centers, radii):
            return points_inside(pts, centers, radii) >= min_points

    if domain is None:
        tests = _draw_tests(bounds, n, eta, seed, bump, scale, radius, floor)
        if near is None:
            return tests
        ok = near(tests.centers, tests.radii)
        if ok.all():
            return tests
        need = min(n, max(8, n // 4))
        label = f"with >= {min_points} observations in the support"
        found, tried = _inside(
            bounds, n, eta, seed, bump, scale, radius, near, "nearby", label,
            first=(tests, ok), floor=floor,
        )  # fmt: skip
        if found is None or len(found) < need:
            raise SymweakError(
                f"Only {0 if found is None else len(found)} of {tried} test functions drawn "
                f"hold at least {min_points} observations in their support; lower min_points, "
                "give larger radii (eta), or check the coordinates of the data."
            )
        log.info("symweak: %d test functions (%s)", len(found), found.how)
        return found
    need = min(n, max(8, n // 4))
    drawn = 0

    index = [tuple(bounds).index(nm) for nm in domain.names]

    def accept(centers, radii):
        ok = domain.box_inside(centers[:, index], radii[:, index])
        return ok if near is None else ok & near(centers, radii)

    label = "inside the domain"
    if near is not None:
        label += f" with >= {min_points} observations in the support"
    for shrink in (1.0, 0.5, 0.25):
        eta_s = (eta[0] * shrink, eta[1] * shrink)
        radius_s = None if radius is None else {k: v * shrink for k, v in radius.items()}
        tests, tried = _inside(
            bounds, n, eta_s, seed, bump, scale, radius_s, accept, "domain", label, floor=floor
        )
        drawn += tried
        if tests is not None and len(tests) >= need:
            if shrink < 1:
                log.warning(
                    "symweak: test-function radii shrunk to %g of the default so that "
                    "supports fit inside the domain",
                    shrink,
                )
                tests = dataclasses.replace(tests, how=f"{tests.how}, radii × {shrink:g}")
            log.info("symweak: %d test functions inside the domain (%s)", len(tests), tests.how)
            return tests
    raise SymweakError(
        f"Only {0 if tests is None else len(tests)} of {drawn} test functions drawn fit inside "
        f"the domain ({domain.describe()}), even with radii a quarter of the default; give "
        "smaller radii (eta) or fewer test functions, or check the domain."
    )


def _inside(
    bounds, n, eta, seed, bump, scale, radius, accept, stream, label, first=None, floor=None
):
    """Up to ``n`` test functions that ``accept(centers, radii)`` passes (None if none), and
    how many were drawn: from seeded batches of stream ``stream``, after the ones of
    ``first`` = (a drawn set, its acceptance mask) where given; ``label`` says in ``how``
    what was asked of them."""
    from .._seeds import child_seed
    from ..weak import TestFunctionSet

    names = tuple(bounds)
    centers, radii, drawn, found = [], [], 0, 0
    if first is not None:
        batch, ok = first
        centers.append(batch.centers[ok])
        radii.append(batch.radii[ok])
        drawn, found = len(batch), int(ok.sum())
        first = batch
    for attempt in range(DOMAIN_DRAWS):
        if found >= n:
            break
        batch = _draw_tests(
            bounds, max(2 * n, 64), eta, child_seed(seed, stream) + 7 * attempt, bump, scale,
            radius, floor,
        )  # fmt: skip
        if first is None:
            first = batch
        ok = accept(batch.centers, batch.radii)
        drawn += len(batch)
        centers.append(batch.centers[ok])
        radii.append(batch.radii[ok])
        found += int(ok.sum())
    if not found:
        return None, drawn
    kept = min(found, n)
    how = f"{first.how}, {label} ({kept} kept of {drawn} drawn)"
    cs, rs = np.concatenate(centers)[:kept], np.concatenate(radii)[:kept]
    return TestFunctionSet(names, cs, rs, first.bump, how), drawn


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
    degree=EXPANSION_DEGREE,
):  # fmt: skip
    """``fit`` with each function term of ``lib`` (sin u, tanh u; not those in ``keep``)
    replaced by its polynomial expansion up to ``degree`` wherever that scores at most
    ``slack`` worse (:func:`symweak.regress.prefer_polynomials`), the replacement chosen by
    the same selection (``criterion``, ``complexity``, ``families``) among the rest of the
    support and the expansion's columns."""
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

    return prefer_polynomials(G, b, fit, alts, select_among, slack, complexity, LOG_PENALTY)


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


def equation_libraries(problem, library):
    """Per-equation libraries ``{lhs: [terms]}`` after the rules (constraint rules first,
    then the problem's rules), the rule reports, and the ties of ``pair`` rules (see
    :func:`fit_equations`). Kept terms (``keep:``) survive every rule."""
    from ..rules import apply_rules, rule_from_spec

    constraints = problem.constraints
    specs = [*(constraints.rules if constraints is not None else ()), *problem.rules]
    libs = conservation_form({lhs: list(library) for lhs in problem.lhs}, constraints)
    if not specs:
        return libs, [], []
    coords, fields = problem.coords, problem.fields
    libs, reports = apply_rules(libs, specs, coords, fields)
    rule_objs = [r if hasattr(r, "ties") else rule_from_spec(r) for r in specs]
    ties = [tie for r in rule_objs for tie in r.ties(libs, coords, fields)]
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

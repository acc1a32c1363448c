"""Per-term complexity weights for the sparsity penalty, and sparse fits of equations tied
by ``pair`` rules (one joint design; a rule that maps an equation onto itself ties terms
within it: one merged column per group of tied terms, see :func:`self_tie_groups`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .._errors import SymweakError
from ..ir import Term, function_applications, polynomial_degree

__all__ = [
    "expand_fit",
    "fit_equations",
    "merge_columns",
    "self_tie_groups",
    "self_ties",
    "term_complexity",
]

#: what each application of a function that is not a polynomial (sin, tanh, exp) adds to a
#: term's weight: sin u then weighs 1.25 against u's 1, so that where u and sin u explain the
#: data equally well the polynomial is kept (Kuramoto–Sivashinsky with other coefficients
#: from 10 % of the grid at σ = 0.2: d_xx(sin u) + d_xxxx(sin u) on 7 of 20 halves of the
#: test functions, u_xx + u_xxxx on 13), while a function the data need still wins
#: (sine-Gordon's sin u lowers the residual 1.6×, the extra weight asks 1.13×)
FUNCTION_WEIGHT = 0.25


def term_complexity(library: Sequence[Term], how: str) -> np.ndarray | None:
    """Per-term weights for the sparsity penalty: ``"terms"`` (all 1), ``"degree"`` (the
    polynomial degree of F, at least 1), ``"degree:w"`` (1 + w·(degree − 1): each degree
    above the first adds w of a term), ``"degree+order"`` (degree + derivative order / 2).
    A function of the fields counts as its argument's degree (sin u: 1, v·sin u: 2): one
    operator applied to a field is as simple as the field itself, and a flat 2 kept
    sine-Gordon's sin u out of the model at σ = 0.2 (it lowers the residual 1.6×). Each
    application of a non-polynomial function adds ``FUNCTION_WEIGHT`` (sin u: 1.25)."""
    per_degree = None
    if isinstance(how, str) and how.startswith("degree:"):
        try:
            per_degree = float(how[len("degree:") :])
        except ValueError:
            per_degree = None
        if per_degree is None or not (np.isfinite(per_degree) and per_degree >= 0):
            raise SymweakError(
                f"complexity 'degree:w' needs a number w >= 0 (e.g. 'degree:0.25'), got {how!r}."
            )
    elif how not in ("terms", "degree", "degree+order"):
        raise SymweakError(
            f"complexity must be 'terms', 'degree', 'degree:w' or 'degree+order', got {how!r}."
        )
    if how == "terms":
        return None
    out = []
    for term in library:
        degree = max(polynomial_degree(term.F, term.fields), 1)
        if per_degree is not None:
            w = 1.0 + per_degree * (degree - 1)
        elif how == "degree+order":
            w = degree + 0.5 * term.total_order
        else:
            w = degree
        out.append(float(w) + FUNCTION_WEIGHT * function_applications(term.F))
    return np.array(out)


def _tied_design(lib, G, lib_b, G_b, pairs):
    """The joint design of two tied equations: shared columns for tied term pairs."""
    pos_a = {t: i for i, t in enumerate(lib)}
    pos_b = {t: i for i, t in enumerate(lib_b)}
    partner = {t: (p, k) for t, p, k in pairs if t in pos_a and p in pos_b}
    used = {p for p, _ in partner.values()}
    cols, names = [], []
    zeros_a, zeros_b = np.zeros(G.shape[0]), np.zeros(G_b.shape[0])
    for t in lib:
        if t in partner:
            p, k = partner[t]
            cols.append(np.concatenate([G[:, pos_a[t]], k * G_b[:, pos_b[p]]]))
        else:
            cols.append(np.concatenate([G[:, pos_a[t]], zeros_b]))
        names.append(("a", t))
    for p in lib_b:
        if p not in used:
            cols.append(np.concatenate([zeros_a, G_b[:, pos_b[p]]]))
            names.append(("b", p))
    return np.stack(cols, axis=1), names, partner


def fit_equations(designs, ties, fit_fn):
    """Sparse fits per equation, with the equations tied by ``pair`` rules fitted jointly.

    designs: ``{lhs: (terms, G, b)}``; ties: ``[(lhs A, lhs B, [(T, T', k), ...])]`` meaning
    B's coefficient of T' is k times A's coefficient of T; fit_fn(G, b, terms) -> Fit.
    Returns ``{lhs: (rhs dict, fit)}``.
    """
    out = {}
    tied = {a: (b, pairs) for a, b, pairs in ties if a in designs and b in designs and a != b}
    partners = {b for b, _ in tied.values()}
    inner = self_ties(designs, ties)
    both = sorted(lhs.short() for lhs in inner if lhs in tied or lhs in partners)
    if both:
        raise SymweakError(
            f"The equation(s) {', '.join(both)} are tied both to another equation and within "
            "themselves by `pair` rules; fitting both kinds of tie at once is not supported "
            "yet: keep one of the rules as `pair` and give the other as `augment`."
        )
    for lhs, (lib, G, b) in designs.items():
        if lhs in partners and lhs not in tied:
            continue
        if lhs in inner:
            groups = inner[lhs]
            merged = fit_fn(merge_columns(G, groups), b, [lib[idx[0]] for idx, _ in groups])
            fit = expand_fit(merged, groups, len(lib))
            out[lhs] = ({lib[j]: float(fit.coef[j]) for j in fit.support}, fit)
            continue
        if lhs not in tied:
            fit = fit_fn(G, b, lib)
            out[lhs] = ({lib[j]: float(fit.coef[j]) for j in fit.support}, fit)
            continue
        other, pairs = tied[lhs]
        lib_b, G_b, b_b = designs[other]
        joint, names, partner = _tied_design(lib, G, lib_b, G_b, pairs)
        fit = fit_fn(joint, np.concatenate([b, b_b]), [t for _, t in names])
        rhs_a, rhs_b = {}, {}
        for j in fit.support:
            side, t = names[j]
            c = float(fit.coef[j])
            if side == "a":
                rhs_a[t] = c
                if t in partner:
                    p, k = partner[t]
                    rhs_b[p] = k * c
            else:
                rhs_b[t] = c
        out[lhs] = (rhs_a, fit)
        out[other] = (rhs_b, fit)
    return out


def self_tie_groups(lib: Sequence[Term], pairs) -> list[tuple[np.ndarray, np.ndarray]]:
    """The columns of one equation's design grouped by a ``pair`` rule that maps the equation
    onto itself: ``[(indices, factors)]``, one group per merged column, in library order.

    ``pairs`` ``[(T, T', k)]`` say that the coefficient of T' is k times that of T (a
    rotation by a quarter turn: ω_yy is ω_xx's image, k = 1). Connected terms form a group
    whose coefficients are ``factors`` times one shared coefficient (the first term's
    factor is 1). Where the ties contradict one another (ω_x -> ω_y -> −ω_x, or a term that
    is its own image with k ≠ 1) no shared coefficient but 0 satisfies them, and the group's
    terms are left out (they break the symmetry the rule states). Terms the pairs do not
    name are groups of their own."""
    pos = {t: i for i, t in enumerate(lib)}
    edges: dict[int, list[tuple[int, float]]] = {i: [] for i in range(len(lib))}
    broken = set()
    for t, p, k in pairs:
        if t not in pos or p not in pos:
            continue
        i, j = pos[t], pos[p]
        if i == j:
            if not np.isclose(k, 1.0):
                broken.add(i)
            continue
        edges[i].append((j, float(k)))
        edges[j].append((i, 1.0 / float(k)))
    seen: dict[int, float] = {}
    groups = []
    for root in range(len(lib)):
        if root in seen:
            continue
        seen[root] = 1.0
        members, queue, ok = [root], [root], root not in broken
        while queue:
            i = queue.pop()
            for j, k in edges[i]:
                want = seen[i] * k
                if j not in seen:
                    seen[j] = want
                    members.append(j)
                    queue.append(j)
                    ok &= j not in broken
                elif not np.isclose(seen[j], want, rtol=1e-9, atol=0.0):
                    ok = False
        if ok:
            members.sort()
            f = np.array([seen[m] for m in members]) / seen[members[0]]
            groups.append((np.array(members), f))
    groups.sort(key=lambda g: g[0][0])
    return groups


def self_ties(designs, ties) -> dict:
    """``{lhs: groups}`` (:func:`self_tie_groups`) of the equations of ``designs`` that a
    ``pair`` rule maps onto themselves, where the ties change the design."""
    out = {}
    for a, b, pairs in ties:
        if a != b or a not in designs:
            continue
        lib = designs[a][0]
        groups = self_tie_groups(lib, pairs)
        if len(groups) != len(lib):
            out[a] = groups
    return out


def merge_columns(G: np.ndarray, groups) -> np.ndarray:
    """One column per group: the group's columns weighted by their factors and summed."""
    return np.stack([G[:, idx] @ f for idx, f in groups], axis=1)


def expand_fit(fit, groups, n: int):
    """A fit on merged columns (:func:`merge_columns`) as a fit on the ``n`` original ones:
    each term of a group gets its factor times the group's coefficient (and the group's
    inclusion probability); terms in no group get 0."""
    coef = np.zeros(n)
    probs = None if fit.probabilities is None else np.zeros(n)
    for g, (idx, f) in enumerate(groups):
        coef[idx] = f * fit.coef[g]
        if probs is not None:
            probs[idx] = fit.probabilities[g]
    return replace(fit, coef=coef, probabilities=probs)


def _tied_pairs(designs, ties):
    """Per tie between two of ``designs``: (lhs A, lhs B, the tied pairs, the joint design,
    its stacked left-hand side, its columns' (side, term) names, A's partners)."""
    for a, other, pairs in ties:
        if a not in designs or other not in designs or a == other:
            continue
        lib, G, b = designs[a]
        lib_b, G_b, b_b = designs[other]
        joint, names, partner = _tied_design(lib, G, lib_b, G_b, pairs)
        yield a, other, pairs, joint, np.concatenate([b, b_b]), names, partner


def tied_intervals(designs, ties, fits, interval_fn, others=()) -> dict:
    """Intervals of the coefficients of equations tied by ``pair`` rules:
    ``{lhs: {term: (low, high)}}`` for both equations of each tie.

    designs, ties: as for :func:`fit_equations`; fits: ``{lhs: fit}`` with each tie's joint
    fit (what :func:`fit_equations` returned); ``interval_fn(G, b, support) -> (lo, hi)``
    per column of the joint design; ``others``: more ``designs`` (other test-function
    variants) on which the joint support is refitted by ``refit(G, b, support)`` given as
    ``others=[(designs, refit), ...]``, each interval widened to hold those coefficients.
    A tied partner's interval is its factor k times the shared one."""
    out = {}
    for lhs, other, pairs, joint, b_joint, names, partner in _tied_pairs(designs, ties):
        fit = fits[lhs]
        if len(fit.coef) != joint.shape[1]:
            continue
        lo, hi = interval_fn(joint, b_joint, fit.support)
        lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
        for more, refit in others:
            lib_o, G_o, b_o = more[lhs]
            lib_ob, G_ob, b_ob = more[other]
            J, _, _ = _tied_design(lib_o, G_o, lib_ob, G_ob, pairs)
            coef = refit(J, np.concatenate([b_o, b_ob]), fit.support)
            lo, hi = np.minimum(lo, coef), np.maximum(hi, coef)
        lows, highs = (
            split_joint(names, partner, lo, fit.support),
            split_joint(names, partner, hi, fit.support),
        )
        out[lhs], out[other] = (
            {t: tuple(sorted((lows[i][t], highs[i][t]))) for t in lows[i]} for i in (0, 1)
        )
    return out


def split_joint(names, partner, values, support) -> tuple[dict, dict]:
    """Per-column ``values`` of a tied pair's joint design, restricted to ``support``, as
    ``({term: value} of equation A, {term: value} of equation B)``: a tied column gives A's
    term its value and B's partner k times it."""
    side_a, side_b = {}, {}
    for j in support:
        side, t = names[j]
        v = float(values[j])
        if side == "a":
            side_a[t] = v
            if t in partner:
                p, k = partner[t]
                side_b[p] = float(k * v)
        else:
            side_b[t] = v
    return side_a, side_b


def tied_pareto(designs, ties, fits, front_fn) -> dict:
    """Pareto fronts of equations tied by ``pair`` rules, computed on their joint design by
    ``front_fn(G, b, chosen, terms) -> [ParetoPoint]`` (``terms``: the joint columns' terms):
    ``{lhs: [{"terms": {term: coefficient}, "complexity", "held_out", "chosen"}]}``, each
    point split into the two equations' parts (the same complexity and held-out residual)."""
    out = {}
    for lhs, other, _, joint, b_joint, names, partner in _tied_pairs(designs, ties):
        fit = fits[lhs]
        if len(fit.coef) != joint.shape[1]:
            continue
        front = front_fn(joint, b_joint, fit.support, [t for _, t in names])
        out[lhs], out[other] = [], []
        for point in front:
            parts = split_joint(names, partner, point.coef, point.support)
            for key, part in zip((lhs, other), parts):
                out[key].append(
                    {
                        "terms": part,
                        "complexity": point.complexity,
                        "held_out": point.held_out,
                        "chosen": point.chosen,
                    }
                )
    return out


def tied_probabilities(designs, ties, fits) -> dict:
    """Inclusion probabilities of equations tied by ``pair`` rules, ``{lhs: {term: p}}``:
    the joint fit's probability of each shared column, given to the term in both equations
    (0 are left out; empty where the fit has none)."""
    out = {}
    for lhs, other, _, _, _, names, partner in _tied_pairs(designs, ties):
        probs = getattr(fits[lhs], "probabilities", None)
        side_a, side_b = {}, {}
        if probs is not None and len(probs) == len(names):
            for (side, t), p in zip(names, probs):
                if p <= 0:
                    continue
                if side == "a":
                    side_a[t] = float(p)
                    if t in partner:
                        side_b[partner[t][0]] = float(p)
                else:
                    side_b[t] = float(p)
        out[lhs], out[other] = side_a, side_b
    return out

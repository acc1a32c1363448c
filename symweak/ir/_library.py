"""Candidate libraries: lists of terms D^α F(U) built from fields, operators and orders."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import sympy

from .._errors import IRError
from ._symbols import coord_sort_key
from ._term import Term

__all__ = ["function_library", "multi_indices", "polynomial_degree", "polynomial_library"]


def multi_indices(
    coords: Sequence[sympy.Symbol], max_order: Mapping[str, int], max_total: int | None = None
) -> list[tuple[tuple[sympy.Symbol, int], ...]]:
    """All multi-indices over ``coords`` with per-coordinate and total bounds (α = 0 first)."""
    ranges = [range(int(max_order.get(str(c), 0)) + 1) for c in coords]
    out = []
    for orders in itertools.product(*ranges):
        if max_total is not None and sum(orders) > max_total:
            continue
        out.append(tuple((c, n) for c, n in zip(coords, orders) if n))
    out.sort(key=lambda a: (sum(n for _, n in a), [(coord_sort_key(c), -n) for c, n in a]))
    return out


def _monomials(fields: Sequence[sympy.Expr], degree: int) -> list[sympy.Expr]:
    out = []
    for d in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(fields, d):
            out.append(sympy.Mul(*combo))
    return out


def function_library(
    fields: Sequence[sympy.Expr],
    degree: int = 3,
    unary: Iterable = (),
    include_constant: bool = False,
) -> list[sympy.Expr]:
    """Functions F(U): monomials of the fields up to ``degree`` and unary operators of each
    field (``sin(u)``, ...). Identity and powers are already monomials."""
    if degree < 1:
        raise IRError(f"Polynomial degree must be >= 1, got {degree}.")
    funcs = _monomials(list(fields), degree)
    for op in unary:
        if op.name == "id" or op.name.startswith("pow"):
            continue
        for f in fields:
            funcs.append(op.sympy_fn(f))
    if include_constant:
        funcs.insert(0, sympy.Integer(1))
    seen, out = set(), []
    for F in funcs:
        if F not in seen:
            seen.add(F)
            out.append(F)
    return out


def polynomial_library(
    fields: Sequence[sympy.Expr],
    coords: Sequence[sympy.Symbol],
    degree: int = 3,
    max_order: Mapping[str, int] | None = None,
    max_total: int | None = None,
    unary: Iterable = (),
    include_constant: bool = False,
) -> list[Term]:
    """Terms D^α F for F in :func:`function_library` and α in :func:`multi_indices`.

    A constant F only appears undifferentiated. The result is ordered like canonical
    equations (lowest derivative order first) and free of duplicates.
    """
    max_order = dict(max_order or {})
    funcs = function_library(fields, degree, unary, include_constant)
    terms: list[Term] = []
    seen = set()
    for alpha in multi_indices(coords, max_order, max_total):
        for F in funcs:
            if alpha and F.is_number:
                continue
            term = Term(F, alpha)
            if term not in seen:
                seen.add(term)
                terms.append(term)
    return terms


def function_applications(expr: sympy.Expr) -> int:
    """How many functions other than the fields (sin, tanh, exp, …) are applied in ``expr``,
    nested ones counted too: sin(u) 1, u·sin(u + sin(v)) 2, u² 0."""
    from sympy.core.function import AppliedUndef

    return sum(1 for f in expr.atoms(sympy.Function) if not isinstance(f, AppliedUndef))


def polynomial_degree(expr: sympy.Expr, fields) -> int:
    """Polynomial degree of ``expr`` in ``fields``; a function factor counts as its
    argument's degree (sin u: 1, v·sin u: 2), anything else that is not a polynomial as 2."""
    if not fields:
        return 0
    if expr.is_polynomial(*fields):
        return int(sympy.Poly(expr, *fields).total_degree())
    if expr.is_Add:
        return max(polynomial_degree(a, fields) for a in expr.args)
    if expr.is_Mul:
        return sum(polynomial_degree(a, fields) for a in expr.args)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp > 0:
        return int(expr.exp) * polynomial_degree(expr.base, fields)
    if isinstance(expr, sympy.Function) and expr.args:
        return max(1, max(polynomial_degree(a, fields) for a in expr.args))
    return 2

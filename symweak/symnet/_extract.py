"""From a trained symbolic network to a candidate library of weak-form terms."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .._errors import IRError
from ..ir import Term, fields_in
from ._readback import read_back, snap_arguments, taylor_small_arguments

__all__ = [
    "function_shapes",
    "library_from_network",
    "snap_arguments",
    "taylor_small_arguments",
]

# non-polynomial candidates longer than this (SymPy operation count) are not offered
MAX_TERM_OPS = 12


def _size(coeff, mono, field_rms) -> float:
    """Typical magnitude |c|·Π rms^power of a monomial on the data (1 for non-numbers)."""
    size = abs(float(coeff)) if coeff.is_Number else 1.0
    for base, power in mono.as_powers_dict().items():
        if isinstance(base, AppliedUndef) and power.is_Number:
            size *= field_rms.get(base.func.__name__, 1.0) ** float(power)
    return size


def structural_degree(expr: sympy.Expr) -> int:
    """An upper bound on the polynomial degree of ``expr`` in the fields, without expanding
    (functions count as degree 0, their arguments are not looked into)."""
    if isinstance(expr, AppliedUndef):
        return 1
    if expr.is_Add:
        return max((structural_degree(a) for a in expr.args), default=0)
    if expr.is_Mul:
        return sum(structural_degree(a) for a in expr.args)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp > 0:
        return structural_degree(expr.base) * int(expr.exp)
    return 0


@lru_cache(maxsize=256)
def _beyond_taylor(func, scale: float, order: int = 3, tol: float = 0.1) -> bool:
    """Whether func(z) differs from its order-``order`` Taylor polynomial by more than ``tol``
    of its size somewhere on |z| <= scale, i.e. whether the data can tell the function from
    the monomials the closure already offers (sin u on |u| <= 1 cannot: 1 %). Cached: a
    deep network applies the same function to the same field in many outputs."""
    z = sympy.Dummy("z")
    try:
        poly = sympy.series(func(z), z, 0, order + 1).removeO()
        grid = np.linspace(-scale, scale, 201)
        exact = sympy.lambdify(z, func(z), "numpy")(grid)
        approx = sympy.lambdify(z, poly, "numpy")(grid) * np.ones_like(grid)
    except (TypeError, ValueError, NotImplementedError, ZeroDivisionError):
        return True
    exact = np.asarray(exact, dtype=float) * np.ones_like(grid)
    if not np.all(np.isfinite(exact)) or not np.all(np.isfinite(approx)):
        return True
    size = float(np.max(np.abs(exact))) or 1.0
    return float(np.max(np.abs(exact - approx))) > tol * size


def _function_shapes(expr, field_max: Mapping[str, float], tol: float = 0.1) -> list:
    """f(field) for every function f of the operator set that ``expr`` applies to an argument
    holding that field: the network settles on sin(0.43u + 0.1) or on a sine whose argument
    is small enough to be read as its Taylor polynomial, and the unit-scale shape sin(u) is
    the candidate the regression should see next to them (sparse sine-Gordon had lost
    sin(u) this way). Only where the data can tell f(field) from its Taylor polynomial
    (|u| reaches 3 on sine-Gordon; on |u| <= 1 sin u is u - u³/6 to 1 %, a collinear extra):
    where f differs from its cubic Taylor polynomial by more than ``tol`` of its size."""
    out = []
    for f in expr.atoms(sympy.Function):
        if isinstance(f, AppliedUndef) or len(f.args) != 1:
            continue
        for fld in sorted(fields_in(f.args[0]), key=str):
            scale = field_max.get(fld.func.__name__, 1.0)
            if _beyond_taylor(f.func, scale, tol=tol):
                out.append(f.func(fld))
    return sorted(set(out), key=sympy.default_sort_key)


def function_shapes(
    exprs: Sequence[sympy.Expr], active: Mapping[int, Sequence], field_max, tol: float
) -> list:
    """f(field) at unit scale for every function the ``active`` outputs apply to a field,
    where f differs from its cubic Taylor polynomial by more than ``tol`` of its size over
    the data's range (``field_max``: each field's largest magnitude)."""
    shapes = {f for s in active for f in _function_shapes(exprs[s], field_max, tol)}
    return sorted(shapes, key=sympy.default_sort_key)


def taylor_degree(expr: sympy.Expr, order: int = 3) -> int:
    """``order`` when ``expr`` applies a function to the fields, else 0: the polynomial
    closure is then at least of that degree. f(p(U)) stands in for its Taylor polynomial (to
    ``order``, as :func:`read_back` expands small arguments); a small argument is expanded
    and its monomials count anyway, a large one is not (sin(0.40 u − 0.42 v) on the λ–ω
    system), and without this the closure of a two-field library stopped at degree 2 while
    the system's reaction terms are cubic (u v², u² v: Gray–Scott, λ–ω, FitzHugh–Nagumo,
    missed at σ = 0 for that reason). Not more than ``order``: sin(u v) does not make a
    three-field library sextic."""
    for f in expr.atoms(sympy.Function):
        if not isinstance(f, AppliedUndef) and any(fields_in(a) for a in f.args):
            return order
    return 0


def _function_atoms(expr, field_max, max_degree: int) -> list:
    """Non-polynomial functions of a deep output, arguments Taylor-expanded when small and
    snapped; functions of arguments too deep to expand are skipped."""
    out = []
    atoms = [
        f for f in expr.atoms(sympy.Function) if not isinstance(f, AppliedUndef) and fields_in(f)
    ]
    for f in sorted(atoms, key=sympy.default_sort_key):
        if any(structural_degree(a) > 3 * max_degree for a in f.args):
            continue
        g = snap_arguments(taylor_small_arguments(f, field_max))
        for part in sympy.Add.make_args(sympy.expand(g)):
            _, mono = part.as_coeff_Mul()
            if not mono.is_number and not mono.is_polynomial(*fields_in(mono)):
                out.append(mono)
    return out


def _order_closure(alphas: set) -> set:
    """Every multi-index over the coordinates used, of total order up to the highest used:
    the derivative orders get the same closure as the degree. A sparse Navier–Stokes network
    carried ω_yy but not ω_xx, so the viscous term could not be found whatever the fit."""
    coords = sorted({c for a in alphas for c, _ in a}, key=str)
    top = max((sum(n for _, n in a) for a in alphas), default=0)
    # space is closed up to the highest total order; time stays at what the network used
    cap = {
        c: max(n for a in alphas for c2, n in a if c2 == c) if str(c) == "t" else top
        for c in coords
    }
    out = set(alphas)
    for orders in itertools.product(*(range(cap[c] + 1) for c in coords)):
        if 0 < sum(orders) <= top:
            out.add(tuple((c, n) for c, n in zip(coords, orders) if n))
    return out


def _add_terms(mono, alphas, terms: list, seen: set) -> None:
    """Append the canonical D^α mono for each α (skipping α along a coordinate mono lacks)."""
    for alpha in alphas:
        try:
            term = Term(mono, alpha)
        except IRError:
            continue
        _, canon = term.canonical()
        if canon not in seen:
            seen.add(canon)
            terms.append(canon)


def library_from_network(
    exprs: Sequence[sympy.Expr],
    active: Mapping[int, Sequence],
    field_rms: Mapping[str, float],
    max_degree: int = 4,
    function_tol: float = 0.05,
    max_functions: int = 6,
    field_max: Mapping[str, float] | None = None,
    shape_tol: float = 0.1,
) -> list[Term]:
    """Candidate terms D^α m from the trained network (paper section 4.4.2-4.4.3: "every
    monomial becomes its own candidate").

    Each active output F_s is read back, its small-argument functions Taylor-expanded and
    its function arguments snapped. Every monomial of degree up to the highest found, in the
    fields found, is a candidate, paired with every derivative multi-index that carries
    weight (the degree is capped at ``max_degree``: a deep network composes ^3 into degree
    27, which no data can resolve); non-polynomial monomials (sin(u)·v, ...) are kept when
    their size is at least ``function_tol`` of their output's largest, at most
    ``max_functions`` of them: the network fixes the operators, the degree and the
    derivative orders, and the final sparse regression picks the terms — a network can
    express u² as (au + b)³ - ... in many ways, and the regression should not depend on
    which one it settled in. For the same reason every function the outputs apply to a field
    is also a candidate at unit scale (sin(u) next to a learnt sin(0.43u + 0.1)).
    ``field_max``: each field's largest magnitude on the data, for deciding which function
    arguments are small enough to Taylor-expand (default: ``field_rms``). ``shape_tol``: f(u)
    is offered where it differs from its cubic Taylor polynomial by more than this fraction
    over the data's range (the data can tell them apart); at 0.01 e^u on |u| <= 1.2 (3.4 %
    from 1 + u + u²/2 + u³/6) is a candidate, at the default 0.1 it is not.
    """
    field_max = field_rms if field_max is None else field_max
    fields, degree, others, alphas_all = set(), 0, {}, set()
    for s, alphas in active.items():
        alphas_all |= {tuple(a) for a in alphas}
        found = _scan_output(
            exprs[s], field_rms, field_max, max_degree, function_tol, shape_tol, others
        )
        fields |= found[0]
        degree = max(degree, found[1])
    # Products of operators on several fields expand into hundreds of distinct
    # non-polynomial monomials (1910 candidates on NLS): keep the largest few, and none
    # too long to read as a term of an equation (a deep sine-Gordon output offered
    # d_yy(sin(0.14 sin(0.2u - 0.08)³ - ...)) and the selection took it).
    others = {m: v for m, v in others.items() if sympy.count_ops(m) <= MAX_TERM_OPS}
    ranked = sorted(others.items(), key=lambda kv: (-kv[1], sympy.default_sort_key(kv[0])))
    monos = [m for m, _ in ranked[:max_functions]]
    ordered = sorted(fields, key=str)
    for d in range(1, min(degree, max_degree) + 1):
        for combo in itertools.combinations_with_replacement(ordered, d):
            monos.append(sympy.Mul(*combo))
    alphas_all = _order_closure(alphas_all)
    terms: list[Term] = []
    seen: set = set()
    for mono in monos:
        _add_terms(
            mono, sorted(alphas_all, key=lambda a: (sum(n for _, n in a), str(a))), terms, seen
        )
    terms.sort(key=lambda t: t.sort_key)
    return terms


def _scan_output(expr, field_rms, field_max, max_degree, function_tol, shape_tol, others):
    """One network output's fields and polynomial degree; its function monomials and
    shapes go into ``others`` (monomial -> its largest relative size)."""
    if structural_degree(expr) > 3 * max_degree:
        # A deep output ((...)^3 of (...)^3 ...) would take SymPy minutes to expand (a
        # Burgers run stalled there), and its monomials beyond max_degree are cut anyway:
        # it contributes its fields, the degree cap, and its functions.
        for mono in _function_atoms(expr, field_max, max_degree):
            others[mono] = max(others.get(mono, 0.0), 0.5)
        for shape in _function_shapes(expr, field_max, shape_tol):
            others[shape] = 1.0
        return fields_in(expr), max_degree
    for shape in _function_shapes(expr, field_max, shape_tol):
        others[shape] = 1.0
    degree = taylor_degree(expr)
    fields: set = set()
    F = read_back(expr, field_max)
    parts = [p.as_coeff_Mul() for p in sympy.Add.make_args(F)]
    parts = [(c, m) for c, m in parts if not m.is_number]
    sizes = [_size(c, m, field_rms) for c, m in parts]
    top = max(sizes, default=0.0)
    for (_, mono), size in zip(parts, sizes):
        fs = fields_in(mono)
        fields |= fs
        if mono.is_polynomial(*fs):
            degree = max(degree, int(sympy.Poly(mono, *fs).total_degree()))
        elif top > 0 and size >= function_tol * top:
            others[mono] = max(others.get(mono, 0.0), size / top)
    return fields, degree

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

__all__ = ["library_from_network", "snap_arguments", "taylor_small_arguments"]

_NICE = (0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0)
# non-polynomial candidates longer than this (SymPy operation count) are not offered
MAX_TERM_OPS = 12


def _snap_number(value: float, tol: float) -> float:
    for nice in _NICE:
        if nice == 0.0:
            if abs(value) < tol:
                return 0.0
        elif abs(value - nice) <= tol * abs(nice):
            return nice
    return value


def _snap_arg(arg: sympy.Expr, tol: float) -> sympy.Expr:
    """A function's argument, expanded, each coefficient snapped (see snap_arguments)."""
    arg = sympy.expand(arg)
    parts = []
    for part in sympy.Add.make_args(arg):
        coeff, rest = part.as_coeff_Mul()
        c = _snap_number(float(coeff), tol) if coeff.is_Number else coeff
        if isinstance(c, float) and c != 0.0:
            # a simple number exactly; any other to 4 digits (not a 15-digit fraction)
            c = sympy.nsimplify(c) if c in _NICE else sympy.Float(f"{c:.4g}")
        if c != 0:
            parts.append(c * rest)
    return sympy.Add(*parts)


def snap_arguments(expr: sympy.Expr, tol: float = 0.05) -> sympy.Expr:
    """Inside non-polynomial functions (sin, exp, ...), snap the argument's coefficients to
    nearby simple numbers (0, ±1, ±2, ±1/2, ±3): ``sin(0.98*u + 0.01) -> sin(u)``. The outer
    coefficients are refitted later, so only the shape of each function matters."""

    def visit(e: sympy.Expr) -> sympy.Expr:
        if isinstance(e, sympy.Function) and not isinstance(e, AppliedUndef):
            return e.func(*[_snap_arg(visit(a), tol) for a in e.args])
        if e.args:
            return e.func(*[visit(a) for a in e.args])
        return e

    return visit(expr)


@lru_cache(maxsize=64)
def _maclaurin(func, order: int):
    """(z, the Taylor polynomial of func(z) at 0 up to z^order): sympy.series is slow and the
    read-back asks for the same few functions many times (a third of it on KdV)."""
    z = sympy.Dummy("z")
    return z, sympy.series(func(z), z, 0, order + 1).removeO()


def taylor_small_arguments(
    expr: sympy.Expr, field_scale: Mapping[str, float], order: int = 3, small: float = 0.5
):
    """Replace f(arg) by its Taylor polynomial when |arg| stays small on the data
    (|coefficients|·scale below ``small``; pass each field's largest magnitude, so that
    "small" holds everywhere): sin(0.15u) is, to the data, 0.15u - (0.15u)³/6, and keeping it
    as a sine would add a term nearly collinear with u and u³."""

    def size(arg) -> float:
        total = 0.0
        for part in sympy.Add.make_args(sympy.expand(arg)):
            coeff, mono = part.as_coeff_Mul()
            mag = abs(float(coeff)) if coeff.is_Number else 1.0
            for base, power in mono.as_powers_dict().items():
                if isinstance(base, AppliedUndef):
                    mag *= field_scale.get(base.func.__name__, 1.0) ** float(power)
            total += mag
        return total

    def visit(e):
        if isinstance(e, sympy.Function) and not isinstance(e, AppliedUndef) and len(e.args) == 1:
            arg = visit(e.args[0])
            if size(arg) <= small:
                z, poly = _maclaurin(e.func, order)
                return sympy.expand(poly.xreplace({z: arg}))
            return e.func(arg)
        if e.args:
            return e.func(*[visit(a) for a in e.args])
        return e

    return visit(expr)


@lru_cache(maxsize=64)
def _maclaurin_coefficients(func, order: int) -> tuple[float, ...] | None:
    """The Taylor coefficients c_0..c_order of func at 0 as floats, or None where func has
    no Taylor polynomial there (log)."""
    z, poly = _maclaurin(func, order)
    try:
        return (
            tuple(float(poly.coeff(z, k)) for k in range(order + 1))
            if poly.is_polynomial(z)
            else None
        )
    except TypeError:
        return None


# functions that sympy.expand leaves as they are; the SymPy route handles the others (it
# splits exp(a + b) into exp(a)·exp(b) before the Taylor step, which the fast route cannot)
_EXPAND_INERT = (sympy.sin, sympy.cos, sympy.tanh, sympy.sinh, sympy.cosh)


class _NotPolynomial(Exception):
    """An expression the fast read-back does not handle (negative or fractional powers, ...)."""


def read_back(
    expr: sympy.Expr,
    field_scale: Mapping[str, float],
    order: int = 3,
    small: float = 0.5,
    tol: float = 0.05,
) -> sympy.Expr:
    """``expand(snap_arguments(taylor_small_arguments(expand(expr))))``, computed on
    dictionaries of float coefficients instead of SymPy sums: a network output is a
    polynomial of (at most) degree 3^depth in the fields and a few function applications,
    and SymPy's expand spent 12 s of a KdV run multiplying such sums out. Falls back to the
    SymPy route for anything else (powers that are not non-negative integers, exp of a sum,
    complex numbers)."""
    try:
        return _read_back_fast(expr, field_scale, order, small, tol)
    except _NotPolynomial:
        return sympy.expand(
            snap_arguments(
                taylor_small_arguments(sympy.expand(expr), field_scale, order, small), tol
            )
        )


def _read_back_fast(expr, field_scale, order, small, tol) -> sympy.Expr:
    gens: list = []  # the generators: fields, other symbols, function applications
    index: dict = {}

    def gen(atom) -> dict:
        if atom not in index:
            index[atom] = len(gens)
            gens.append(atom)
        return {((index[atom], 1),): 1.0}

    def add_into(out: dict, q: dict, scale: float = 1.0) -> None:
        for k, c in q.items():
            out[k] = out.get(k, 0.0) + scale * c

    def mul(p: dict, q: dict) -> dict:
        out: dict = {}
        for ka, ca in p.items():
            for kb, cb in q.items():
                powers = dict(ka)
                for i, n in kb:
                    powers[i] = powers.get(i, 0) + n
                k = tuple(sorted(powers.items()))
                out[k] = out.get(k, 0.0) + ca * cb
        return out

    def power(p: dict, n: int) -> dict:
        out = {(): 1.0}
        for _ in range(n):
            out = mul(out, p)
        return out

    def to_expr(p: dict) -> sympy.Expr:
        return sympy.Add(
            *[
                sympy.Float(c) * sympy.Mul(*[gens[i] ** n for i, n in k])
                for k, c in p.items()
                if c != 0.0
            ]
        )

    def size(p: dict) -> float:
        total = 0.0
        for k, c in p.items():
            mag = abs(c)
            for i, n in k:
                if isinstance(gens[i], AppliedUndef):
                    mag *= field_scale.get(gens[i].func.__name__, 1.0) ** n
            total += mag
        return total

    def visit(e) -> dict:
        if isinstance(e, AppliedUndef) or e.is_Symbol:
            return gen(e)
        if e.is_Number:
            if not e.is_real:
                raise _NotPolynomial
            return {(): float(e)}
        if e.is_Add:
            out: dict = {}
            for a in e.args:
                add_into(out, visit(a))
            return out
        if e.is_Mul:
            out = {(): 1.0}
            for a in e.args:
                out = mul(out, visit(a))
            return out
        if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
            return power(visit(e.base), int(e.exp))
        if isinstance(e, sympy.Function) and e.func in _EXPAND_INERT:
            p = visit(e.args[0])
            coeffs = _maclaurin_coefficients(e.func, order)
            if coeffs is not None and size(p) <= small:
                out, pk = {}, {(): 1.0}
                for k, c in enumerate(coeffs):
                    if k:
                        pk = mul(pk, p)
                    if c:
                        add_into(out, pk, c)
                return out
            return gen(e.func(_snap_arg(to_expr(p), tol)))
        raise _NotPolynomial

    return to_expr(visit(expr))


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
    rel_tol: float = 1e-3,
    closure: bool = True,
    max_degree: int = 4,
    function_tol: float = 0.05,
    max_functions: int = 6,
    field_max: Mapping[str, float] | None = None,
    shape_tol: float = 0.1,
) -> list[Term]:
    """Candidate terms D^α m from the trained network (paper section 4.4.2-4.4.3: "every
    monomial becomes its own candidate").

    Each active output F_s is read back, its small-argument functions Taylor-expanded and
    its function arguments snapped; monomials whose typical size |c|·Π rms^power is below
    ``rel_tol`` of the largest are dropped. With ``closure`` (default), every monomial of
    degree up to the highest found, in the fields found, is a candidate, paired with every
    derivative multi-index that carries weight (the degree is capped at ``max_degree``: a
    deep network composes ^3 into degree 27, which no data can resolve); non-polynomial
    monomials (sin(u)·v, ...) are kept when their size is at least ``function_tol`` of their
    output's largest, at most ``max_functions`` of them: the network fixes
    the operators, the degree
    and the derivative orders, and the final sparse regression picks the terms — a network
    can express u² as (au + b)³ - ... in many ways, and the regression should not depend on
    which one it settled in. For the same reason every function the outputs apply to a field
    is also a candidate at unit scale (sin(u) next to a learnt sin(0.43u + 0.1)).
    ``field_max``: each field's largest magnitude on the data, for deciding which function
    arguments are small enough to Taylor-expand (default: ``field_rms``). ``shape_tol``: f(u)
    is offered where it differs from its cubic Taylor polynomial by more than this fraction
    over the data's range (the data can tell them apart); at 0.01 e^u on |u| <= 1.2 (3.4 %
    from 1 + u + u²/2 + u³/6) is a candidate, at the default 0.1 it is not.
    """
    terms: list[Term] = []
    seen = set()
    field_max = field_rms if field_max is None else field_max
    if closure:
        monos, alphas_all, degree, fields = [], set(), 0, set()
        others: dict = {}  # non-polynomial monomial -> its largest relative size
        for s, alphas in active.items():
            alphas_all |= {tuple(a) for a in alphas}
            if structural_degree(exprs[s]) > 3 * max_degree:
                # A deep output ((...)^3 of (...)^3 ...) would take SymPy minutes to expand
                # (a Burgers run stalled there), and its monomials beyond max_degree are cut
                # anyway: it contributes its fields, the degree cap, and its functions.
                fs = fields_in(exprs[s])
                fields |= fs
                degree = max(degree, max_degree)
                for mono in _function_atoms(exprs[s], field_max, max_degree):
                    others[mono] = max(others.get(mono, 0.0), 0.5)
                for shape in _function_shapes(exprs[s], field_max, shape_tol):
                    others[shape] = 1.0
                continue
            for shape in _function_shapes(exprs[s], field_max, shape_tol):
                others[shape] = 1.0
            degree = max(degree, taylor_degree(exprs[s]))
            F = read_back(exprs[s], field_max)
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
        # Products of operators on several fields expand into hundreds of distinct
        # non-polynomial monomials (1910 candidates on NLS): keep the largest few, and none
        # too long to read as a term of an equation (a deep sine-Gordon output offered
        # d_yy(sin(0.14 sin(0.2u - 0.08)³ - ...)) and the selection took it).
        others = {m: v for m, v in others.items() if sympy.count_ops(m) <= MAX_TERM_OPS}
        ranked = sorted(others.items(), key=lambda kv: (-kv[1], sympy.default_sort_key(kv[0])))
        monos.extend(m for m, _ in ranked[:max_functions])
        ordered = sorted(fields, key=str)
        for d in range(1, min(degree, max_degree) + 1):
            for combo in itertools.combinations_with_replacement(ordered, d):
                monos.append(sympy.Mul(*combo))
        alphas_all = _order_closure(alphas_all)
        for mono in monos:
            _add_terms(
                mono, sorted(alphas_all, key=lambda a: (sum(n for _, n in a), str(a))), terms, seen
            )
        terms.sort(key=lambda t: t.sort_key)
        return terms
    for s, alphas in active.items():
        F = read_back(exprs[s], field_max)
        if F == 0:
            continue
        parts = []
        for part in sympy.Add.make_args(F):
            coeff, mono = part.as_coeff_Mul()
            if mono.is_number:
                continue
            size = abs(float(coeff))
            for base, power in mono.as_powers_dict().items():
                if isinstance(base, AppliedUndef):
                    size *= field_rms.get(base.func.__name__, 1.0) ** float(power)
            parts.append((size, mono))
        if not parts:
            continue
        top = max(p[0] for p in parts)
        for size, mono in parts:
            if size < rel_tol * top or not fields_in(mono):
                continue
            _add_terms(mono, alphas, terms, seen)
    terms.sort(key=lambda t: t.sort_key)
    return terms

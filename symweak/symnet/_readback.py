"""A network output read back as a polynomial over the fields: small-argument functions
Taylor-expanded, function arguments snapped to nice numbers (:func:`read_back`)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import sympy
from sympy.core.function import AppliedUndef

__all__ = ["read_back", "snap_arguments", "taylor_small_arguments"]


_NICE = (0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0)


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
    return _PolyReader(field_scale, order, small, tol).read(expr)


def _add_into(out: dict, q: dict, scale: float = 1.0) -> None:
    """``out += scale * q`` for polynomials ``{((generator, power), ...): coefficient}``."""
    for k, c in q.items():
        out[k] = out.get(k, 0.0) + scale * c


def _mul(p: dict, q: dict) -> dict:
    out: dict = {}
    for ka, ca in p.items():
        for kb, cb in q.items():
            powers = dict(ka)
            for i, n in kb:
                powers[i] = powers.get(i, 0) + n
            k = tuple(sorted(powers.items()))
            out[k] = out.get(k, 0.0) + ca * cb
    return out


class _PolyReader:
    """An expression as a polynomial of float coefficients over generators (fields, other
    symbols, function applications), small-argument functions Taylor-expanded and other
    function arguments snapped (:func:`read_back`)."""

    def __init__(self, field_scale, order, small, tol) -> None:
        self.field_scale, self.order, self.small, self.tol = field_scale, order, small, tol
        self.gens: list = []
        self.index: dict = {}

    def read(self, expr) -> sympy.Expr:
        return self.to_expr(self.visit(expr))

    def gen(self, atom) -> dict:
        if atom not in self.index:
            self.index[atom] = len(self.gens)
            self.gens.append(atom)
        return {((self.index[atom], 1),): 1.0}

    def to_expr(self, p: dict) -> sympy.Expr:
        gens = self.gens
        return sympy.Add(
            *[
                sympy.Float(c) * sympy.Mul(*[gens[i] ** n for i, n in k])
                for k, c in p.items()
                if c != 0.0
            ]
        )

    def size(self, p: dict) -> float:
        total = 0.0
        for k, c in p.items():
            mag = abs(c)
            for i, n in k:
                if isinstance(self.gens[i], AppliedUndef):
                    mag *= self.field_scale.get(self.gens[i].func.__name__, 1.0) ** n
            total += mag
        return total

    def visit(self, e) -> dict:
        if isinstance(e, AppliedUndef) or e.is_Symbol:
            return self.gen(e)
        if e.is_Number:
            if not e.is_real:
                raise _NotPolynomial
            return {(): float(e)}
        if e.is_Add:
            out: dict = {}
            for a in e.args:
                _add_into(out, self.visit(a))
            return out
        if e.is_Mul:
            out = {(): 1.0}
            for a in e.args:
                out = _mul(out, self.visit(a))
            return out
        if e.is_Pow and e.exp.is_Integer and e.exp >= 0:
            base, out = self.visit(e.base), {(): 1.0}
            for _ in range(int(e.exp)):
                out = _mul(out, base)
            return out
        if isinstance(e, sympy.Function) and e.func in _EXPAND_INERT:
            return self.function(e)
        raise _NotPolynomial

    def function(self, e) -> dict:
        p = self.visit(e.args[0])
        coeffs = _maclaurin_coefficients(e.func, self.order)
        if coeffs is not None and self.size(p) <= self.small:
            out, pk = {}, {(): 1.0}
            for k, c in enumerate(coeffs):
                if k:
                    pk = _mul(pk, p)
                if c:
                    _add_into(out, pk, c)
            return out
        return self.gen(e.func(_snap_arg(self.to_expr(p), self.tol)))

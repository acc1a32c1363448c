"""Coordinates and fields as SymPy objects.

Developer notes (vocabulary used across symweak):

* A *coordinate* is a plain ``sympy.Symbol`` (``t``, ``x``, ``y``, ``z``); names are a
  single letter so that ``u_xy`` is unambiguous.
* A *field* is an applied undefined function of the coordinates, ``u(t, x)``, made
  with a plain ``sympy.Function(name)`` so that user code building the same objects
  compares equal.
* A *term* is ``D^α F(U)``: a multi-index α over the coordinates and an expression F
  of the fields (no derivatives inside F).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sympy
from sympy.core.function import AppliedUndef

from .._errors import IRError
from .._names import validate_coord_name, validate_field_name
from ..operators import reserved_names

__all__ = [
    "DEFAULT_COORDS",
    "RESERVED_NAMES",
    "coord",
    "coord_sort_key",
    "coords",
    "field",
    "field_name",
    "fields_in",
    "is_field",
    "validate_coord_name",
    "validate_field_name",
]

#: Default coordinate order: time first, then space.
DEFAULT_COORDS: tuple[str, ...] = ("t", "x", "y", "z")

#: Names that cannot be fields: functions of the expression language and keywords.
RESERVED_NAMES = reserved_names()


def coord(name: str) -> sympy.Symbol:
    """The coordinate symbol called ``name`` (a plain ``sympy.Symbol``)."""
    return sympy.Symbol(validate_coord_name(name))


def coords(names: str | Iterable[str] = DEFAULT_COORDS[:2]) -> tuple[sympy.Symbol, ...]:
    """Coordinate symbols from ``"t, x"``, ``"t x y"`` or an iterable of names."""
    if isinstance(names, str):
        names = [n for n in names.replace(",", " ").split() if n]
    out = tuple(coord(n) for n in names)
    if len(set(out)) != len(out):
        raise IRError(f"Coordinates {[str(c) for c in out]} contain a duplicate name.")
    return out


def coord_sort_key(sym: sympy.Symbol) -> tuple[int, str]:
    """Order coordinates as t, x, y, z, then alphabetically."""
    name = str(sym)
    if name in DEFAULT_COORDS:
        return (DEFAULT_COORDS.index(name), name)
    return (len(DEFAULT_COORDS), name)


def field(name: str, coordinates: Sequence[sympy.Symbol | str]) -> sympy.Expr:
    """The field ``name`` applied to ``coordinates``: ``field('u', 'tx') -> u(t, x)``."""
    syms = [c if isinstance(c, sympy.Symbol) else coord(c) for c in coordinates]
    return sympy.Function(validate_field_name(name))(*syms)


def is_field(expr: object) -> bool:
    """True for an applied undefined function such as ``u(t, x)``."""
    return isinstance(expr, AppliedUndef)


def field_name(expr: sympy.Expr) -> str:
    """The name of a field ``u(t, x) -> 'u'``."""
    if not is_field(expr):
        raise IRError(f"{expr} is not a field (an applied function such as u(t, x)).")
    return expr.func.__name__


def fields_in(expr: sympy.Basic) -> set[sympy.Expr]:
    """All fields (applied undefined functions) occurring in ``expr``."""
    return set(expr.atoms(AppliedUndef))

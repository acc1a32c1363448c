"""Parsing operator sets, terms, equations and constraint specs (``grammar/symweak.lark``):
the entry points. The grammar is loaded and its syntax errors explained in :mod:`._loading`,
parse trees become SymPy and IR objects in :mod:`._builder`, constraint specs are read in
:mod:`._constraints`.
"""

from __future__ import annotations

import sympy

from .._errors import GrammarError, IRError
from ..ir import Equation, Term
from ..operators import OperatorSet
from ._builder import _Builder, _fields_arg, _infer_coords, _one_term, _run
from ._constraints import Constraints, RuleSpec, parse_constraints
from ._loading import (
    CONSTRAINT_ERRORS,
    EQUATION_ERRORS,
    EXPR_ERRORS,
    OPSET_ERRORS,
    _parse_tree,
)

__all__ = [
    "CONSTRAINT_ERRORS",
    "EQUATION_ERRORS",
    "EXPR_ERRORS",
    "OPSET_ERRORS",
    "Constraints",
    "RuleSpec",
    "parse_constraints",
    "parse_equation",
    "parse_expr",
    "parse_operators",
    "parse_term",
    "parse_terms",
]


# ---------------------------------------------------------------------------- public API
def parse_operators(text: str) -> OperatorSet:
    """``"+,-,*,sin"`` -> :class:`OperatorSet` (``^n``, names and registered user operators)."""
    if isinstance(text, OperatorSet):
        return text
    tree = _parse_tree(text, "opset")
    return _run(_Builder((), ()), tree, text)


def parse_expr(text: str, coords=None, fields=None) -> sympy.Expr:
    """An expression of fields and derivatives as SymPy: ``"d_x(u^2)"`` -> ``Derivative(u**2, x)``.

    ``coords`` defaults to t, x plus every coordinate letter used in derivatives; ``fields``,
    when given, is the list of allowed field names (unknown names are errors).
    """
    tree = _parse_tree(text, "expr")
    builder = _Builder(_infer_coords(text, coords), _fields_arg(fields))
    return _run(builder, tree, text)


def parse_terms(text: str, coords=None, fields=None) -> list[Term]:
    """``"u_xx, d_x(u^2), u^3"`` -> list of :class:`Term` (strong products like u*u_x allowed)."""
    tree = _parse_tree(text, "terms")
    builder = _Builder(_infer_coords(text, coords), _fields_arg(fields))
    exprs = _run(builder, tree, text)
    return [_one_term(e, text, child) for e, child in zip(exprs, tree.children)]


def parse_term(text: str, coords=None, fields=None) -> Term:
    """``"d_x(u^2)"`` -> ``Term(u**2, {x: 1})``."""
    terms = parse_terms(text, coords, fields)
    if len(terms) != 1:
        raise GrammarError(f"Expected one term, got {len(terms)}.", text, 1, 1)
    return terms[0]


def parse_equation(text: str, coords=None, fields=None) -> Equation:
    """``"u_t = -0.5*d_x(u^2) + 0.1*u_xx"`` -> :class:`~symweak.ir.Equation`."""
    tree = _parse_tree(text, "equation")
    builder = _Builder(_infer_coords(text, coords), _fields_arg(fields))
    lhs, rhs = _run(builder, tree, text)
    try:
        return Equation.from_sympy(sympy.Eq(lhs, rhs, evaluate=False))
    except IRError as exc:
        raise GrammarError(str(exc), text, 1, 1) from None

"""Printers for symweak's IR.

* :class:`ShortPrinter` writes the short text form (``d_x(u^2)``, ``u_xx``) that the
  grammar in ``grammar/symweak.lark`` parses back.
* :class:`IRLatexPrinter` writes LaTeX (``\\partial_{x}\\left(u^{2}\\right)``).

Both print a field ``u(t, x)`` as its bare name and keep ``Derivative`` unevaluated.
"""

from __future__ import annotations

import sympy
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

from ._symbols import coord_sort_key, is_field

__all__ = ["IRLatexPrinter", "ShortPrinter", "format_float", "latex", "short"]


def format_float(value: float) -> str:
    """Shortest text that reads back as the same float64 (``repr``), without ``.0``."""
    value = float(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _derivative_suffix(variable_count) -> str:
    pairs = sorted(((v, int(n)) for v, n in variable_count), key=lambda p: coord_sort_key(p[0]))
    return "".join(str(v) * n for v, n in pairs)


class ShortPrinter(StrPrinter):
    """Short, parseable text: ``u^2``, ``u_xx``, ``d_x(u*v)``, ``sin(u)``."""

    printmethod = "_symweak_short"

    def _print_AppliedUndef(self, expr):
        return expr.func.__name__

    def _print_Float(self, expr):
        return format_float(expr)

    def _print_Pow(self, expr, rational=False):
        text = super()._print_Pow(expr, rational=rational)
        if "**" in text:
            head, tail = text.rsplit("**", 1)
            return f"{head}^{tail}"
        return text

    def _print_Derivative(self, expr):
        suffix = _derivative_suffix(expr.variable_count)
        if is_field(expr.expr):
            return f"{expr.expr.func.__name__}_{suffix}"
        return f"d_{suffix}({self._print(expr.expr)})"


class IRLatexPrinter(LatexPrinter):
    """LaTeX with bare field names and ∂ notation for derivatives."""

    printmethod = "_symweak_latex"

    def _print_AppliedUndef(self, expr, exp=None):
        raw = expr.func.__name__
        name = self._print(sympy.Symbol(raw))
        if name == raw and len(raw) > 1:  # a word (density), not a letter or ω: upright
            name = rf"\mathrm{{{raw}}}"
        return name if exp is None else f"{name}^{{{exp}}}"

    def _print_Float(self, expr):
        return format_float(expr)

    def _print_Derivative(self, expr):
        suffix = _derivative_suffix(expr.variable_count)
        inner = expr.expr
        if is_field(inner):
            return rf"\partial_{{{suffix}}} {self._print(inner)}"
        body = self._print(inner)
        if inner.is_Atom or is_field(inner):
            return rf"\partial_{{{suffix}}} {body}"
        return rf"\partial_{{{suffix}}}\left({body}\right)"

    def _print_Pow(self, expr):
        # (∂_x u)^2, not ∂_x u^{2} (which reads as a derivative of u²)
        if isinstance(expr.base, sympy.Derivative):
            return rf"\left({self._print(expr.base)}\right)^{{{self._print(expr.exp)}}}"
        return super()._print_Pow(expr)

    def parenthesize(self, item, level, is_neg=False, strict=False):
        # Derivatives bind like function application: never wrap them in parentheses.
        if isinstance(item, sympy.Derivative):
            return self._print(item)
        return super().parenthesize(item, level, is_neg=is_neg, strict=strict)


_SHORT = ShortPrinter()
_LATEX = IRLatexPrinter()


def short(expr: sympy.Basic) -> str:
    """Short text of a SymPy expression of fields and derivatives."""
    return _SHORT.doprint(expr)


def latex(expr: sympy.Basic) -> str:
    """LaTeX of a SymPy expression of fields and derivatives."""
    return _LATEX.doprint(expr)

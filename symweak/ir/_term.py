"""Terms D^α F(U) and their canonical form."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property

import sympy

from .._errors import IRError
from ._printing import latex as _latex
from ._printing import short as _short
from ._symbols import coord, coord_sort_key, field_name, fields_in, is_field

__all__ = ["Term", "canonical_factor"]

Alpha = tuple[tuple[sympy.Symbol, int], ...]


def _normalise_alpha(alpha) -> Alpha:
    """Accept {x: 2}, {'x': 2}, [x, x], 'xx', ((x, 2),) and return sorted ((x, 2),)."""
    if alpha is None:
        return ()
    counts: dict[sympy.Symbol, int] = {}
    if isinstance(alpha, str):
        alpha = list(alpha)
    items: Iterable
    items = alpha.items() if isinstance(alpha, Mapping) else alpha
    for item in items:
        if isinstance(item, (tuple, sympy.Tuple)):
            var, n = item
        else:
            var, n = item, 1
        sym = var if isinstance(var, sympy.Symbol) else coord(str(var))
        if isinstance(n, bool) or int(n) != n or n < 0:
            raise IRError(f"Derivative order {n!r} along {sym} is not a non-negative integer.")
        counts[sym] = counts.get(sym, 0) + int(n)
    return tuple(
        sorted(((s, n) for s, n in counts.items() if n > 0), key=lambda p: coord_sort_key(p[0]))
    )


def canonical_factor(F: sympy.Expr, differentiated: bool) -> tuple[sympy.Expr, sympy.Expr]:
    """Split F into (numeric factor, canonical expression).

    The canonical expression is expanded, has positive-integer-content-free coefficients
    (``as_content_primitive``), a leading sign that cannot be extracted, and — when the
    term is differentiated — no additive constant (it would differentiate away).
    """
    G = sympy.expand(F)
    if differentiated:
        G = sympy.Add(*[a for a in sympy.Add.make_args(G) if not a.is_number])
    if G == 0:
        return sympy.Integer(0), sympy.Integer(0)
    content, prim = G.as_content_primitive()
    if prim.is_number:
        return content * prim, sympy.Integer(1)
    if prim.could_extract_minus_sign():
        content, prim = -content, -prim
    # Float content (e.g. 0.5*u**2) stays with the factor, never inside F.
    coeff, rest = prim.as_coeff_Mul()
    if coeff.is_Float or (coeff.is_Rational and coeff != 1):
        content, prim = content * coeff, rest
    return content, prim


class Term:
    """A weak-form term ``D^α F(U)``.

    Parameters
    ----------
    F:
        SymPy expression of fields (``u(t, x)**2``, ``sin(u)``, ``u*v``); no derivatives.
    alpha:
        The multi-index: ``{x: 1}``, ``{'x': 2, 'y': 1}``, ``'xx'`` or ``[x, x]``.

    ``Term`` keeps F exactly as given. Equality and hashing use the canonical key: terms
    that differ by a numeric factor, or (when differentiated) by an additive constant in F,
    are the same term — exactly the terms whose strong forms are proportional.

    Examples
    --------
    >>> import sympy
    >>> t, x = sympy.symbols("t x"); u = sympy.Function("u")(t, x)
    >>> Term(u**2, "x")
    Term('d_x(u^2)')
    >>> Term(2*u**2, "x") == Term(u**2, {"x": 1})
    True
    """

    __slots__ = ("F", "__dict__", "alpha")

    def __init__(self, F: sympy.Expr, alpha=None) -> None:
        if not isinstance(F, sympy.Expr):
            raise IRError(
                f"F must be a SymPy expression of fields, got {type(F).__name__} {F!r}. "
                "Build fields with symweak.ir.field('u', 'tx')."
            )
        for d in F.atoms(sympy.Derivative):
            # a product term G(U, ∂U): derivatives of the fields themselves only
            if not is_field(d.expr) or any(s not in d.expr.args for s, _ in d.variable_count):
                raise IRError(
                    f"F = {_short(F)} contains {_short(d)}; inside F only derivatives of a "
                    "field along its own coordinates may appear (u_x, v_xy), as in u_x^2 or "
                    "u*u_xx. Write d_x(u^2) for a derivative of an expression."
                )
        self.alpha: Alpha = _normalise_alpha(alpha)
        self.F: sympy.Expr = F
        fields = fields_in(F)
        if self.alpha:
            if canonical_factor(F, True)[0] == 0:
                raise IRError(f"d_{self.suffix}({_short(F)}) is identically zero: F is constant.")
            args = set().union(*(f.args for f in fields)) if fields else set()
            missing = [str(s) for s, _ in self.alpha if s not in args]
            if fields and missing:
                raise IRError(
                    f"Term d_{self.suffix}({_short(F)}) differentiates along {', '.join(missing)}, "
                    "but no field in F depends on that coordinate."
                )
        free = F.xreplace({f: sympy.Dummy() for f in fields}).free_symbols
        free = {s for s in free if not isinstance(s, sympy.Dummy)}
        if free:
            raise IRError(
                f"F = {_short(F)} contains the free symbol(s) {sorted(map(str, free))}; "
                "F may only contain fields such as u(t, x) and numbers."
            )

    # ----------------------------------------------------------------- construction
    @classmethod
    def derivative(cls, F: sympy.Expr, *variables: sympy.Symbol | str) -> Term:
        """``Term.derivative(u**2, x)`` is ``d_x(u^2)``; repeat a variable for order 2."""
        return cls(F, list(variables))

    @classmethod
    def from_sympy(cls, expr: sympy.Expr) -> Term:
        """Read ``Derivative(F, ...)``, ``c*Derivative(F, ...)`` or a plain F back into a Term.

        A numeric factor is kept inside F (D is linear), so nothing is lost.
        """
        expr = sympy.sympify(expr) if not isinstance(expr, sympy.Basic) else expr
        coeff, rest = expr.as_coeff_Mul()
        if isinstance(rest, sympy.Derivative):
            inner = rest.expr
            alpha = list(rest.variable_count)
            while isinstance(inner, sympy.Derivative):
                alpha += list(inner.variable_count)
                inner = inner.expr
            return cls(coeff * inner, alpha)
        # a product of derivatives (u_x^2) is read as it is written; for the canonical
        # writing of a strong-form product (u*u_x -> d_x(u^2)/2) use to_weak_terms
        return cls(expr)

    # ----------------------------------------------------------------- properties
    @property
    def order(self) -> dict[sympy.Symbol, int]:
        """Derivative order per coordinate, e.g. ``{x: 2}``."""
        return dict(self.alpha)

    @property
    def total_order(self) -> int:
        return sum(n for _, n in self.alpha)

    def orders(self, coordinates: Iterable[sympy.Symbol | str]) -> tuple[int, ...]:
        """The multi-index as a tuple along ``coordinates``: ``(0, 2)`` for u_xx on (t, x)."""
        order = {str(s): n for s, n in self.alpha}
        return tuple(order.get(str(c), 0) for c in coordinates)

    @property
    def suffix(self) -> str:
        return "".join(str(s) * n for s, n in self.alpha)

    @cached_property
    def fields(self) -> tuple[sympy.Expr, ...]:
        """Fields in F, sorted by name."""
        return tuple(sorted(fields_in(self.F), key=field_name))

    @cached_property
    def field_names(self) -> tuple[str, ...]:
        return tuple(field_name(f) for f in self.fields)

    @cached_property
    def _canonical(self) -> tuple[sympy.Expr, sympy.Expr]:
        return canonical_factor(self.F, bool(self.alpha))

    def canonical(self) -> tuple[sympy.Expr, Term]:
        """``(factor, term)`` with ``factor * term == self`` and ``term`` canonical."""
        factor, F = self._canonical
        if F == self.F:
            return sympy.Integer(1), self
        return factor, Term(F, self.alpha)

    @cached_property
    def key(self) -> tuple:
        """Hashable identity: (multi-index, canonical F)."""
        return (self.alpha, self._canonical[1])

    @cached_property
    def sort_key(self) -> tuple:
        orders = tuple((coord_sort_key(s), -n) for s, n in self.alpha)
        return (self.total_order, orders, sympy.default_sort_key(self._canonical[1]))

    # ----------------------------------------------------------------- conversions
    def to_sympy(self) -> sympy.Expr:
        """``Derivative(F, *α)`` left unevaluated (or F itself when α = 0)."""
        if not self.alpha:
            return self.F
        return sympy.Derivative(self.F, *self.alpha, evaluate=False)

    def strong(self) -> sympy.Expr:
        """The expanded strong form: ``d_x(u^2) -> 2*u*u_x``."""
        return sympy.expand(self.to_sympy().doit())

    def subs(self, mapping: Mapping) -> Term:
        """Apply a substitution to F (fields -> expressions of fields)."""
        return Term(sympy.sympify(self.F).xreplace(dict(mapping)), self.alpha)

    # ----------------------------------------------------------------- printing
    def short(self) -> str:
        """Short text that ``symweak.grammar.parse_term`` reads back."""
        return _short(self.to_sympy())

    def latex(self) -> str:
        return _latex(self.to_sympy())

    def __str__(self) -> str:
        return self.short()

    def __repr__(self) -> str:
        return f"Term({self.short()!r})"

    # ----------------------------------------------------------------- identity
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Term):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: Term) -> bool:
        return self.sort_key < other.sort_key

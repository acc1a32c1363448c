"""Equations ``D^{α0} F0 = Σ ξ_s D^{αs} F_s`` and systems of them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping

import sympy

from .._errors import IRError
from ._printing import format_float
from ._products import to_weak_terms
from ._term import Term

__all__ = ["Equation", "System", "strong_monomials"]


def _as_float(value, where: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise IRError(f"Coefficient {value!r} of {where} is not a number.") from exc
    if not math.isfinite(out):
        raise IRError(f"Coefficient of {where} is {out}; coefficients must be finite numbers.")
    return out


def strong_monomials(expr: sympy.Expr) -> dict[sympy.Expr, float]:
    """Expanded strong form as ``{monomial: coefficient}`` (monomials are coefficient-free)."""
    out: dict[sympy.Expr, float] = {}
    for part in sympy.Add.make_args(sympy.expand(expr)):
        if part == 0:
            continue
        coeff, mono = part.as_coeff_Mul()
        out[mono] = out.get(mono, 0.0) + float(coeff)
    return {m: c for m, c in out.items() if c != 0.0}


class Equation:
    """One PDE: a left-hand term and ``{term: coefficient}`` on the right.

    The stored form is canonical: every term is canonical (its numeric factor moved into
    the coefficient), a sum inside a term is split into one term per summand (D^α is
    linear), duplicates are summed, terms with a zero coefficient are dropped, and terms are
    ordered (lowest derivative order first). Coefficients are float64.

    >>> import sympy
    >>> t, x = sympy.symbols("t x"); u = sympy.Function("u")(t, x)
    >>> eq = Equation(Term(u, "t"), {Term(u**2, "x"): -0.5, Term(u, "xx"): 0.1})
    >>> eq.short()
    'u_t = -0.5*d_x(u^2) + 0.1*u_xx'
    """

    __slots__ = ("_rhs", "lhs")

    def __init__(
        self,
        lhs: Term | sympy.Expr,
        rhs: Mapping[Term, float] | Iterable[tuple[Term, float]] = (),
    ) -> None:
        lhs_term = lhs if isinstance(lhs, Term) else Term.from_sympy(lhs)
        lhs_factor, lhs_canon = lhs_term.canonical()
        self.lhs: Term = lhs_canon
        items = rhs.items() if isinstance(rhs, Mapping) else rhs
        merged: dict[Term, float] = {}
        for term, coeff in items:
            if not isinstance(term, Term):
                term = Term.from_sympy(term)
            value = _as_float(coeff, term.short()) / float(lhs_factor)
            factor, canon = term.canonical()
            # D^α is linear: a sum inside F is split into one term per summand, so that
            # u_t = 1*(u^2 + u) and u_t = u^2 + u are the same equation.
            for part in sympy.Add.make_args(canon.F):
                f2, c2 = Term(part, canon.alpha).canonical() if part != canon.F else (1, canon)
                merged[c2] = merged.get(c2, 0.0) + value * float(factor) * float(f2)
        if self.lhs in merged:
            raise IRError(
                f"The left-hand side {self.lhs.short()} also appears on the right-hand side; "
                "move it to one side."
            )
        self._rhs = {
            t: merged[t] for t in sorted(merged, key=lambda t: t.sort_key) if merged[t] != 0.0
        }

    # ----------------------------------------------------------------- access
    @property
    def rhs(self) -> dict[Term, float]:
        """``{term: coefficient}`` (a copy, in canonical order)."""
        return dict(self._rhs)

    coefficients = rhs

    @property
    def terms(self) -> tuple[Term, ...]:
        return tuple(self._rhs)

    def __len__(self) -> int:
        return len(self._rhs)

    def __iter__(self) -> Iterator[tuple[Term, float]]:
        return iter(self._rhs.items())

    @property
    def field_names(self) -> tuple[str, ...]:
        names = set(self.lhs.field_names)
        for term in self._rhs:
            names.update(term.field_names)
        return tuple(sorted(names))

    # ----------------------------------------------------------------- conversions
    def rhs_sympy(self) -> sympy.Expr:
        return sympy.Add(*[sympy.Float(c) * t.to_sympy() for t, c in self._rhs.items()])

    def to_sympy(self) -> sympy.Eq:
        """``Eq(Derivative(u, t), -0.5*Derivative(u**2, x) + ...)``.

        ``.doit()`` on the right-hand side gives the strong form.
        """
        return sympy.Eq(self.lhs.to_sympy(), self.rhs_sympy(), evaluate=False)

    @classmethod
    def from_sympy(cls, eq: sympy.Eq) -> Equation:
        """Read a ``sympy.Eq`` (weak terms, or strong products like ``u*u_x``) back."""
        if not isinstance(eq, sympy.Equality):
            raise IRError(f"Expected a sympy.Eq, got {type(eq).__name__}.")
        rhs: list[tuple[Term, float]] = []
        strong = []  # parts with derivatives inside (u*u_x, u*u_xx): normal form together
        for part in sympy.Add.make_args(eq.rhs):
            if part == 0:
                continue
            coeff, rest = part.as_coeff_Mul()
            if not coeff.is_number:
                raise IRError(f"Coefficient {coeff} of {rest} is not a number.")
            inner = rest.expr if isinstance(rest, sympy.Derivative) else rest
            if inner.has(sympy.Derivative):
                strong.append(part)
                continue
            rhs.append((Term.from_sympy(rest), coeff))
        if strong:
            rhs.extend((t, c) for c, t in to_weak_terms(sympy.Add(*strong)))
        return cls(Term.from_sympy(eq.lhs), rhs)

    def strong(self) -> sympy.Eq:
        """The strong form, expanded: ``Eq(u_t, -u*u_x + 0.1*u_xx)``."""
        return sympy.Eq(self.lhs.strong(), sympy.expand(self.to_sympy().rhs.doit()), evaluate=False)

    def strong_coefficients(self) -> dict[sympy.Expr, float]:
        """Right-hand side in strong form as ``{monomial: coefficient}``."""
        return strong_monomials(self.to_sympy().rhs.doit())

    # ----------------------------------------------------------------- printing
    def short(self, digits: int | None = None) -> str:
        """``u_t = -0.5*d_x(u^2) + 0.1*u_xx``: coefficients exact (they read back as the same
        float64), or to ``digits`` significant digits for people."""
        parts = []
        for i, (term, c) in enumerate(self._rhs.items()):
            sign = "-" if c < 0 else "+"
            mag = abs(c)
            num = format_float(mag) if digits is None else f"{mag:.{digits}g}"
            # a constant source term is its coefficient alone
            body = num if term.F == 1 else term.short() if mag == 1.0 else f"{num}*{term.short()}"
            parts.append(("-" if sign == "-" else "") + body if i == 0 else f" {sign} {body}")
        return f"{self.lhs.short()} = {''.join(parts) if parts else '0'}"

    def latex(self, digits: int | None = None) -> str:
        """LaTeX such as ``\\partial_{t} u = -0.5 \\partial_{x}\\left(u^{2}\\right) + ...``."""
        parts = []
        for i, (term, c) in enumerate(self._rhs.items()):
            mag = abs(c)
            num = format_float(mag) if digits is None else f"{mag:.{digits}g}"
            body = num if term.F == 1 else term.latex() if mag == 1.0 else f"{num} {term.latex()}"
            if i == 0:
                parts.append(("-" if c < 0 else "") + body)
            else:
                parts.append(f" {'-' if c < 0 else '+'} {body}")
        return f"{self.lhs.latex()} = {''.join(parts) if parts else '0'}"

    def __str__(self) -> str:
        return self.short()

    def __repr__(self) -> str:
        return f"Equation({self.short()!r})"

    # ----------------------------------------------------------------- comparison
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Equation):
            return NotImplemented
        return self.lhs == other.lhs and self._rhs == other._rhs

    def __hash__(self) -> int:
        return hash((self.lhs, frozenset(self._rhs.items())))

    def isclose(self, other: Equation, rtol: float = 1e-9, atol: float = 0.0) -> bool:
        """Same strong form up to coefficient tolerance (``d_x(u^2)`` ≡ ``2*u*u_x``)."""
        if self.lhs.strong() != other.lhs.strong():
            return False
        a, b = self.strong_coefficients(), other.strong_coefficients()
        if set(a) != set(b):
            return False
        return all(math.isclose(a[m], b[m], rel_tol=rtol, abs_tol=atol) for m in a)


class System:
    """Several equations, one per left-hand side (``u_t``, ``v_t``)."""

    __slots__ = ("equations",)

    def __init__(self, equations: Iterable[Equation]) -> None:
        self.equations: tuple[Equation, ...] = tuple(equations)
        lhs = [e.lhs for e in self.equations]
        if len(set(lhs)) != len(lhs):
            raise IRError(f"Two equations share a left-hand side: {[t.short() for t in lhs]}.")

    def __iter__(self) -> Iterator[Equation]:
        return iter(self.equations)

    def __len__(self) -> int:
        return len(self.equations)

    def __getitem__(self, i: int) -> Equation:
        return self.equations[i]

    def to_sympy(self) -> list[sympy.Eq]:
        return [e.to_sympy() for e in self.equations]

    def short(self, digits: int | None = None) -> str:
        return "\n".join(e.short(digits) for e in self.equations)

    def latex(self, digits: int | None = None) -> str:
        rows = r" \\ ".join(e.latex(digits) for e in self.equations)
        return r"\begin{cases} " + rows + r" \end{cases}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, System):
            return NotImplemented
        return self.equations == other.equations

    def __hash__(self) -> int:
        return hash(self.equations)

    def __repr__(self) -> str:
        return f"System({[e.short() for e in self.equations]!r})"

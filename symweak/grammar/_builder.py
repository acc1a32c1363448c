"""The parse tree to SymPy and IR objects: :class:`_Builder` builds them directly (never
through ``eval``/``sympify``), with errors that point at the text."""

from __future__ import annotations

import re
from fractions import Fraction

import sympy
from lark import Token, Transformer, v_args
from lark.exceptions import VisitError

from .._errors import GrammarError, IRError
from ..ir import DEFAULT_COORDS, RESERVED_NAMES, Term, coord_sort_key, short, to_weak_terms
from ..operators import OperatorSet, expression_functions, get_operator


# ---------------------------------------------------------------------------- builder
class _Semantic(Exception):
    def __init__(self, message: str, where=None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint
        self.line = getattr(where, "line", None)
        self.column = getattr(where, "column", None)
        meta = getattr(where, "meta", None)
        if self.line is None and meta is not None and not getattr(meta, "empty", True):
            self.line, self.column = meta.line, meta.column


def _is_function(name: str) -> bool:
    """A built-in or registered function name (not usable as a field or parameter)."""
    return name in RESERVED_NAMES or name in expression_functions()


def _number(tok: Token) -> sympy.Number:
    frac = Fraction(str(tok))
    return sympy.Rational(frac.numerator, frac.denominator)


@v_args(inline=True)
class _Builder(Transformer):
    """Parse tree -> SymPy/IR objects, in a context of known coordinates and fields.

    ``mode`` decides what an unknown name is: ``"field"`` (infer a new field), ``"strict"``
    (error) or ``"param"`` (a free parameter, on the right of ``->`` in a rule).
    """

    def __init__(self, coords, fields, mode="field"):
        super().__init__()
        self.coords = {str(c): c for c in coords}
        self.coord_tuple = tuple(coords)
        self.fields: dict[str, sympy.Expr] = {}
        self.declared = fields is not None
        self.mode = mode
        self.params: dict[str, sympy.Symbol] = {}
        for name in fields or ():
            self.fields[name] = sympy.Function(name)(*self.coord_tuple)

    # -- names ------------------------------------------------------------------
    def _field(self, tok: Token) -> sympy.Expr:
        name = str(tok)
        if name in self.fields:
            return self.fields[name]
        if _is_function(name):
            raise _Semantic(f"`{name}` is a function, not a field; call it as {name}(u).", tok)
        if self.mode == "field" and not self.declared:
            self.fields[name] = sympy.Function(name)(*self.coord_tuple)
            return self.fields[name]
        known = ", ".join(sorted(self.fields)) or "none"
        raise _Semantic(
            f"Unknown field `{name}`.",
            tok,
            f"Known fields: {known}. Declare fields with `fields: u, v` or pass them in the data.",
        )

    def name(self, tok):
        name = str(tok)
        if name in self.coords:
            if self.mode == "param":
                return self.coords[name]
            raise _Semantic(
                f"`{name}` is a coordinate; a term may contain only fields and numbers.", tok
            )
        if self.mode == "param" and name not in self.fields:
            if _is_function(name):
                raise _Semantic(f"`{name}` is a function; call it as {name}(...).", tok)
            return self.params.setdefault(name, sympy.Symbol(name))
        return self._field(tok)

    def _split_deriv(self, tok: Token) -> tuple[str, list[sympy.Symbol]]:
        base, letters = str(tok).split("_", 1)
        out = []
        for ch in letters:
            if ch not in self.coords:
                raise _Semantic(
                    f"`{tok}`: `{ch}` is not a coordinate.",
                    tok,
                    f"Coordinates: {', '.join(self.coords)} (declare them with `coords: t, x, y`).",
                )
            out.append(self.coords[ch])
        return base, out

    def deriv_name(self, tok):
        base, variables = self._split_deriv(tok)
        if base in ("d", "D") and base not in self.fields:
            raise _Semantic(f"`{tok}` needs an argument in parentheses, e.g. {tok}(u^2).", tok)
        return sympy.Derivative(
            self._field(Token("NAME", base, line=tok.line, column=tok.column)), *variables
        )

    def deriv_call(self, tok, arg):
        base, variables = self._split_deriv(tok)
        if base not in ("d", "D"):
            letters = str(tok).split("_", 1)[1]
            raise _Semantic(
                f"`{tok}(...)`: to differentiate an expression write d_{letters}(...).",
                tok,
            )
        return sympy.Derivative(arg, *variables)

    def call(self, tok, *args):
        name = str(tok)
        functions = expression_functions()
        if name not in functions:
            known = ", ".join(sorted(functions))
            raise _Semantic(f"Unknown function `{name}`.", tok, f"Known functions: {known}.")
        if len(args) != 1:
            raise _Semantic(f"`{name}` takes 1 argument(s), got {len(args)}.", tok)
        return functions[name].sympy_fn(*args)

    # -- arithmetic ---------------------------------------------------------------
    def number(self, tok):
        return _number(tok)

    def add(self, a, _op, b):
        return a + b

    def sub(self, a, _op, b):
        return a - b

    def mul(self, a, _op, b):
        return a * b

    def div(self, a, op, b):
        if b == 0:
            raise _Semantic("Division by zero.", op)
        return a / b

    def neg(self, _op, a):
        return -a

    def pos(self, _op, a):
        return a

    def pow(self, a, _op, b):
        return a**b

    # -- lists ----------------------------------------------------------------------
    def terms(self, *items):
        return list(items)

    def equation(self, lhs, rhs):
        return (lhs, rhs)

    def name_list(self, *toks):
        return list(toks)

    # -- operator sets --------------------------------------------------------------
    def op_named(self, tok):
        return (self._op(str(tok), tok), tok)

    def op_symbol(self, tok):
        return (self._op(str(tok), tok), tok)

    def op_power(self, pow_tok, num):
        text = str(num)
        if not text.isdigit() or int(text) < 2:
            raise _Semantic(
                f"`^{text}`: a power operator needs a whole number of at least 2, e.g. `^2`.", num
            )
        return (self._op(f"^{int(text)}", pow_tok), pow_tok)

    def _op(self, spelling, tok):
        try:
            return get_operator(spelling)
        except GrammarError as exc:
            raise _Semantic(exc.reason, tok, exc.hint) from None

    def opset(self, *items):
        seen = set()
        for op, tok in items:
            if op.name in seen:
                raise _Semantic(f"Operator `{op.symbol}` is listed twice.", tok)
            seen.add(op.name)
        return OperatorSet(tuple(op for op, _ in items))


# ---------------------------------------------------------------------------- helpers
def _infer_coords(text: str, given) -> tuple[sympy.Symbol, ...]:
    if isinstance(given, str):
        given = (
            [c for c in given.replace(",", " ").split() if c]
            if " " in given or "," in given
            else list(given)
        )
    if given is not None:
        syms = [c if isinstance(c, sympy.Symbol) else sympy.Symbol(str(c)) for c in given]
        return tuple(syms)
    letters = set(DEFAULT_COORDS[:2])
    for match in re.finditer(r"(?<![\w])[^\W\d_][^\W_]*_([^\W\d_]+)", text):
        letters.update(match.group(1))
    # Only t, x, y, z are inferred; any other coordinate must be declared, so a typo such
    # as u_q is reported instead of silently becoming a new coordinate.
    letters = {c for c in letters if c in DEFAULT_COORDS}
    return tuple(sorted((sympy.Symbol(c) for c in letters), key=coord_sort_key))


def _run(builder: _Builder, tree, text: str):
    try:
        return builder.transform(tree)
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, _Semantic):
            raise GrammarError(orig.message, text, orig.line, orig.column, orig.hint) from None
        if isinstance(orig, (IRError, GrammarError)):
            meta = getattr(exc.obj, "meta", None)
            line = getattr(meta, "line", None) if meta is not None and not meta.empty else None
            col = getattr(meta, "column", None) if line is not None else None
            raise GrammarError(str(orig), text, line, col) from None
        raise


def _position(tree_or_tok):
    if isinstance(tree_or_tok, Token):
        return tree_or_tok.line, tree_or_tok.column
    meta = getattr(tree_or_tok, "meta", None)
    if meta is not None and not meta.empty:
        return meta.line, meta.column
    return None, None


def _one_term(expr: sympy.Expr, text: str, where) -> Term:
    inner = expr.expr if isinstance(expr, sympy.Derivative) else expr
    if not inner.has(sympy.Derivative):
        try:
            return Term.from_sympy(expr)
        except IRError:
            pass
    try:
        parts = to_weak_terms(expr)
    except IRError as exc:
        raise GrammarError(str(exc), text, *_position(where)) from None
    if len(parts) != 1 and len(sympy.Add.make_args(sympy.expand(expr))) == 1:
        listed = " + ".join(f"{c}*{t.short()}" for c, t in parts)
        raise GrammarError(
            f"`{short(expr)}` is not a single term: its canonical writing is {listed}; list "
            "those terms instead.",
            text,
            *_position(where),
        )
    if len(parts) != 1:
        raise GrammarError(
            "Each entry must be a single term; separate terms with commas instead of `+`.",
            text,
            *_position(where),
        )
    return parts[0][1]


def _fields_arg(fields):
    if fields is None:
        return None
    return [str(f) for f in fields]

"""Parsing operator sets, terms, equations and constraint specs (``grammar/symweak.lark``).

The grammar produces a parse tree; :class:`_Builder` turns it into SymPy and IR objects
directly (never through ``eval``/``sympify``). Syntax errors are mapped to messages by the
tables below (Lark's ``match_examples``); the same tables drive the tests, so every message
is proved to be produced by the inputs listed with it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fractions import Fraction

import sympy
from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, VisitError

from .._errors import GrammarError, IRError
from .._resources import resource_path
from ..ir import Equation, Term, short, to_weak_terms
from ..ir._symbols import DEFAULT_COORDS, RESERVED_NAMES, coord_sort_key, is_field
from ..operators import OperatorSet, expression_functions, get_operator

__all__ = [
    "BUILTIN_RULES",
    "CONSTRAINT_ERRORS",
    "EQUATION_ERRORS",
    "EXPR_ERRORS",
    "OPSET_ERRORS",
    "RULE_ACTIONS",
    "Constraints",
    "RuleSpec",
    "parse_constraints",
    "parse_equation",
    "parse_expr",
    "parse_operators",
    "parse_term",
    "parse_terms",
]

# ---------------------------------------------------------------------------- messages
# One table per start symbol: message -> inputs that must produce exactly that message.
OPSET_ERRORS: dict[str, list[str]] = {
    'The operator list is empty; give at least one operator, e.g. "+,-,*,sin".': ["", "  "],
    "Empty entry in the operator list (a leading comma or two commas in a row).": [
        ",sin",
        "+,,*",
        "sin,,cos",
    ],
    "The operator list ends with a comma; remove it or add an operator.": ["+,-,", "sin,"],
    "`^` must be followed by a whole-number power such as `^2`.": ["^", "+,^", "^x", "sin,^,cos"],
    "Operators must be separated by commas.": ["sin cos", "+ -", "sin*", "^2 ^3"],
}

EXPR_ERRORS: dict[str, list[str]] = {
    "The expression is empty.": ["", " "],
    "Unbalanced parentheses: a `(` is never closed.": ["(u", "sin(u", "d_x(u^2", "(u+v"],
    "Unbalanced parentheses: a `)` has no matching `(`.": ["u)", "u^2)", "sin(u))"],
    "An operator is missing its right operand.": ["u+", "u*", "u^", "2*", "u-"],
    "Two operands in a row; write `*` between them for a product.": ["u v", "2u", "u sin(u)"],
    "Empty parentheses: put an expression inside.": ["()", "sin()", "d_x()"],
}

EQUATION_ERRORS: dict[str, list[str]] = {
    "An equation is `left = right`, e.g. `u_t = 0.1*u_xx`; the `=` is missing.": ["u_t", "u_t 2"],
    "The right-hand side of the equation is missing.": ["u_t =", "u_t = "],
    "The left-hand side of the equation is missing.": ["= u_xx", " = 0.1*u_xx"],
}

CONSTRAINT_ERRORS: dict[str, list[str]] = {
    "A statement needs `:` after its keyword, e.g. `lhs: u_t`.": [
        "lhs u_t",
        "fields u, v",
        "keep u_xx",
        "ops +,-",
    ],
    (
        "Unknown statement. Statements are `lhs:`, `fields:`, `coords:`, `ops:`, `order:`, "
        "`forbid:`, `keep:`, `add:`, `inputs:`, `conserved:`, `rule NAME: ...`, or a built-in "
        "rule such as `galilean(u, v)`."
    ): ["foo: u", "lhs: u_t\nbar: x", "fields: u\n2"],
    "Each `order:` item is `coordinate <= integer`, e.g. `order: x <= 4`.": [
        "order: x = 4",
        "order: x",
        "order: 4",
        "order: x <= y",
    ],
    "A rule is `rule NAME: target -> expression, ...`, e.g. `rule parity: x -> -x, u -> -u`.": [
        "rule: x -> -x",
        "rule p x -> -x",
        "rule p: x = -x",
        "rule p: x",
    ],
    "Two statements on one line; separate them with a newline or `;`.": [
        "lhs: u_t fields: u",
        "fields: u coords: t, x",
    ],
    "A list ends with a comma; remove it or add an item.": [
        "fields: u,",
        "lhs: u_t,",
        "forbid: u,",
    ],
    "A statement has nothing after `:`.": ["lhs:", "fields:\n", "keep:;"],
}

#: Built-in rules the constraint language knows: name -> (min fields, max fields, summary).
BUILTIN_RULES: dict[str, tuple[int, int, str]] = {
    "galilean": (1, 3, "Galilean invariance; arguments are the velocity fields along x, y, z"),
    "u1": (2, 2, "U(1) phase equivariance; arguments are the real and imaginary parts"),
    "isotropic": (2, 2, "isotropy in the x-y plane; arguments are the velocity fields along x, y"),
}

#: What a user rule does with terms that are not invariant under its transformation.
RULE_ACTIONS = ("filter", "augment", "pair")

#: Built-in rules that take ``as ACTION``: name -> the actions they accept (the first is what
#: they do without one). ``u1(u, v) as pair`` fits the two equations jointly with the
#: coefficients U(1) equivariance ties, instead of offering the mirrored terms as candidates;
#: ``u1(u, v) as equivariant`` keeps only terms equivariant under every phase (|ψ|²ψ's parts).
BUILTIN_RULE_ACTIONS: dict[str, tuple[str, ...]] = {
    "u1": ("augment", "pair", "equivariant"),
    "isotropic": ("pair", "filter", "augment"),
}

_TOKEN_NAMES = {
    "NAME": "a name",
    "NUMBER": "a number",
    "DERIV": "a derivative such as u_x",
    "COMMA": "`,`",
    "COLON": "`:`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "PLUS": "`+`",
    "MINUS": "`-`",
    "STAR": "`*`",
    "SLASH": "`/`",
    "POW": "`^`",
    "ARROW": "`->`",
    "EQUAL": "`=`",
    "LESSTHAN": "`<=`",
    "_SEP": "a new line",
    "$END": "the end of the text",
}

_STARTS = ("opset", "expr", "terms", "equation", "constraints")
_TABLES = {
    "opset": OPSET_ERRORS,
    "expr": EXPR_ERRORS,
    "terms": EXPR_ERRORS,
    "equation": {**EQUATION_ERRORS, **EXPR_ERRORS},
    "constraints": {**CONSTRAINT_ERRORS, **EXPR_ERRORS},
}


@functools.cache
def _lark() -> Lark:
    return Lark.open(
        str(resource_path("grammar", "symweak.lark")),
        parser="lalr",
        start=list(_STARTS),
        strict=True,
        propagate_positions=True,
        maybe_placeholders=False,
    )


def _describe_expected(expected) -> str:
    names = sorted({_TOKEN_NAMES.get(e, f"`{e.lower()}`" if e.isalpha() else e) for e in expected})
    return ", ".join(names)


def _expected_terminals(exc: UnexpectedInput, start: str) -> set[str]:
    """Terminals the parser could have taken where it stopped."""
    found = set(getattr(exc, "accepts", None) or getattr(exc, "expected", None) or ())
    found |= set(getattr(exc, "allowed", None) or ())
    if start != "constraints":
        found.discard("_SEP")
    return {name for name in found if not name.startswith("__")}


def _syntax_error(exc: UnexpectedInput, text: str, start: str) -> GrammarError:
    parser = _lark()
    label = None
    if not text.strip() and start in ("opset", "expr", "terms"):
        label = next(iter(_TABLES[start]))  # the "empty" message comes first in its table
    if label is None:
        try:
            label = exc.match_examples(
                lambda s: parser.parse(s, start=start), _TABLES[start], use_accepts=True
            )
        except Exception:  # pragma: no cover - match_examples never should, but stay safe
            label = None
    line = getattr(exc, "line", None)
    column = getattr(exc, "column", None)
    if isinstance(exc, UnexpectedEOF) or line in (None, -1):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    if label is None:
        if isinstance(exc, UnexpectedCharacters):
            char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
            label = f"Unexpected character `{char}`."
        else:
            tok = getattr(exc, "token", None)
            shown = "the end of the text" if tok is None or tok.type == "$END" else f"`{tok}`"
            label = f"Unexpected {shown}."
    expected = _expected_terminals(exc, start)
    hint = f"Expected {_describe_expected(expected)}." if expected else None
    return GrammarError(label, text, line, column, hint)


def _parse_tree(text: str, start: str) -> Tree:
    if not isinstance(text, str):
        raise GrammarError(f"Expected text to parse, got {type(text).__name__}.")
    try:
        return _lark().parse(text, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, start) from None


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class RuleSpec:
    """A rule named in a constraint spec, before it is turned into a rewrite rule.

    ``galilean(u, v)`` gives ``RuleSpec('galilean', fields=('u', 'v'))`` and
    ``u1(u, v) as pair`` ``RuleSpec('u1', fields=('u', 'v'), action='pair')`` (a built-in's
    action is None unless given: the rule's own behaviour); a user rule
    ``rule parity: x -> -x, u -> -u`` gives the substitutions ``((x, -x), (u(t,x), -u(t,x)))``.
    Free names on the right of ``->`` (such as ``c`` in ``u -> u + c``) are the group
    parameters.
    """

    name: str
    fields: tuple[str, ...] = ()
    substitutions: tuple[tuple[sympy.Basic, sympy.Expr], ...] = ()
    parameters: tuple[sympy.Symbol, ...] = ()
    action: str | None = None
    builtin: bool = True

    def mapping(self) -> dict[sympy.Basic, sympy.Expr]:
        return dict(self.substitutions)


@dataclass(frozen=True)
class Constraints:
    """What a user knows about the equation, parsed from the constraint language."""

    coords: tuple[sympy.Symbol, ...]
    fields: tuple[str, ...] = ()
    lhs: tuple[Term, ...] = ()
    ops: OperatorSet | None = None
    max_order: dict[str, int] = field(default_factory=dict)
    forbid: tuple[Term, ...] = ()
    keep: tuple[Term, ...] = ()
    add: tuple[Term, ...] = ()
    #: ``inputs: u, u_x``: the fields and field derivatives candidate terms are built from
    #: (empty: the fields alone, every term D^α F(U))
    inputs: tuple[sympy.Expr, ...] = ()
    #: ``conserved: u``: the fields whose equations are in conservation form (every
    #: right-hand-side term a derivative along a coordinate the left-hand side does not take)
    conserved: tuple[str, ...] = ()
    rules: tuple[RuleSpec, ...] = ()
    text: str = ""

    def field_exprs(self) -> tuple[sympy.Expr, ...]:
        return tuple(sympy.Function(f)(*self.coords) for f in self.fields)


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


def _declared_names(statements, text: str):
    """The names of ``coords:`` and ``fields:`` (None where not given), checked."""
    declared_coords = None
    declared_fields = None
    for stmt in statements:
        if stmt.data == "coords_stmt":
            if declared_coords is not None:
                raise GrammarError("`coords:` is given twice.", text, *_position(stmt))
            names = stmt.children[0].children
            for tok in names:
                if len(str(tok)) != 1:
                    raise GrammarError(
                        f"Coordinate `{tok}` must be a single letter "
                        "(derivatives are written u_xy).",
                        text,
                        tok.line,
                        tok.column,
                    )
            if len({str(t) for t in names}) != len(names):
                raise GrammarError("`coords:` lists a name twice.", text, *_position(stmt))
            declared_coords = [str(t) for t in names]
        elif stmt.data == "fields_stmt":
            if declared_fields is not None:
                raise GrammarError("`fields:` is given twice.", text, *_position(stmt))
            names = stmt.children[0].children
            for tok in names:
                if _is_function(str(tok)):
                    raise GrammarError(
                        f"`{tok}` is a reserved name (a function); rename the field.",
                        text,
                        tok.line,
                        tok.column,
                    )
            if len({str(t) for t in names}) != len(names):
                raise GrammarError("`fields:` lists a name twice.", text, *_position(stmt))
            declared_fields = [str(t) for t in names]
    return declared_coords, declared_fields


def _order(stmt: Tree, builder, text: str, max_order: dict) -> None:
    """``order: x <= 3, ...`` into ``max_order``."""
    for item in stmt.children:
        name_tok, num_tok = item.children[0], item.children[-1]
        cname = str(name_tok)
        if cname not in builder.coords:
            raise GrammarError(
                f"`order:` names `{cname}`, which is not a coordinate "
                f"({', '.join(builder.coords)}).",
                text,
                name_tok.line,
                name_tok.column,
            )
        if not str(num_tok).isdigit():
            raise GrammarError(
                f"Derivative order `{num_tok}` must be a whole number.",
                text,
                num_tok.line,
                num_tok.column,
            )
        if cname in max_order:
            raise GrammarError(
                f"`order:` gives `{cname}` twice.", text, name_tok.line, name_tok.column
            )
        max_order[cname] = int(str(num_tok))


def _builtin_rule(stmt: Tree, builder, text: str) -> RuleSpec:
    """``galilean(u, v)``, ``u1(u, v) as pair``: a built-in rule, checked."""
    name_tok, names = stmt.children[0], stmt.children[1]
    act_tok = stmt.children[2] if len(stmt.children) > 2 else None
    rname = str(name_tok)
    if rname not in BUILTIN_RULES:
        raise GrammarError(
            f"Unknown rule `{rname}`.",
            text,
            name_tok.line,
            name_tok.column,
            f"Built-in rules: {', '.join(sorted(BUILTIN_RULES))}; write your own with "
            "`rule NAME: x -> -x, u -> -u`.",
        )
    lo, hi, summary = BUILTIN_RULES[rname]
    args = [str(t) for t in names.children]
    if not lo <= len(args) <= hi:
        count = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise GrammarError(
            f"`{rname}` takes {count} field name(s) ({summary}); got {len(args)}.",
            text,
            name_tok.line,
            name_tok.column,
        )
    if len(set(args)) != len(args):
        raise GrammarError(f"`{rname}` lists a field twice.", text, name_tok.line, name_tok.column)
    try:
        for tok in names.children:
            builder._field(tok)
    except _Semantic as exc:
        raise GrammarError(exc.message, text, exc.line, exc.column, exc.hint) from None
    action = None
    if act_tok is not None:
        allowed = BUILTIN_RULE_ACTIONS.get(rname, ())
        if str(act_tok) not in allowed:
            hint = (
                f"`{rname}` takes `as {' / as '.join(allowed)}`."
                if allowed
                else f"`{rname}` has no `as ...` form; leave it out."
            )
            raise GrammarError(
                f"Unknown action `{act_tok}` for the built-in rule `{rname}`.",
                text,
                act_tok.line,
                act_tok.column,
                hint,
            )
        action = str(act_tok)
    return RuleSpec(rname, fields=tuple(args), action=action)


def parse_constraints(text: str, coords=None, fields=None) -> Constraints:
    """Parse a constraint spec (see ``grammar/symweak.lark`` and docs/grammar.md)."""
    tree = _parse_tree(text, "constraints")
    statements = [s for s in tree.children if isinstance(s, Tree)]

    # Pass 1: coordinates and fields, which every other statement resolves names against.
    declared_coords, declared_fields = _declared_names(statements, text)

    if declared_coords is not None and coords is not None:
        given = [str(c) for c in coords]
        if given != declared_coords:
            raise GrammarError(
                f"`coords: {', '.join(declared_coords)}` does not match the data's coordinates "
                f"({', '.join(given)}).",
                text,
            )
    coord_syms = _infer_coords(text, declared_coords if declared_coords is not None else coords)
    if fields is not None:
        given_fields = [str(f) for f in fields]
        if declared_fields is not None:
            unknown = [f for f in declared_fields if f not in given_fields]
            if unknown:
                raise GrammarError(
                    f"`fields:` names {', '.join(unknown)}, which the data does not have "
                    f"(data fields: {', '.join(given_fields)}).",
                    text,
                )
        else:
            declared_fields = given_fields
    builder = _Builder(coord_syms, declared_fields)

    lhs: list[Term] = []
    forbid: list[Term] = []
    keep: list[Term] = []
    add: list[Term] = []
    inputs: list[sympy.Expr] = []
    conserved: list[str] = []
    ops = None
    max_order: dict[str, int] = {}
    rules: list[RuleSpec] = []

    def terms_of(stmt):
        sub = stmt.children[0]
        exprs = _run(builder, sub, text)
        return [_one_term(e, text, child) for e, child in zip(exprs, sub.children)]

    for stmt in statements:
        kind = stmt.data
        if kind in ("coords_stmt", "fields_stmt"):
            continue
        if kind == "lhs_stmt":
            for term, child in zip(terms_of(stmt), stmt.children[0].children):
                if not term.alpha or len(term.fields) != 1 or term.fields[0] != term.F:
                    raise GrammarError(
                        f"Left-hand side `{term.short()}` must be a derivative of one field, "
                        "such as u_t or u_tt.",
                        text,
                        *_position(child),
                    )
                if term in lhs:
                    raise GrammarError(
                        f"`{term.short()}` is listed twice in `lhs:`.", text, *_position(child)
                    )
                lhs.append(term)
        elif kind == "forbid_stmt":
            forbid.extend(terms_of(stmt))
        elif kind == "keep_stmt":
            keep.extend(terms_of(stmt))
        elif kind == "add_stmt":
            add.extend(terms_of(stmt))
        elif kind == "inputs_stmt":
            _inputs(stmt, builder, text, inputs)
        elif kind == "conserved_stmt":
            for tok in stmt.children[0].children:
                try:
                    builder._field(tok)
                except _Semantic as exc:
                    raise GrammarError(exc.message, text, exc.line, exc.column, exc.hint) from None
                if str(tok) in conserved:
                    raise GrammarError(
                        f"`{tok}` is listed twice in `conserved:`.", text, tok.line, tok.column
                    )
                conserved.append(str(tok))
        elif kind == "ops_stmt":
            if ops is not None:
                raise GrammarError("`ops:` is given twice.", text, *_position(stmt))
            ops = _run(builder, stmt.children[0], text)
        elif kind == "order_stmt":
            _order(stmt, builder, text, max_order)
        elif kind == "builtin_rule_stmt":
            rules.append(_builtin_rule(stmt, builder, text))
        elif kind == "rule_stmt":
            rules.append(_rule(stmt, builder, text))
    if any(r.name == s.name for i, r in enumerate(rules) for s in rules[:i]):
        raise GrammarError("A rule is given twice.", text)

    return Constraints(
        coords=coord_syms,
        fields=tuple(builder.fields),
        lhs=tuple(lhs),
        ops=ops,
        max_order=max_order,
        forbid=tuple(forbid),
        keep=tuple(keep),
        add=tuple(add),
        inputs=tuple(inputs),
        conserved=tuple(conserved),
        rules=tuple(rules),
        text=text,
    )


def _inputs(stmt: Tree, builder: _Builder, text: str, inputs: list) -> None:
    """``inputs: u, u_x, u_xx``: each a field or a derivative of one, listed once."""
    sub = stmt.children[0]
    for expr, child in zip(_run(builder, sub, text), sub.children):
        ok = is_field(expr) or (isinstance(expr, sympy.Derivative) and is_field(expr.expr))
        if not ok:
            raise GrammarError(
                f"`inputs:` takes fields and derivatives of one field (u, u_x, u_xx), not "
                f"`{short(expr)}`.",
                text,
                *_position(child),
            )
        if expr in inputs:
            raise GrammarError(
                f"`{short(expr)}` is listed twice in `inputs:`.", text, *_position(child)
            )
        inputs.append(expr)
    if inputs and not any(isinstance(e, sympy.Derivative) for e in inputs):
        raise GrammarError(
            "`inputs:` lists no derivative; add one (e.g. `inputs: u, u_x`) or leave the "
            "statement out (terms D^α F(U) are the default).",
            text,
            *_position(stmt),
        )


def _rule(stmt: Tree, builder: _Builder, text: str) -> RuleSpec:
    children = list(stmt.children)
    name_tok = children[0]
    action = "filter"
    if isinstance(children[-1], Token):
        act = children.pop()
        if str(act) not in RULE_ACTIONS:
            raise GrammarError(
                f"Unknown rule action `{act}`; use one of {', '.join(RULE_ACTIONS)}.",
                text,
                act.line,
                act.column,
            )
        action = str(act)
    if str(name_tok) in BUILTIN_RULES:
        raise GrammarError(
            f"`{name_tok}` is a built-in rule; choose another name for your rule.",
            text,
            name_tok.line,
            name_tok.column,
        )
    param_builder = _Builder(
        builder.coord_tuple, list(builder.fields) if builder.declared else None, mode="param"
    )
    param_builder.fields = dict(builder.fields)
    param_builder.declared = True
    subs = []
    targets = set()
    for sub in children[1:]:
        target_tok, _arrow, rhs_tree = sub.children
        tname = str(target_tok)
        if tname in builder.coords:
            target = builder.coords[tname]
        elif tname in builder.fields or not builder.declared:
            try:
                target = builder._field(target_tok)
            except _Semantic as exc:
                raise GrammarError(exc.message, text, exc.line, exc.column, exc.hint) from None
            param_builder.fields[tname] = target
        else:
            raise GrammarError(
                f"Rule target `{tname}` is neither a coordinate nor a field.",
                text,
                target_tok.line,
                target_tok.column,
            )
        if target in targets:
            raise GrammarError(
                f"Rule `{name_tok}` transforms `{tname}` twice.",
                text,
                target_tok.line,
                target_tok.column,
            )
        targets.add(target)
        subs.append((target, rhs_tree))
    built = []
    for target, rhs_tree in subs:
        built.append((target, _run(param_builder, rhs_tree, text)))
    return RuleSpec(
        name=str(name_tok),
        substitutions=tuple(built),
        parameters=tuple(param_builder.params.values()),
        action=action,
        builtin=False,
    )

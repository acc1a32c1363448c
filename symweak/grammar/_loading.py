"""Loading the Lark grammar and turning its syntax errors into messages.

Syntax errors are mapped to messages by the tables below (Lark's ``match_examples``); the
same tables drive the tests, so every message is proved to be produced by the inputs listed
with it.
"""

from __future__ import annotations

import functools

from lark import Lark, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from .._errors import GrammarError
from .._resources import resource_path

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
        "symmetric x",
    ],
    (
        "Unknown statement. Statements are `lhs:`, `fields:`, `coords:`, `ops:`, `order:`, "
        "`forbid:`, `keep:`, `add:`, `inputs:`, `conserved:`, `symmetric:`, `rule NAME: ...`, "
        "or a built-in rule such as `galilean(u, v)`."
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
        "symmetric: x,",
        "lhs: u_t,",
        "forbid: u,",
    ],
    "A statement has nothing after `:`.": ["lhs:", "fields:\n", "keep:;", "symmetric:"],
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

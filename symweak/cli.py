"""The ``symweak`` command.

Errors print one clear line and exit with status 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._errors import SymweakError
from ._version import __version__

__all__ = ["build_parser", "main"]


def _cmd_parse(args: argparse.Namespace) -> int:
    from . import grammar

    text = args.text
    if args.file:
        with open(args.text, encoding="utf-8") as fh:
            text = fh.read()
    kind = args.kind
    if kind == "ops":
        ops = grammar.parse_operators(text)
        unary = ", ".join(op.symbol for op in ops.unary) or "none"
        binary = ", ".join(op.symbol for op in ops.binary) or "none"
        print(f"unary: {unary}\nbinary: {binary}")
    elif kind == "term":
        for term in grammar.parse_terms(text):
            print(f"{term.short()}\t{term.latex()}\tstrong: {term.strong()}")
    elif kind == "equation":
        eq = grammar.parse_equation(text)
        print(eq.short())
        print(eq.latex())
    else:
        c = grammar.parse_constraints(text)
        print(f"coords: {', '.join(map(str, c.coords))}")
        print(f"fields: {', '.join(c.fields) or '(from the data)'}")
        print(f"lhs: {', '.join(t.short() for t in c.lhs) or '(default)'}")
        print(f"ops: {c.ops.spec() if c.ops else '(default)'}")
        if c.max_order:
            print("order: " + ", ".join(f"{k} <= {v}" for k, v in c.max_order.items()))
        if c.forbid:
            print(f"forbid: {', '.join(t.short() for t in c.forbid)}")
        if c.keep:
            print(f"keep: {', '.join(t.short() for t in c.keep)}")
        for rule in c.rules:
            if rule.builtin:
                print(f"rule: {rule.name}({', '.join(rule.fields)})")
            else:
                subs = ", ".join(f"{a} -> {b}" for a, b in rule.substitutions)
                print(f"rule {rule.name}: {subs} ({rule.action})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="symweak",
        description="Discover the PDE governing a system from sparse, noisy observations.",
    )
    parser.add_argument("--version", action="version", version=f"symweak {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("parse", help="check operator sets, terms, equations or constraint specs")
    p.add_argument("kind", choices=["ops", "term", "equation", "constraints"])
    p.add_argument("text", help="the text to parse (or a file name with --file)")
    p.add_argument("--file", action="store_true", help="read the text from the file TEXT")
    p.set_defaults(func=_cmd_parse)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (SymweakError, OSError) as exc:
        if args.debug:
            raise
        first, *rest = str(exc).splitlines() or [type(exc).__name__]
        print(f"symweak: error: {first}", file=sys.stderr)
        for line in rest:
            print(f"  {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("symweak: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""The constraint language: declarations, orders, forbidden/kept/added terms, inputs,
conservation and rules (built-in ones read from the rule registry, user rules written out)."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from lark import Token, Tree

from .._errors import GrammarError
from ..ir import Term, is_field, short
from ..operators import OperatorSet
from ..rules import RULE_ACTIONS, RULES, rule_signature
from ._builder import _Builder, _infer_coords, _is_function, _one_term, _position, _run, _Semantic
from ._loading import _parse_tree


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
    signature = rule_signature(rname)
    if signature is None:
        raise GrammarError(
            f"Unknown rule `{rname}`.",
            text,
            name_tok.line,
            name_tok.column,
            f"Built-in rules: {', '.join(sorted(RULES))}; write your own with "
            "`rule NAME: x -> -x, u -> -u`.",
        )
    lo, hi, summary = signature.min_fields, signature.max_fields, signature.summary
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
        allowed = signature.actions
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
    # pass 1: coordinates and fields, which every other statement resolves names against
    builder, coord_syms = _names_builder(statements, text, coords, fields)
    # pass 2: every other statement, into its list
    found: dict = {k: [] for k in ("lhs", "forbid", "keep", "add", "inputs", "conserved")}
    found.update(ops=None, max_order={}, rules=[])
    for stmt in statements:
        _statement(stmt, builder, text, found)
    rules = found["rules"]
    if any(r.name == s.name for i, r in enumerate(rules) for s in rules[:i]):
        raise GrammarError("A rule is given twice.", text)
    _check_contradictions(found, text)
    return Constraints(
        coords=coord_syms,
        fields=tuple(builder.fields),
        lhs=tuple(found["lhs"]),
        ops=found["ops"],
        max_order=found["max_order"],
        forbid=tuple(found["forbid"]),
        keep=tuple(found["keep"]),
        add=tuple(found["add"]),
        inputs=tuple(found["inputs"]),
        conserved=tuple(found["conserved"]),
        rules=tuple(rules),
        text=text,
    )


def _check_contradictions(found: dict, text: str) -> None:
    """A term both forbidden and kept (or added) cannot be honoured: refuse it, naming both."""
    for other in ("keep", "add"):
        both = [t.short() for t in found[other] if t in found["forbid"]]
        if both:
            names = ", ".join(f"`{n}`" for n in both)
            raise GrammarError(
                f"{names} {'is' if len(both) == 1 else 'are'} both in `forbid:` and in "
                f"`{other}:`; remove {'it' if len(both) == 1 else 'them'} from one of the two.",
                text,
            )


def _names_builder(statements, text: str, coords, fields) -> tuple[_Builder, tuple]:
    """The builder for a spec's names: its ``coords:``/``fields:`` checked against the
    data's (``coords``, ``fields``; None: not known), and the coordinate symbols."""
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
    return _Builder(coord_syms, declared_fields), coord_syms


def _statement(stmt: Tree, builder: _Builder, text: str, found: dict) -> None:
    """One statement of a spec (not ``coords:``/``fields:``) into ``found``."""
    kind = stmt.data

    def terms_of(stmt):
        sub = stmt.children[0]
        exprs = _run(builder, sub, text)
        return [_one_term(e, text, child) for e, child in zip(exprs, sub.children)]

    if kind == "lhs_stmt":
        for term, child in zip(terms_of(stmt), stmt.children[0].children):
            if not term.alpha or len(term.fields) != 1 or term.fields[0] != term.F:
                raise GrammarError(
                    f"Left-hand side `{term.short()}` must be a derivative of one field, "
                    "such as u_t or u_tt.",
                    text,
                    *_position(child),
                )
            if term in found["lhs"]:
                raise GrammarError(
                    f"`{term.short()}` is listed twice in `lhs:`.", text, *_position(child)
                )
            found["lhs"].append(term)
    elif kind in ("forbid_stmt", "keep_stmt", "add_stmt"):
        found[kind[: -len("_stmt")]].extend(terms_of(stmt))
    elif kind == "inputs_stmt":
        _inputs(stmt, builder, text, found["inputs"])
    elif kind == "conserved_stmt":
        _conserved(stmt, builder, text, found["conserved"])
    elif kind == "ops_stmt":
        if found["ops"] is not None:
            raise GrammarError("`ops:` is given twice.", text, *_position(stmt))
        found["ops"] = _run(builder, stmt.children[0], text)
    elif kind == "order_stmt":
        _order(stmt, builder, text, found["max_order"])
    elif kind == "symmetric_stmt":
        found["rules"].extend(_symmetric(stmt, builder, text))
    elif kind == "builtin_rule_stmt":
        found["rules"].append(_builtin_rule(stmt, builder, text))
    elif kind == "rule_stmt":
        found["rules"].append(_rule(stmt, builder, text))


def _symmetric(stmt: Tree, builder: _Builder, text: str) -> list[RuleSpec]:
    """``symmetric: x, y``: one mirror rule ``x -> -x`` (as filter) per space coordinate —
    the data have no preferred direction along it, so terms odd in it are removed. The
    fields are taken as unchanged by the mirror (densities, concentrations, heights)."""
    out = []
    for tok in stmt.children[0].children:
        name = str(tok)
        if name == "t" or name not in builder.coords:
            space = [c for c in builder.coords if c != "t"]
            what = "not t (time has a direction)" if name == "t" else f"`{name}` is not one"
            raise GrammarError(
                f"`symmetric:` takes space coordinates (here: {', '.join(space)}); {what}.",
                text,
                tok.line,
                tok.column,
                "For a velocity along x, which the mirror turns round, write "
                "`rule mirror: x -> -x, u -> -u`.",
            )
        spec = RuleSpec(
            f"symmetric({name})",
            substitutions=((builder.coords[name], -builder.coords[name]),),
            action="filter",
            builtin=False,
        )
        if spec in out:
            raise GrammarError(
                f"`{name}` is listed twice in `symmetric:`.", text, tok.line, tok.column
            )
        out.append(spec)
    return out


def _conserved(stmt: Tree, builder: _Builder, text: str, conserved: list) -> None:
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
    if rule_signature(str(name_tok)) is not None:
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

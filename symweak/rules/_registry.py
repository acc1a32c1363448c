"""The rule registry: every rule the constraint language can name, with its signature (how
many field names it takes, a summary, the actions it accepts). The grammar reads it; a rule
is registered here (:func:`register_rule`) and nowhere else."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import sympy

from .._errors import SymweakError
from ..ir import Term
from ._base import Rule, RuleReport
from ._builtin import U1, Galilean, Isotropic

__all__ = [
    "RULES",
    "RULE_ACTIONS",
    "RuleSignature",
    "apply_rules",
    "register_rule",
    "rule_from_spec",
    "rule_signature",
]

#: what a user rule (``rule NAME: ...``) does with terms that are not invariant
RULE_ACTIONS = ("filter", "augment", "pair")


@dataclass(frozen=True)
class RuleSignature:
    """What the constraint language accepts for a named rule: ``name(f1, ..., fk)`` with
    ``min_fields <= k <= max_fields``, and ``as ACTION`` for ``ACTION`` in ``actions`` (none:
    no ``as`` form)."""

    min_fields: int
    max_fields: int
    summary: str
    actions: tuple[str, ...] = ()


#: rules by the name the constraint grammar uses
RULES: dict = {}
_SIGNATURES: dict[str, RuleSignature] = {}


def register_rule(
    name: str,
    factory,
    min_fields: int | None = None,
    max_fields: int | None = None,
    summary: str = "",
    actions: Sequence[str] | None = None,
) -> None:
    """Make ``name(f1, f2, ...)`` in constraint text build ``factory("f1", "f2", ...)``.

    ``factory`` returns a :class:`Rule`. The signature defaults to what the factory declares
    (``fields = (min, max)``, ``summary``, ``actions``: the built-in rule classes do), else
    1 to 3 field names and no ``as`` form.
    """
    if not callable(factory):
        raise SymweakError(f"register_rule: factory for `{name}` is not callable.")
    lo, hi = getattr(factory, "fields", (1, 3))
    RULES[name] = factory
    _SIGNATURES[name] = RuleSignature(
        int(lo if min_fields is None else min_fields),
        int(hi if max_fields is None else max_fields),
        summary or getattr(factory, "summary", "") or f"user rule {name}",
        tuple(getattr(factory, "actions", ()) if actions is None else actions),
    )


def rule_signature(name: str) -> RuleSignature | None:
    """The registered signature of ``name``, or None when no rule has that name."""
    return _SIGNATURES.get(name)


for _cls in (Galilean, U1, Isotropic):
    register_rule(_cls.rule_name, _cls)


def rule_from_spec(spec) -> Rule:
    """A :class:`Rule` from a parsed :class:`~symweak.grammar.RuleSpec`."""
    if spec.builtin:
        if spec.name not in RULES:
            raise SymweakError(f"Unknown rule `{spec.name}`; known: {', '.join(sorted(RULES))}.")
        if spec.action is not None:
            return RULES[spec.name](*spec.fields, action=spec.action)
        return RULES[spec.name](*spec.fields)
    return Rule(spec.name, spec.mapping(), spec.action or "filter", spec.parameters)


def apply_rules(
    libraries: Mapping[Term, Sequence[Term]],
    rules: Iterable,
    coords: Sequence[sympy.Symbol],
    fields: Sequence[sympy.Expr],
) -> tuple[dict[Term, list[Term]], list[RuleReport]]:
    """Apply ``rules`` in order to per-equation libraries ``{lhs: [terms]}``.

    Returns the new libraries and one :class:`RuleReport` per rule. The inputs are not
    modified.
    """
    libs = {lhs: list(lib) for lhs, lib in libraries.items()}
    reports = []
    for rule in rules:
        if not isinstance(rule, Rule):
            rule = rule_from_spec(rule)
        libs, report = rule.apply(libs, coords, fields)
        reports.append(report)
    return libs, reports

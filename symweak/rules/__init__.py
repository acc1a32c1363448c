"""Invariance and equivariance rules as rewrites of candidate libraries (Galilean, U(1),
user rules)."""

from ._rules import RULES as RULES
from ._rules import U1 as U1
from ._rules import Galilean as Galilean
from ._rules import Isotropic as Isotropic
from ._rules import Rule as Rule
from ._rules import RuleReport as RuleReport
from ._rules import apply_rules as apply_rules
from ._rules import register_rule as register_rule
from ._rules import rule_from_spec as rule_from_spec

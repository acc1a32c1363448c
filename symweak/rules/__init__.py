"""Invariance and equivariance rules as rewrites of candidate libraries (Galilean, U(1),
isotropy, user rules): the transformation machinery (:mod:`._base`), the built-in rules
(:mod:`._builtin`) and the registry the grammar reads (:mod:`._registry`)."""

from ._base import Rule as Rule
from ._base import RuleReport as RuleReport
from ._builtin import U1 as U1
from ._builtin import Galilean as Galilean
from ._builtin import Isotropic as Isotropic
from ._registry import RULE_ACTIONS as RULE_ACTIONS
from ._registry import RULES as RULES
from ._registry import RuleSignature as RuleSignature
from ._registry import apply_rules as apply_rules
from ._registry import register_rule as register_rule
from ._registry import rule_from_spec as rule_from_spec
from ._registry import rule_signature as rule_signature

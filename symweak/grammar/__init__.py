"""Operator sets and the constraint language (``grammar/symweak.lark``)."""

from ..operators import Operator as Operator
from ..operators import OperatorSet as OperatorSet
from ..operators import get_operator as get_operator
from ..operators import known_operators as known_operators
from ..operators import power_operator as power_operator
from ..operators import register_operator as register_operator
from ..operators import registry as registry
from ..operators import unregister_operator as unregister_operator
from ..rules import RULE_ACTIONS as RULE_ACTIONS
from ._parser import CONSTRAINT_ERRORS as CONSTRAINT_ERRORS
from ._parser import EQUATION_ERRORS as EQUATION_ERRORS
from ._parser import EXPR_ERRORS as EXPR_ERRORS
from ._parser import OPSET_ERRORS as OPSET_ERRORS
from ._parser import Constraints as Constraints
from ._parser import RuleSpec as RuleSpec
from ._parser import parse_constraints as parse_constraints
from ._parser import parse_equation as parse_equation
from ._parser import parse_expr as parse_expr
from ._parser import parse_operators as parse_operators
from ._parser import parse_term as parse_term
from ._parser import parse_terms as parse_terms

"""The operator registry (one row per operator); see :mod:`symweak.operators._registry`."""

from ._registry import DOMAINS as DOMAINS
from ._registry import Operator as Operator
from ._registry import OperatorSet as OperatorSet
from ._registry import builtin_rows as builtin_rows
from ._registry import expression_functions as expression_functions
from ._registry import get_operator as get_operator
from ._registry import known_operators as known_operators
from ._registry import power_operator as power_operator
from ._registry import printer_functions as printer_functions
from ._registry import register_operator as register_operator
from ._registry import registry as registry
from ._registry import reserved_names as reserved_names
from ._registry import torch_functions as torch_functions
from ._registry import unregister_operator as unregister_operator

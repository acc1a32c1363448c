"""symweak: discover the PDE that governs a system from sparse, scattered, noisy data.

The public API is what this module exports; implementation modules are private.
"""

from . import sweep as sweep
from ._errors import DataError as DataError
from ._errors import GrammarError as GrammarError
from ._errors import IRError as IRError
from ._errors import SymweakError as SymweakError
from ._version import __version__ as __version__
from .data import Domain as Domain
from .data import Observations as Observations
from .data import load as load
from .discover import Config as Config
from .discover import Discovery as Discovery
from .discover import PDEDiscoverer as PDEDiscoverer
from .discover import discover as discover
from .grammar import Constraints as Constraints
from .grammar import OperatorSet as OperatorSet
from .grammar import parse_constraints as parse_constraints
from .grammar import parse_equation as parse_equation
from .grammar import parse_operators as parse_operators
from .grammar import parse_term as parse_term
from .grammar import register_operator as register_operator
from .ir import Equation as Equation
from .ir import System as System
from .ir import Term as Term

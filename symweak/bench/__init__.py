"""The paper's benchmark systems (solvers, true equations) and metrics."""

from ._systems import SYSTEMS as SYSTEMS
from ._systems import BenchmarkSystem as BenchmarkSystem
from ._systems import cache_dir as cache_dir
from ._systems import generate as generate
from ._systems import get_system as get_system

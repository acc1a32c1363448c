"""The paper's benchmark systems (solvers, true equations) and metrics."""

from ._runner import CLASSIC_FILES as CLASSIC_FILES
from ._runner import classic_observations as classic_observations
from ._runner import format_rows as format_rows
from ._runner import run_case as run_case
from ._systems import SYSTEMS as SYSTEMS
from ._systems import BenchmarkSystem as BenchmarkSystem
from ._systems import cache_dir as cache_dir
from ._systems import generate as generate
from ._systems import get_system as get_system

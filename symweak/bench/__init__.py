"""The paper's benchmark systems (solvers, true equations) and metrics."""

from ._command import add_bench_parser as add_bench_parser
from ._command import bench_command as bench_command
from ._command import zoo_summary as zoo_summary
from ._runner import CLASSIC_FILES as CLASSIC_FILES
from ._runner import classic_observations as classic_observations
from ._runner import coefficient_table as coefficient_table
from ._runner import format_rows as format_rows
from ._runner import run_case as run_case
from ._speed import columns as columns
from ._systems import SYSTEMS as SYSTEMS
from ._systems import BenchmarkSystem as BenchmarkSystem
from ._systems import cache_dir as cache_dir
from ._systems import generate as generate
from ._systems import get_system as get_system

"""The paper's benchmark systems (solvers, true equations) and metrics."""

from ._domains import holed as holed
from ._profile import profile_report as profile_report
from ._runner import CLASSIC_FILES as CLASSIC_FILES
from ._runner import classic_observations as classic_observations
from ._runner import coefficient_table as coefficient_table
from ._runner import format_rows as format_rows
from ._runner import run_case as run_case
from ._speed import columns as columns
from ._speed import speed_report as speed_report
from ._speed import user_data_report as user_data_report
from ._systems import SYSTEMS as SYSTEMS
from ._systems import BenchmarkSystem as BenchmarkSystem
from ._systems import cache_dir as cache_dir
from ._systems import generate as generate
from ._systems import get_system as get_system
from ._units import units_report as units_report
from ._zoo import zoo_cases as zoo_cases
from ._zoo import zoo_summary as zoo_summary

"""Discovery: ``discover()`` → :class:`Problem` → a method (full grid, or the network's
phases) → :class:`Discovery`. Re-exports only; see ``docs/architecture.md``."""

from ._api import METHODS as METHODS
from ._api import PAPER_OPS as PAPER_OPS
from ._api import discover as discover
from ._config import ENTRIES as ENTRIES
from ._config import PAPER_KERNELS as PAPER_KERNELS
from ._config import PRESETS as PRESETS
from ._config import Config as Config
from ._config import options_markdown as options_markdown
from ._config import set_options as set_options
from ._estimator import PDEDiscoverer as PDEDiscoverer
from ._history import History as History
from ._problem import Problem as Problem
from ._result import Discovery as Discovery
from ._settings import STABILITY_THRESHOLD as STABILITY_THRESHOLD
from ._simulate import Simulation as Simulation

__all__ = [
    "ENTRIES",
    "METHODS",
    "PAPER_KERNELS",
    "PAPER_OPS",
    "PRESETS",
    "STABILITY_THRESHOLD",
    "Config",
    "Discovery",
    "History",
    "PDEDiscoverer",
    "Problem",
    "Simulation",
    "discover",
    "options_markdown",
    "set_options",
]

"""Declarative sweeps on Dask distributed, the results store, and reports.

``symweak.sweep.sweep("noise.toml")`` (or ``symweak sweep noise.toml``) expands a TOML spec
into runs with stable keys, runs those not yet in the store on a Dask cluster (local by
default), and writes one SQLite row per run as it finishes; ``report(store)`` (``symweak
sweep report STORE``) prints the recovery table. See docs/benchmarks.md.
"""

import sys
import types

from ._execute import SweepSummary as SweepSummary
from ._execute import execute as execute
from ._execute import sweep as sweep
from ._paper import paper_report as paper_report
from ._paper import paper_spec as paper_spec
from ._report import report as report
from ._report import report_figure as report_figure
from ._report import summarise as summarise
from ._spec import Run as Run
from ._spec import Spec as Spec
from ._spec import SpecError as SpecError
from ._spec import load_spec as load_spec
from ._store import Store as Store


class _CallableModule(types.ModuleType):
    """``symweak.sweep(spec, ...)`` runs a sweep, and ``symweak.sweep.Store`` etc. stay the
    package's names: the package is callable (it calls :func:`sweep`)."""

    def __call__(self, spec, **options) -> SweepSummary:
        return sweep(spec, **options)


sys.modules[__name__].__class__ = _CallableModule

"""Real data shipped with symweak: two scratch assays of Jin et al. (2016).

PC-3 prostate cancer cells scratched at two initial densities (10 000 and 20 000 cells per
well); cell density (cells/µm²) at 38 positions 50 µm apart and 5 times 12 h apart, three
replicates each. The files are those published with EquationLearning.jl (MIT licence,
``assays/LICENSE.EquationLearning.jl``; source in ``assays/SOURCE.md``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from .._errors import DataError
from ._observations import Observations

__all__ = ["ASSAY_CELLS", "assay_file", "scratch_assay"]

#: the initial densities shipped (cells per well) and their files
ASSAY_CELLS = {10_000: "CellDensity_10.csv", 20_000: "CellDensity_20.csv"}


def assay_file(cells: int = 10_000) -> Path:
    """The path of the shipped CSV for ``cells`` per well (10 000 or 20 000)."""
    if cells not in ASSAY_CELLS:
        raise DataError(
            f"No scratch assay with {cells!r} cells per well is shipped; choose one of "
            f"{', '.join(str(c) for c in ASSAY_CELLS)}."
        )
    return Path(str(resources.files("symweak"))) / "data" / "assays" / ASSAY_CELLS[cells]


def scratch_assay(cells: int = 10_000, replicates: bool = True) -> Observations:
    """The scratch assay at ``cells`` per well as observations: t in h, x in µm, u in
    cells/µm². ``replicates=True``: the three measurements of each place and time as
    replicates (570 points); False: their published mean (190 points)."""
    table = np.genfromtxt(assay_file(cells), delimiter=",", names=True)
    t, x = table["Time"], table["Position"]
    if replicates:
        columns = ("Dens1", "Dens2", "Dens3")
        coords = {"t": np.tile(t, 3), "x": np.tile(x, 3)}
        u = np.concatenate([table[c] for c in columns])
    else:
        coords, u = {"t": t, "x": x}, table["AvgDens"]
    meta = {
        "source": f"scratch assay, {cells} cells per well (Jin et al. 2016)",
        "units": {"t": "h", "x": "µm", "u": "cells/µm²"},
    }
    return Observations(coords, {"u": u}, meta=meta)

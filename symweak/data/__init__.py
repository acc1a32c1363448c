"""Observations, their validation, sampling and noise, and file formats."""

from ._axes import Grid as Grid
from ._domain import Domain as Domain
from ._examples import scratch_assay as scratch_assay
from ._io import FORMATS as FORMATS
from ._io import from_xarray as from_xarray
from ._io import load as load
from ._io import observations_from_arrays as observations_from_arrays
from ._io import save as save
from ._observations import Observations as Observations
from ._sampling import add_noise as add_noise
from ._sampling import rms as rms
from ._sampling import sample as sample
from ._validate import check_float32 as check_float32
from ._validate import require_points as require_points

"""Least squares, sequential thresholding and model selection (no torch)."""

from ._sparse import Fit as Fit
from ._sparse import lstsq as lstsq
from ._sparse import mstls as mstls
from ._sparse import stlsq as stlsq

"""Least squares, sequential thresholding and model selection (no torch)."""

from ._complexity import fit_equations as fit_equations
from ._complexity import split_joint as split_joint
from ._complexity import term_complexity as term_complexity
from ._complexity import tied_intervals as tied_intervals
from ._complexity import tied_pareto as tied_pareto
from ._complexity import tied_probabilities as tied_probabilities
from ._sparse import CRITERIA as CRITERIA
from ._sparse import LOG_PENALTY as LOG_PENALTY
from ._sparse import Fit as Fit
from ._sparse import backward_path as backward_path
from ._sparse import best_within as best_within
from ._sparse import family_swaps as family_swaps
from ._sparse import forward_path as forward_path
from ._sparse import lstsq as lstsq
from ._sparse import mstls as mstls
from ._sparse import stlsq as stlsq
from ._sparse import swap_refine as swap_refine
from ._sparse import tls_refit as tls_refit
from ._stability import prefer_polynomials as prefer_polynomials
from ._stability import stability_selection as stability_selection
from ._uncertainty import ParetoPoint as ParetoPoint
from ._uncertainty import bootstrap_intervals as bootstrap_intervals
from ._uncertainty import pareto_front as pareto_front
from ._uncertainty import refit_support as refit_support

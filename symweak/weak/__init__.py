"""Weak form: test functions, their supports, and assembly of b = G ξ."""

from ._assembly import WeakAssembler as WeakAssembler
from ._assembly import trapezoid_weights as trapezoid_weights
from ._supports import ISOTROPY_ASPECT as ISOTROPY_ASPECT
from ._supports import TestFunctionSet as TestFunctionSet
from ._supports import corner_wavenumber as corner_wavenumber
from ._testfunctions import TEST_FUNCTIONS as TEST_FUNCTIONS
from ._testfunctions import Bump as Bump
from ._testfunctions import ExpBump as ExpBump
from ._testfunctions import PolyBump as PolyBump
from ._testfunctions import make_bump as make_bump

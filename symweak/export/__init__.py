"""Export discovered equations: LaTeX, NumPy, a SciPy simulation script, PyTorch and C."""

from ._export import TARGETS as TARGETS
from ._export import Target as Target
from ._export import render as render
from ._export import write as write

"""Export discovered equations: LaTeX, NumPy, a SciPy simulation script, PyTorch and C."""

from ._export import TARGETS as TARGETS
from ._export import Target as Target
from ._export import render as render
from ._export import write as write
from ._persist import read_result as read_result
from ._persist import result_to_dict as result_to_dict
from ._persist import write_result as write_result

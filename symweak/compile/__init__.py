"""SymPy -> torch code generation (trainable constants) and back."""

from ._codegen import CompiledExpressions as CompiledExpressions
from ._codegen import compile_expressions as compile_expressions
from ._codegen import input_name as input_name

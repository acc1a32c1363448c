import math

import numpy as np
import pytest
import sympy
import torch

from symweak import GrammarError, register_operator
from symweak.grammar import (
    get_operator,
    known_operators,
    parse_expr,
    parse_operators,
    registry,
    unregister_operator,
)

a, b = sympy.symbols("a b")

_INPUTS = {
    "real": np.array([-2.0, -0.3, 0.0, 0.7, 1.9]),
    "positive": np.array([0.1, 0.5, 1.0, 2.5, 7.0]),
    "nonzero": np.array([-2.0, -0.3, 0.4, 1.0, 3.0]),
    "unit": np.array([-0.9, -0.3, 0.0, 0.4, 0.95]),
}


@pytest.mark.parametrize("name", sorted(registry))
def test_torch_function_matches_sympy(name):
    op = registry[name]
    xs = _INPUTS[op.domain]
    ys = (_INPUTS["nonzero"] if op.domain != "positive" else _INPUTS["positive"])[::-1].copy()
    if op.arity == 1:
        expr = op.sympy_fn(a)
        expected = np.array([float(expr.subs(a, float(v))) for v in xs])
        got = op.torch_fn(torch.tensor(xs, dtype=torch.float64)).numpy()
    else:
        expr = op.sympy_fn(a, b)
        expected = np.array([float(expr.subs({a: float(p), b: float(q)})) for p, q in zip(xs, ys)])
        got = op.torch_fn(
            torch.tensor(xs, dtype=torch.float64), torch.tensor(ys, dtype=torch.float64)
        ).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_power_operator_any_n():
    op = get_operator("^7")
    assert op.name == "pow7" and op.symbol == "^7" and op(a) == a**7
    assert float(op.torch_fn(torch.tensor(2.0, dtype=torch.float64))) == 128.0


def test_register_user_operator_and_override():
    try:
        register_operator("sinh", 1, sympy.sinh, torch.sinh)
        ops = parse_operators("sinh, *")
        assert ops.names == ("sinh", "mul")
        assert "sinh" in known_operators()
        # overriding a built-in: a clipped exponential
        register_operator("exp", 1, sympy.exp, lambda t: torch.exp(torch.clamp(t, max=10.0)))
        clipped = get_operator("exp").torch_fn(torch.tensor([20.0], dtype=torch.float64))
        assert float(clipped) == pytest.approx(math.exp(10.0))
        # user unary operators are usable as functions in the expression language
        u = sympy.Function("u")(*sympy.symbols("t x"))
        assert parse_expr("sinh(u)") == sympy.sinh(u)
    finally:
        unregister_operator("sinh")
        unregister_operator("exp")
    assert float(
        get_operator("exp").torch_fn(torch.tensor([20.0], dtype=torch.float64))
    ) == pytest.approx(math.exp(20.0))
    with pytest.raises(GrammarError, match="Unknown operator `sinh`"):
        get_operator("sinh")


def test_register_rejects_bad_definitions():
    with pytest.raises(ValueError, match="must be an identifier"):
        register_operator("my op", 1, sympy.sin, torch.sin)
    with pytest.raises(ValueError, match="arity must be 1 or 2"):
        register_operator("tri", 3, sympy.sin, torch.sin)
    with pytest.raises(ValueError, match="domain must be one of"):
        register_operator("f", 1, sympy.sin, torch.sin, domain="complex")
    assert "f" not in registry and "tri" not in registry


def test_a_new_operator_is_one_row_for_grammar_codegen_and_export():
    """asinh registered once: an operator-set entry, a function of the term grammar,
    compiled to torch and printed to NumPy and C from the same row."""
    from symweak.compile import compile_expressions
    from symweak.export import render
    from symweak.grammar import parse_equation, parse_terms
    from symweak.ir import System

    try:
        register_operator(
            "asinh", 1, sympy.asinh, torch.asinh, numpy_name="arcsinh", c_name="asinh"
        )
        assert parse_operators("asinh, *").names == ("asinh", "mul")
        (term,) = parse_terms("d_x(asinh(u))")
        u = sympy.Function("u")(*sympy.symbols("t x"))
        assert sympy.asinh(u) == term.F
        mod = compile_expressions([term.F], [u])
        got = mod(torch.tensor([0.5], dtype=torch.float64))[0, 0].item()
        assert got == pytest.approx(math.asinh(0.5), rel=1e-15)
        system = System([parse_equation("u_t = 0.5*d_x(asinh(u))")])
        assert "numpy.arcsinh(u)" in render(system, "numpy", ["t", "x"])
        assert "asinh(u)" in render(system, "c", ["t", "x"])
    finally:
        unregister_operator("asinh")
    with pytest.raises(GrammarError, match="Unknown operator `asinh`"):
        parse_operators("asinh")


def test_tables_derive_from_the_registry():
    """The grammar's functions, the reserved field names and the torch code generator's
    table are read off the registry rows, not kept apart."""
    from symweak.ir._symbols import RESERVED_NAMES
    from symweak.operators import builtin_rows, expression_functions, torch_functions

    rows = builtin_rows()
    functions = {op.name for op in rows if op.function}
    assert functions == {
        "sin", "cos", "exp", "tanh", "log", "sqrt", "tan", "sinh", "cosh", "abs"
    }  # fmt: skip
    assert set(expression_functions()) == functions
    assert functions | {"id", "d", "D"} == RESERVED_NAMES
    table, user = torch_functions()
    assert table[sympy.asin] == "asin" and table[sympy.Abs] == "abs" and user == {}
    assert known_operators() == [
        "*", "+", "-", "/", "^n", "cos", "exp", "id", "log", "sin", "sqrt", "tanh"
    ]  # fmt: skip

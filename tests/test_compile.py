import numpy as np
import pytest
import sympy
import torch
from hypothesis import given
from hypothesis import strategies as st

from symweak import SymweakError, register_operator
from symweak.compile import compile_expressions
from symweak.grammar import registry, unregister_operator

t, x = sympy.symbols("t x")
U = sympy.Function("u")(t, x)
V = sympy.Function("v")(t, x)

_DOMAINS = {
    "real": (-2.0, 2.0),
    "positive": (0.1, 3.0),
    "nonzero": (0.3, 2.0),
    "unit": (-0.9, 0.9),
}


@pytest.mark.parametrize("name", sorted(registry))
@given(data=st.data())
def test_every_operator_compiles_to_what_sympy_evaluates(name, data):
    op = registry[name]
    lo, hi = _DOMAINS[op.domain]
    vals = data.draw(st.lists(st.floats(lo, hi), min_size=3, max_size=3))
    args = (U,) if op.arity == 1 else (U, V)
    expr = op.sympy_fn(*args)
    mod = compile_expressions([expr], [U, V])
    uu = torch.tensor(vals, dtype=torch.float64)
    vv = torch.tensor(vals[::-1], dtype=torch.float64)
    got = mod(uu, vv)[:, 0].numpy()
    ref = [float(expr.subs({U: a, V: b})) for a, b in zip(vals, vals[::-1])]
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_generated_code_shares_subexpressions_and_has_parameters():
    exprs = [sympy.Float(0.5) * sympy.sin(U * V) + U, sympy.sin(U * V) ** 2]
    mod = compile_expressions(exprs)
    assert mod.source.count("torch.sin") == 1
    assert isinstance(mod.constants, torch.nn.Parameter) and mod.constants.dtype == torch.float64
    assert mod.input_names == ["u", "v"]


def test_round_trip_after_a_gradient_step():
    mod = compile_expressions([sympy.Float(2.0) * U + sympy.Float(0.25) * U**2])
    u = torch.tensor([1.0, 2.0], dtype=torch.float64)
    opt = torch.optim.SGD(mod.parameters(), lr=0.1)
    mod(u).sum().backward()  # d/dc0 = Σu = 3, d/dc1 = Σu² = 5
    opt.step()
    (expr,) = mod.sympy()
    assert expr == sympy.Float(2.0 - 0.3) * U + sympy.Float(0.25 - 0.5) * U**2
    mod2 = compile_expressions([expr])
    torch.testing.assert_close(mod2(u), mod(u).detach())


def test_a_pickled_module_compiles_again_with_its_trained_constants():
    import pickle

    d = sympy.Derivative(U, x)
    mod = compile_expressions([sympy.Float(2.0) * sympy.sin(U) * d, U**2], [U, d])
    with torch.no_grad():
        mod.constants.add_(0.5)  # trained: 2.5, not the 2.0 of its expression
    again = pickle.loads(pickle.dumps(mod))
    assert again.source == mod.source and again.input_names == ["u", "u_x"]
    assert isinstance(again.constants, torch.nn.Parameter)
    u, ux = torch.tensor([0.3, 1.2], dtype=torch.float64), torch.tensor([2.0, -1.0])
    assert torch.equal(again(u, ux), mod(u, ux).detach())
    assert float(again(u, ux).detach()[0, 0]) == pytest.approx(2.5 * np.sin(0.3) * 2.0)
    frozen = compile_expressions([sympy.Float(3.0) * U], trainable=False)
    assert "constants" in dict(pickle.loads(pickle.dumps(frozen)).named_buffers())


def test_exact_float64_round_trip():
    value = 0.1234567890123456789
    mod = compile_expressions([sympy.Float(value) * U])
    assert float(mod.sympy()[0].coeff(U)) == float(sympy.Float(value))


def test_derivatives_are_inputs():
    d = sympy.Derivative(U, x)
    mod = compile_expressions([U * d], [U, d])
    assert mod.input_names == ["u", "u_x"]
    out = mod(torch.tensor([2.0]), torch.tensor([3.0]))
    assert float(out[0, 0]) == 6.0


def test_unknown_function_error_says_how_to_register():
    with pytest.raises(SymweakError, match=r"Register it with symweak.register_operator\('foo'"):
        compile_expressions([sympy.Function("foo")(U)])
    with pytest.raises(SymweakError, match="not inputs"):
        compile_expressions([U * V], [U])


def test_user_operator_overrides():
    sinh = sympy.Function("mysinh")
    try:
        register_operator("mysinh", 1, sinh, lambda a: torch.sinh(a))
        mod = compile_expressions([sinh(U)], [U])
        assert float(mod(torch.tensor([1.0], dtype=torch.float64))[0, 0]) == pytest.approx(
            np.sinh(1.0)
        )
    finally:
        unregister_operator("mysinh")


def test_rows_group_expressions_of_one_form_and_match_the_per_expression_call():
    y = sympy.symbols("y0:8")
    exprs = [
        y[0],
        sympy.sin(y[3]),
        y[1] ** 2,
        sympy.sin(y[1]),
        y[2] * y[5],
        y[4] * y[6],
        y[7] ** 2,
        sympy.exp(y[0]) - y[2],
    ]
    m = compile_expressions(exprs, list(y), trainable=False)
    fn, _, order = m._grouped
    # sin, squares and products are one operation each; the output is put back in order
    assert fn.__code__.co_names.count("sin") == 1
    assert order.tolist() == [0, 1, 3, 2, 5, 6, 4, 7]
    X = torch.randn(8, 5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    expected = torch.movedim(m(*X.unbind(0)), -1, 0)
    assert torch.equal(m.rows(X), expected)
    assert torch.equal(m.columns(torch.movedim(X, 0, -1)), torch.movedim(expected, 0, -1))
    # every operand's rows come from one gather (one zero tensor in the backward pass, not
    # one per operand), and the gradients are the per-expression call's
    assert fn.__code__.co_names.count("index_select") == 1
    weights = torch.randn(8, 5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    grads = []
    for rows in (True, False):
        Xg = X.clone().requires_grad_()
        out = m.rows(Xg) if rows else torch.movedim(m(*Xg.unbind(0)), -1, 0)
        (out * weights).sum().backward()
        grads.append(Xg.grad)
    assert torch.allclose(grads[0], grads[1], rtol=1e-14, atol=1e-14)
    with pytest.raises(SymweakError, match="Expected 8 input rows"):
        m.rows(X[:3])


def test_rows_fall_back_to_one_call_per_expression_with_trainable_constants():
    x, y = sympy.symbols("x y")
    m = compile_expressions([2.5 * x, y], [x, y])
    assert m._grouped is None
    X = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    assert m.rows(X).tolist() == [[2.5, 5.0], [3.0, 4.0]]

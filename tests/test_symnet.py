import pytest
import sympy
import torch

from symweak import SymweakError
from symweak.grammar import parse_operators
from symweak.ir import Term
from symweak.symnet import SymNet, library_from_network, snap_arguments
from symweak.symnet._readback import read_back, taylor_small_arguments

t, x = sympy.symbols("t x")
U = sympy.Function("u")(t, x)
V = sympy.Function("v")(t, x)


def test_shapes_and_soft_masks():
    net = SymNet(
        [U, V], parse_operators("id,^2,sin,*"), nodes_per_op=3, depth=2, counts=(0, 1, 2, 3)
    )
    assert net.width == 12 and net.slots == 3 + 3 + 3 + 6
    out = net(torch.rand(5, 2, dtype=torch.float64))
    assert out.shape == (5, 12)
    # uniform α: node p of a type is kept with weight P(k > p) = (3 - p)/4
    masks = net.soft_masks()
    assert torch.allclose(masks[0, :3], torch.tensor([0.75, 0.5, 0.25], dtype=torch.float64))


def test_mask_arithmetic_follows_alpha():
    net = SymNet([U], parse_operators("id,*"), nodes_per_op=3, depth=1, counts=(0, 1, 2, 3))
    with torch.no_grad():
        net.alpha.zero_()
        net.alpha[0, 0, 2] = 20.0  # id: count 2
        net.alpha[0, 1, 0] = 20.0  # *: count 0
    masks = net.soft_masks()[0]
    assert torch.allclose(masks, torch.tensor([1, 1, 0, 0, 0, 0], dtype=torch.float64), atol=1e-6)
    arch = net.fix_architecture()
    assert arch == {"depth": 1, "layers": [{"id": 2}]}


def test_expressions_of_a_known_network():
    net = SymNet([U], parse_operators("^2,*"), nodes_per_op=1, depth=1, counts=(1,))
    with torch.no_grad():
        net.weights[0].copy_(torch.tensor([[2.0], [1.0], [3.0]], dtype=torch.float64))
        net.biases[0].copy_(torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))
    net.fix_architecture()
    square, product = net.expressions()
    assert sympy.expand(square - (2 * U + 1) ** 2) == 0
    assert sympy.expand(product - 3 * U**2) == 0
    lib = library_from_network([square, product], {0: [(), ((x, 1),)]}, {"u": 1.0})
    assert {t.short() for t in lib} == {"u", "u^2", "u_x", "d_x(u^2)"}
    g = net.graph()
    assert g.nodes[("op", 0, 0)]["op"] == "pow2"
    assert g.edges[("field", "u"), ("slot", 0, 0)]["weight"] == 2.0


def test_large_fields_enter_the_network_divided_by_a_power_of_ten():
    from symweak.symnet._network import field_scales

    assert field_scales([[3e4, 0.5], [-2e4, -0.5]]) == [1e4, 1.0]
    assert field_scales([[2e-4], [-3e-4]]) == [1e-4]
    assert field_scales([[50.0], [-80.0]]) == [1.0]  # inside [0.01, 100]: as given
    net = SymNet(
        [U], parse_operators("^2,*"), nodes_per_op=1, depth=1, counts=(1,), input_scale=[1e4]
    )
    with torch.no_grad():
        net.weights[0].copy_(torch.tensor([[2.0], [1.0], [3.0]], dtype=torch.float64))
        net.biases[0].copy_(torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))
    net.fix_architecture()
    square, product = net.expressions()
    target = sympy.Poly(sympy.expand((2 * U / 10000 + 1) ** 2), U).all_coeffs()
    got = sympy.Poly(sympy.expand(square), U).all_coeffs()
    assert [float(c) for c in got] == pytest.approx([float(c) for c in target], rel=1e-12)
    assert float(sympy.expand(product).coeff(U**2)) == pytest.approx(3e-8, rel=1e-12)
    out = net(torch.tensor([[2e4]], dtype=torch.float64))
    assert out.tolist() == [[25.0, 12.0]]  # (2·2 + 1)², 3·2² on u/1e4 = 2
    with pytest.raises(SymweakError, match="input_scale needs one positive number per field"):
        SymNet([U], parse_operators("*"), input_scale=[0.0])


def test_nested_exp_stays_finite_and_the_search_gets_gradients():
    """exp of exp in three layers: 2 -> e^8 -> e^(2 e^8) overflowed float32 (inf, then NaN
    through the weak form, and discover stopped on a NaN in fix_architecture); the network's
    exp takes its argument up to EXP_CEILING, below which it is exp itself."""
    from symweak.symnet._network import EXP_CEILING

    net = SymNet([U], parse_operators("exp"), nodes_per_op=1, depth=3, counts=(1,),
                 dtype=torch.float32)  # fmt: skip
    with torch.no_grad():
        for w in net.weights:
            w.fill_(4.0)
        net.beta[2] = 10.0  # all three layers
    assert net.fix_architecture() == {"depth": 3, "layers": [{"exp": 1}] * 3}
    u = torch.tensor([[0.5], [2.0]], requires_grad=True)
    out = net(u)
    assert torch.isfinite(out).all()
    assert out[1, 0].item() == pytest.approx(float(torch.exp(torch.tensor(EXP_CEILING))))
    assert out[0, 0].item() == pytest.approx(float(torch.exp(torch.tensor(EXP_CEILING))))
    out.sum().backward()
    assert torch.isfinite(u.grad).all()
    with torch.no_grad():
        net.alpha.fill_(float("nan"))
    with pytest.raises(SymweakError, match="The architecture search diverged: its operator"):
        net.fix_architecture()
    small = SymNet([U], parse_operators("exp"), nodes_per_op=1, depth=1, counts=(1,))
    small.fix_architecture()
    assert small(torch.tensor([[0.3]], dtype=torch.float64)).item() == pytest.approx(
        float(torch.exp(torch.tensor(small.weights[0].item() * 0.3, dtype=torch.float64))),
        rel=1e-12,
    )


def test_a_user_registered_exp_is_the_one_the_network_uses():
    """The network bounds only the built-in exp: an exp the user registered (here one
    clipped at 5) is used as written."""
    import math

    from symweak import register_operator
    from symweak.operators import unregister_operator

    try:
        register_operator("exp", 1, sympy.exp, lambda t: torch.exp(torch.clamp(t, max=5.0)))
        net = SymNet([U], parse_operators("exp"), nodes_per_op=1, depth=1, counts=(1,))
        with torch.no_grad():
            net.weights[0].fill_(1.0)
        net.fix_architecture()
        assert net(torch.tensor([[30.0]], dtype=torch.float64)).item() == pytest.approx(
            math.exp(5.0)
        )
    finally:
        unregister_operator("exp")
    net = SymNet([U], parse_operators("exp"), nodes_per_op=1, depth=1, counts=(1,))
    with torch.no_grad():
        net.weights[0].fill_(1.0)
    net.fix_architecture()
    assert net(torch.tensor([[30.0]], dtype=torch.float64)).item() == pytest.approx(math.exp(20.0))


def test_snapping_and_taylor():
    assert snap_arguments(sympy.sin(sympy.Float(0.98) * U + sympy.Float(0.01))) == sympy.sin(U)
    series = taylor_small_arguments(sympy.sin(sympy.Float(0.1) * U), {"u": 1.0})
    assert not series.has(sympy.sin)
    assert sympy.Poly(series, U).degree() == 3
    kept = taylor_small_arguments(sympy.sin(2 * U), {"u": 1.0})
    assert kept == sympy.sin(2 * U)


def _sympy_route(expr, scale):
    return sympy.expand(snap_arguments(taylor_small_arguments(sympy.expand(expr), scale)))


def _coefficients(expr):
    return {m: float(c) for c, m in (p.as_coeff_Mul() for p in sympy.Add.make_args(expr))}


def test_fast_read_back_equals_the_sympy_route():
    f = sympy.Float
    a = f(0.0658) - f(0.3551) * U
    b = f(0.0756) - f(0.1675) * U * V
    exprs = [
        # a network output: cubes and products of affine maps, a small-argument sine
        # (Taylor-expanded), a large-argument one (kept, its argument snapped)
        f(-0.3276) * a**3
        + f(0.3408) * a * b
        + sympy.sin(f(0.2) * a**2 - f(0.1) * b)
        + f(0.7) * sympy.sin(f(1.98) * U + f(0.013)) * (V + 1) ** 2,
        sympy.cos(f(0.3) * sympy.sin(f(2.02) * V) + f(0.05)) - sympy.tanh(f(0.1) * U) ** 2,
    ]
    scale = {"u": 1.5, "v": 2.0}
    for expr in exprs:
        fast, slow = read_back(expr, scale), _sympy_route(expr, scale)
        cf, cs = _coefficients(fast), _coefficients(slow)
        assert set(cf) == set(cs)
        for m in cs:
            assert cf[m] == pytest.approx(cs[m], rel=1e-12, abs=1e-15)
    assert sympy.sin(2 * U) * V**2 in _coefficients(read_back(exprs[0], scale))
    # exp(a + b) is split by expand before the Taylor step, negative powers are not
    # polynomials: both take the SymPy route, with its result
    for expr in (sympy.exp(f(0.1) + f(0.2) * U) * V, U / (1 + V**2)):
        assert read_back(expr, scale) == _sympy_route(expr, scale)


def test_fixed_before_readout():
    net = SymNet([U], parse_operators("id"))
    with pytest.raises(SymweakError, match="Fix the architecture"):
        net.expressions()
    assert isinstance(Term(U, "x"), Term)


def test_closure_degree_is_capped():
    lib = library_from_network([U**27 + U], {0: [()]}, {"u": 1.0}, max_degree=4)
    assert [t.short() for t in lib] == ["u", "u^2", "u^3", "u^4"]


def test_deep_outputs_are_read_without_expanding_them():
    from symweak.symnet._extract import structural_degree

    f = sympy.Float
    inner = (f(0.31) * U + f(0.12) * V + f(-0.53)) ** 3
    deep = (f(0.7) * (f(0.2) * inner + f(0.9) * U * V) ** 3 * (inner + f(0.5)) + f(0.1)) ** 3
    expr = deep + f(0.4) * sympy.sin(U)
    assert structural_degree(inner) == 3 and structural_degree(expr) == 36
    lib = library_from_network([expr], {0: [(), ((x, 1),)]}, {"u": 1.0, "v": 1.0}, max_degree=2)
    shorts = [term.short() for term in lib]
    assert shorts == [
        "u*v", "u", "u^2", "v", "v^2", "sin(u)",
        "d_x(u*v)", "u_x", "d_x(u^2)", "v_x", "d_x(v^2)", "d_x(sin(u))",
    ]  # fmt: skip


def test_functions_are_also_candidates_at_unit_scale():
    f = sympy.Float
    # a sine whose argument is small on average (rms 0.6) but not everywhere (max 3)
    out = f(1.3) * sympy.sin(f(0.43) * U + f(0.1)) + f(0.2) * U**2
    lib = library_from_network([out], {0: [()]}, {"u": 0.6}, field_max={"u": 3.0})
    shorts = [term.short() for term in lib]
    assert "sin(u)" in shorts and "u^2" in shorts
    # where |u| <= 1 sin u is u - u^3/6 to 1 %: no extra, nearly collinear candidate
    lib = library_from_network([out], {0: [()]}, {"u": 0.6}, field_max={"u": 1.0})
    assert "sin(u)" not in [term.short() for term in lib]
    # and the Taylor reading itself follows the largest magnitude when given
    assert taylor_small_arguments(sympy.sin(f(0.43) * U), {"u": 3.0}).has(sympy.sin)
    assert not taylor_small_arguments(sympy.sin(f(0.43) * U), {"u": 0.6}).has(sympy.sin)


def test_unit_shapes_follow_the_shape_tolerance():
    f = sympy.Float
    out = f(0.8) * sympy.exp(f(-0.68) * U) + f(0.1) * U
    # e^u on |u| <= 1.2 is 3.4 % from 1 + u + u²/2 + u³/6: offered at 1 %, not at 10 %
    noisy = [
        term.short()
        for term in library_from_network([out], {0: [()]}, {"u": 0.5}, field_max={"u": 1.2})
    ]
    clean = [
        term.short()
        for term in library_from_network(
            [out], {0: [()]}, {"u": 0.5}, field_max={"u": 1.2}, shape_tol=0.01
        )
    ]
    assert "exp(u)" not in noisy and "exp(u)" in clean
    assert set(noisy) < set(clean)
    # sin u on |u| <= 1 is 0.9 % from u - u³/6: not offered even at 1 %
    out = f(1.3) * sympy.sin(f(0.43) * U + f(0.1))
    lib = library_from_network([out], {0: [()]}, {"u": 0.6}, field_max={"u": 1.0}, shape_tol=0.01)
    assert "sin(u)" not in [term.short() for term in lib]


def test_long_function_terms_are_not_offered():
    f = sympy.Float
    inner = sympy.sin(f(0.1988) * U - f(0.084))
    nested = sympy.sin(f(0.14) * inner**3 - f(0.28) * inner**2 * sympy.sin(f(0.26) * U) + inner)
    lib = library_from_network(
        [f(0.9) * nested + f(0.5) * sympy.sin(U) * U], {0: [()]}, {"u": 1.0}, field_max={"u": 3.0}
    )
    shorts = [term.short() for term in lib]
    assert "u*sin(u)" in shorts and "sin(u)" in shorts
    assert all(sympy.count_ops(term.F) <= 12 for term in lib), shorts
    # non-simple argument coefficients are kept to 4 digits, not as long fractions
    assert snap_arguments(sympy.sin(f(0.19878345) * U)) == sympy.sin(f(0.1988) * U)


def test_derivative_orders_are_closed_like_the_degree():
    y = sympy.Symbol("y")
    W = sympy.Function("w")(t, x, y)
    lib = library_from_network([W], {0: [((x, 1),), ((y, 2),)]}, {"w": 1.0})
    # w_yy was used, so w_xx and w_xy are candidates too (nothing beyond order 2)
    assert [term.short() for term in lib] == ["w_x", "w_y", "w_xx", "w_xy", "w_yy"]
    # a time derivative is not added where the network used none
    lib = library_from_network([W], {0: [((t, 1), (x, 1))]}, {"w": 1.0})
    assert sorted(term.short() for term in lib) == ["w_t", "w_tx", "w_x", "w_xx"]


def test_closure_counts_the_taylor_degree_of_unexpanded_functions():
    from symweak.symnet._extract import taylor_degree

    f = sympy.Float
    # λ–ω at σ = 0: the network's sine of a large argument (|u|, |v| reach 1) is not
    # expanded; it still stands for its cubic Taylor polynomial, so u²v and uv² are offered
    out = f(61.0) * sympy.sin(f(0.4017) * U - f(0.4235) * V) - f(23.5) * U + f(25.3) * V
    assert taylor_degree(out) == 3
    assert taylor_degree(U**2 * V) == 0
    assert taylor_degree(sympy.sin(U * V)) == 3  # at least cubic, not sextic
    lib = library_from_network([out], {0: [()]}, {"u": 1.0, "v": 1.0}, field_max={"u": 3.0})
    shorts = [term.short() for term in lib]
    assert {"u^3", "u^2*v", "u*v^2", "v^3", "u*v", "u"} <= set(shorts)
    assert "u^4" not in shorts
    # without a function the closure stays at the degree found
    lib = library_from_network([U * V + U], {0: [()]}, {"u": 1.0, "v": 1.0})
    assert [term.short() for term in lib] == ["u*v", "u", "u^2", "v", "v^2"]

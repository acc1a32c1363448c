import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from symweak import Equation, GrammarError, Term
from symweak.grammar import (
    CONSTRAINT_ERRORS,
    EQUATION_ERRORS,
    EXPR_ERRORS,
    OPSET_ERRORS,
    parse_constraints,
    parse_equation,
    parse_expr,
    parse_operators,
    parse_term,
    parse_terms,
)

t, x, y = sympy.symbols("t x y")
U = sympy.Function("u")(t, x)
V = sympy.Function("v")(t, x)


# ----------------------------------------------------------------- operator sets
def test_paper_operator_set():
    ops = parse_operators("id,^2,^3,sin,*")
    assert ops.names == ("id", "pow2", "pow3", "sin", "mul")
    assert [op.symbol for op in ops.unary] == ["id", "^2", "^3", "sin"]
    assert [op.symbol for op in ops.binary] == ["*"]
    assert ops.spec() == "id,^2,^3,sin,*"


def test_all_builtin_operators_parse():
    ops = parse_operators("+, -, *, /, exp, cos, tanh, log, sqrt, ^5, sin, id")
    assert ops.names == (
        "add",
        "sub",
        "mul",
        "div",
        "exp",
        "cos",
        "tanh",
        "log",
        "sqrt",
        "pow5",
        "sin",
        "id",
    )
    a, b = sympy.symbols("a b")
    assert [op(a, b) for op in ops.binary] == [a + b, a - b, a * b, a / b]
    assert ops.operators[9](a) == a**5
    assert "sin" in ops and "*" in ops and "^2" not in ops


def test_spec_round_trip():
    for text in ["+,-,*,sin", "id,^2,^3,sin,*", "/,exp,cos,tanh,log,sqrt,^4"]:
        assert parse_operators(parse_operators(text).spec()).names == parse_operators(text).names


# ----------------------------------------------------------------- syntax errors (tables)
def _cases(table):
    return [(label, bad) for label, bads in table.items() for bad in bads]


@pytest.mark.parametrize("label, bad", _cases(OPSET_ERRORS))
def test_opset_syntax_errors(label, bad):
    with pytest.raises(GrammarError) as info:
        parse_operators(bad)
    assert info.value.reason == label


@pytest.mark.parametrize("label, bad", _cases(EXPR_ERRORS))
def test_expr_syntax_errors(label, bad):
    with pytest.raises(GrammarError) as info:
        parse_expr(bad)
    assert info.value.reason == label


@pytest.mark.parametrize("label, bad", _cases(EQUATION_ERRORS))
def test_equation_syntax_errors(label, bad):
    with pytest.raises(GrammarError) as info:
        parse_equation(bad)
    assert info.value.reason == label


@pytest.mark.parametrize("label, bad", _cases(CONSTRAINT_ERRORS))
def test_constraint_syntax_errors(label, bad):
    with pytest.raises(GrammarError) as info:
        parse_constraints(bad)
    assert info.value.reason == label


def test_error_shows_line_column_and_caret():
    with pytest.raises(GrammarError) as info:
        parse_constraints("lhs: u_t\nops: +,-,sinh\n")
    err = info.value
    assert (err.line, err.column) == (2, 10)
    assert str(err) == (
        "Unknown operator `sinh`. (line 2, column 10)\n"
        "    ops: +,-,sinh\n"
        "             ^\n"
        "Known operators: *, +, -, /, ^n, cos, exp, id, log, sin, sqrt, tanh. "
        "Register your own with symweak.register_operator(name, arity, sympy_fn, torch_fn)."
    )


def test_syntax_error_lists_expected_tokens():
    with pytest.raises(GrammarError) as info:
        parse_operators("sin cos")
    assert info.value.hint == "Expected `,`, the end of the text."
    assert (info.value.line, info.value.column) == (1, 5)


# ----------------------------------------------------------------- semantic errors
SEMANTIC = [
    (parse_operators, "+,foo", "Unknown operator `foo`.", (1, 3)),
    (parse_operators, "sin,*,sin", "Operator `sin` is listed twice.", (1, 7)),
    (
        parse_operators,
        "^1",
        "`^1`: a power operator needs a whole number of at least 2, e.g. `^2`.",
        (1, 2),
    ),
    (parse_expr, "u_q", "`u_q`: `q` is not a coordinate.", (1, 1)),
    (parse_expr, "d_x", "`d_x` needs an argument in parentheses, e.g. d_x(u^2).", (1, 1)),
    (parse_expr, "u_x(v)", "`u_x(...)`: to differentiate an expression write d_x(...).", (1, 1)),
    (parse_expr, "foo(u)", "Unknown function `foo`.", (1, 1)),
    (parse_expr, "sin(u, v)", "`sin` takes 1 argument(s), got 2.", (1, 1)),
    (parse_expr, "u/0", "Division by zero.", (1, 2)),
    (parse_expr, "u*x", "`x` is a coordinate; a term may contain only fields and numbers.", (1, 3)),
    (
        parse_terms,
        "u + u_x",
        "Each entry must be a single term; separate terms with commas instead of `+`.",
        (1, 1),
    ),
    (
        parse_terms,
        "u, u*u_xx",
        "`u*u_xx` is not a single term: its canonical writing is 1/2*d_xx(u^2) + -1*u_x^2; "
        "list those terms instead.",
        (1, 4),
    ),
    (
        parse_constraints,
        "inputs: u, u^2",
        "`inputs:` takes fields and derivatives of one field (u, u_x, u_xx), not `u^2`.",
        (1, 12),
    ),
    (parse_constraints, "fields: u\nkeep: w_xx", "Unknown field `w`.", (2, 7)),
    (parse_constraints, "fields: u\nconserved: w", "Unknown field `w`.", (2, 12)),
    (parse_constraints, "conserved: u, u", "`u` is listed twice in `conserved:`.", (1, 15)),
    (
        parse_constraints,
        "lhs: d_x(u^2)",
        "Left-hand side `d_x(u^2)` must be a derivative of one field, such as u_t or u_tt.",
        (1, 6),
    ),
    (
        parse_constraints,
        "order: q <= 2",
        "`order:` names `q`, which is not a coordinate (t, x).",
        (1, 8),
    ),
    (parse_constraints, "order: x <= 2, x <= 3", "`order:` gives `x` twice.", (1, 16)),
    (parse_constraints, "galileo(u)", "Unknown rule `galileo`.", (1, 1)),
    (
        parse_constraints,
        "u1(u)",
        "`u1` takes 2 field name(s) (U(1) phase equivariance; arguments are the real and "
        "imaginary parts); got 1.",
        (1, 1),
    ),
    (
        parse_constraints,
        "rule p: x -> -x as smash",
        "Unknown rule action `smash`; use one of filter, augment, pair.",
        (1, 20),
    ),
    (parse_constraints, "rule p: x -> -x, x -> x", "Rule `p` transforms `x` twice.", (1, 18)),
    (
        parse_constraints,
        "rule galilean: x -> -x",
        "`galilean` is a built-in rule; choose another name for your rule.",
        (1, 6),
    ),
    (
        parse_constraints,
        "coords: t, xy",
        "Coordinate `xy` must be a single letter (derivatives are written u_xy).",
        (1, 12),
    ),
    (
        parse_constraints,
        "fields: u, sin",
        "`sin` is a reserved name (a function); rename the field.",
        (1, 12),
    ),
    (parse_constraints, "ops: +\nops: -", "`ops:` is given twice.", (2, 1)),
]


@pytest.mark.parametrize("fn, text, message, position", SEMANTIC)
def test_semantic_errors(fn, text, message, position):
    with pytest.raises(GrammarError) as info:
        fn(text)
    if message is not None:
        assert info.value.reason == message
    else:
        assert "has no weak form" in info.value.reason
    assert (info.value.line, info.value.column) == position


def test_grammar_never_evaluates_user_text(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    with pytest.raises(GrammarError):
        parse_expr(payload)
    with pytest.raises(GrammarError):
        parse_constraints(f"keep: {payload}")
    assert not marker.exists()


# ----------------------------------------------------------------- terms and equations
def test_terms_parse_to_ir():
    assert parse_term("d_x(u^2)") == Term(U**2, "x")
    assert parse_term("u_xx") == Term(U, "xx")
    assert parse_term("u*u_x") == Term(U**2, "x")
    assert parse_term("d_x(u**2)") == Term(U**2, "x")
    assert parse_terms("u^3, sin(u), u*v") == [Term(U**3), Term(sympy.sin(U)), Term(U * V)]
    assert sympy.Function("u")(t, x, y) == parse_term("u_yy").F


def test_parse_with_declared_fields_and_coords():
    term = parse_term("omega_xy", coords="txy", fields=["omega"])
    w = sympy.Function("omega")(t, x, y)
    assert term == Term(w, "xy")
    with pytest.raises(GrammarError, match="Unknown field `u`"):
        parse_term("u_x", coords="tx", fields=["omega"])


def test_numbers_are_exact():
    expr = parse_expr("0.1*u + 1e-3*v + 1/3")
    assert expr == sympy.Rational(1, 10) * U + sympy.Rational(1, 1000) * V + sympy.Rational(1, 3)


def test_equation_parses_and_prints_back():
    text = "u_t = -0.5*d_x(u^2) + 0.1*u_xx"
    eq = parse_equation(text)
    assert eq == Equation(Term(U, "t"), {Term(U**2, "x"): -0.5, Term(U, "xx"): 0.1})
    assert eq.short() == text
    assert parse_equation(eq.short()) == eq
    strong = parse_equation("u_t = -u*u_x + 0.1*u_xx")
    assert strong == eq


def test_constraints_full_example():
    c = parse_constraints(
        """
        # NLS split into real and imaginary parts
        coords: t, x
        fields: u, v
        lhs: u_t, v_t
        ops: id, ^2, ^3, *
        order: x <= 4, t <= 1
        forbid: u, d_x(u^3)
        keep: v_xx; u1(u, v)
        rule parity: x -> -x, u -> -u, v -> -v as augment
        rule shift: u -> u + c
        """
    )
    assert c.coords == (t, x)
    assert c.fields == ("u", "v")
    assert c.lhs == (Term(U, "t"), Term(V, "t"))
    assert c.ops.spec() == "id,^2,^3,*"
    assert c.max_order == {"x": 4, "t": 1}
    assert c.forbid == (Term(U), Term(U**3, "x"))
    assert c.keep == (Term(V, "xx"),)
    names = [r.name for r in c.rules]
    assert names == ["u1", "parity", "shift"]
    assert c.rules[0].fields == ("u", "v") and c.rules[0].builtin
    parity = c.rules[1]
    assert parity.action == "augment" and not parity.builtin
    assert parity.mapping() == {x: -x, U: -U, V: -V}
    shift = c.rules[2]
    cc = sympy.Symbol("c")
    assert shift.mapping() == {U: U + cc} and shift.parameters == (cc,)


def test_constraints_infer_fields_and_coords():
    c = parse_constraints("lhs: u_tt\nkeep: u_yy")
    assert [str(s) for s in c.coords] == ["t", "x", "y"]
    assert c.fields == ("u",)
    assert c.lhs[0].orders(c.coords) == (2, 0, 0)


def test_constraints_checked_against_data():
    c = parse_constraints("galilean(u, v)", coords="txy", fields=["u", "v", "omega"])
    assert c.fields == ("u", "v", "omega")
    with pytest.raises(GrammarError, match="which the data does not have"):
        parse_constraints("fields: u, w", fields=["u", "v"])
    with pytest.raises(GrammarError, match="does not match the data's coordinates"):
        parse_constraints("coords: t, x", coords="txy")
    with pytest.raises(GrammarError, match="Unknown field `w`"):
        parse_constraints("forbid: w", fields=["u"])


def test_empty_constraints_are_fine():
    c = parse_constraints("\n# nothing\n;;\n")
    assert c.lhs == () and c.ops is None and c.rules == ()


# ----------------------------------------------------------------- round trips
_fields = [U, V]


@st.composite
def field_exprs(draw, depth=2):
    if depth == 0 or draw(st.booleans()):
        base = draw(st.sampled_from(_fields))
        power = draw(st.integers(1, 3))
        return base**power
    a = draw(field_exprs(depth=depth - 1))
    b = draw(field_exprs(depth=depth - 1))
    kind = draw(st.sampled_from(["add", "mul", "sin", "exp", "sub"]))
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - 2 * b
    if kind == "mul":
        return a * b
    return getattr(sympy, kind)(a)


@given(
    field_exprs(),
    st.sampled_from(["", "x", "xx", "xxx", "t", "tx"]),
    st.sampled_from([1, -1, 3, sympy.Rational(1, 2)]),
)
def test_term_print_parse_round_trip(F, alpha, factor):
    term = Term(factor * F, alpha) if alpha else Term(factor * F)
    parsed = parse_term(term.short())
    assert parsed == term
    assert sympy.expand(parsed.F - term.F) == 0


@given(
    st.lists(
        st.tuples(
            field_exprs(depth=1),
            st.sampled_from(["", "x", "xx", "xxxx"]),
            st.floats(-10, 10).filter(lambda c: abs(c) > 1e-6),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_equation_print_parse_round_trip(items):
    lhs = Term(U, "t")
    rhs = []
    for F, alpha, c in items:
        term = Term(F, alpha) if alpha else Term(F)
        if term == lhs:
            continue
        rhs.append((term, c))
    eq = Equation(lhs, rhs)
    assert parse_equation(eq.short()) == eq

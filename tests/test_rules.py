"""The rule engine on hand-made libraries: what is removed, added, paired; idempotence."""

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import symweak
from symweak import SymweakError, parse_constraints
from symweak.bench import generate
from symweak.grammar import parse_terms
from symweak.rules import U1, Galilean, Rule, apply_rules, register_rule, rule_from_spec

t, x, y = sympy.symbols("t x y")
u1d = sympy.Function("u")(t, x)


def terms(text, coords="t,x", fields=("u",)):
    return parse_terms(text, coords=coords, fields=list(fields))


def shorts(lib):
    return [term.short() for term in lib]


BURGERS_LIB = "u, u^2, u^3, u_x, d_x(u^2), d_x(u^3), u_xx, d_xx(u^2), u_xxx"
(UT,) = terms("u_t")


def test_galilean_burgers_removes_absolute_velocity_terms():
    libs, (report,) = apply_rules({UT: terms(BURGERS_LIB)}, [Galilean("u")], [t, x], [u1d])
    assert shorts(libs[UT]) == ["u_x", "d_x(u^2)", "u_xx", "u_xxx"]
    assert report.removed == {"u_t": ["u", "u^2", "u^3", "d_x(u^3)", "d_xx(u^2)"]}
    assert report.added == {}
    assert str(report) == "galilean(u): u_t: removed u, u^2, u^3, d_x(u^3), d_xx(u^2)"


def test_galilean_adds_the_derived_flux_term():
    libs, (report,) = apply_rules({UT: terms("u_xx")}, [Galilean("u")], [t, x], [u1d])
    assert shorts(libs[UT]) == ["u_xx", "d_x(u^2)"]
    assert report.added == {"u_t": ["d_x(u^2)"]}


def test_galilean_vorticity_from_substitution():
    fields = ("w", "u", "v")
    W, U, V = (sympy.Function(n)(t, x, y) for n in fields)
    (wt,) = terms("w_t", "t,x,y", fields)
    lib = terms(
        "w, u, v, u^2, u*w, w_x, w_yy, u_x, d_x(v*w), d_y(u*w), u*v, d_xy(w)", "t,x,y", fields
    )
    libs, (report,) = apply_rules({wt: lib}, [Galilean("u", "v")], [t, x, y], [W, U, V])
    # w itself is invariant (the vorticity does not change with the frame); u, v are not.
    assert report.removed == {"w_t": ["u", "v", "u^2", "u*w", "d_x(v*w)", "d_y(u*w)", "u*v"]}
    assert report.added == {"w_t": ["d_x(u*w)", "d_y(v*w)"]}
    assert shorts(libs[wt]) == ["w", "w_x", "w_yy", "u_x", "w_xy", "d_x(u*w)", "d_y(v*w)"]


def test_galilean_with_velocities_inside_functions():
    # the frame shift sits inside sin: the infinitesimal image of sin(w - v) is -cos(w - v)·(-1)
    fields = ("w", "u", "v")
    W, U, V = (sympy.Function(n)(t, x, y) for n in fields)
    (wt,) = terms("w_t", "t,x,y", fields)
    lib = [
        symweak.ir.Term(sympy.sin(W), {}),
        symweak.ir.Term(W * sympy.sin(W - V / 2), {}),
        symweak.ir.Term(sympy.sin(U), {x: 1}),
        symweak.ir.Term(sympy.cos(W) ** 2, {y: 2}),
    ]
    libs, (report,) = apply_rules({wt: lib}, [Galilean("u", "v")], [t, x, y], [W, U, V])
    assert report.removed == {"w_t": ["-w*sin(v/2 - w)", "d_x(sin(u))"]}
    assert shorts(libs[wt])[:2] == ["sin(w)", "d_yy(cos(w)^2)"]


def test_galilean_errors():
    with pytest.raises(SymweakError, match="needs a time coordinate `t`"):
        Galilean("u").apply({}, [x], [sympy.Function("u")(x)])
    with pytest.raises(SymweakError, match="lists 2 velocity fields but the data have only 1"):
        Galilean("u", "v").apply({}, [t, x], [u1d, sympy.Function("v")(t, x)])
    with pytest.raises(SymweakError, match="needs the velocity fields"):
        Galilean()


def test_u1_augmentation_pairs_real_and_imaginary_libraries():
    U, V = (sympy.Function(n)(t, x) for n in "uv")
    ut, vt = terms("u_t, v_t", fields="uv")
    libs = {ut: terms("v_xx, u^2*v", fields="uv"), vt: terms("u_xx, u^3", fields="uv")}
    new, (report,) = apply_rules(libs, [U1("u", "v")], [t, x], [U, V])
    # T(u, v) in u_t brings T(-v, u) into v_t, and v_t's T brings T(v, -u) into u_t.
    assert shorts(new[vt]) == ["u_xx", "u^3", "u*v^2"]
    assert shorts(new[ut]) == ["v_xx", "u^2*v", "v^3"]
    assert report.added == {"v_t": ["u*v^2"], "u_t": ["v^3"]}
    again, (report2,) = apply_rules(new, [U1("u", "v")], [t, x], [U, V])
    assert again == new and report2.added == {} and report2.removed == {}
    assert libs[vt] == terms("u_xx, u^3", fields="uv")  # the input is not modified


def test_user_rule_parity_from_grammar():
    cons = parse_constraints("rule parity: x -> -x, u -> -u as filter", coords="t,x", fields=["u"])
    rule = rule_from_spec(cons.rules[0])
    libs, (report,) = apply_rules({UT: terms(BURGERS_LIB)}, [rule], [t, x], [u1d])
    assert shorts(libs[UT]) == ["u", "u^3", "d_x(u^2)", "u_xx"]
    assert report.removed == {"u_t": ["u^2", "u_x", "d_x(u^3)", "d_xx(u^2)", "u_xxx"]}


def test_user_rule_scaling_with_a_parameter():
    # Burgers' scaling x -> a x, t -> a^2 t, u -> u / a keeps the terms of weight -3:
    # its own two, and u^3 (which the scaling alone cannot rule out).
    cons = parse_constraints("rule scaling: x -> a*x, t -> a^2*t, u -> u/a", coords="t,x")
    libs, _ = apply_rules({UT: terms(BURGERS_LIB)}, [rule_from_spec(cons.rules[0])], [t, x], [u1d])
    assert shorts(libs[UT]) == ["u^3", "d_x(u^2)", "u_xx"]


def test_user_augment_rule_equals_u1():
    U, V = (sympy.Function(n)(t, x) for n in "uv")
    ut, vt = terms("u_t, v_t", fields="uv")
    libs = {ut: terms("v_xx, u^2*v", fields="uv"), vt: terms("u_xx", fields="uv")}
    quarter = Rule("quarter", {"u": -V, "v": U}, action="augment")
    a, _ = apply_rules(libs, [quarter], [t, x], [U, V])
    b, _ = apply_rules(libs, [U1("u", "v")], [t, x], [U, V])
    assert a == b


def test_rule_errors():
    with pytest.raises(SymweakError, match="uses the field `q`, which the data do not have"):
        Rule("bad", {"u": sympy.Function("q")(t, x)}).apply({}, [t, x], [u1d])
    with pytest.raises(SymweakError, match="coordinate maps must be affine"):
        Rule("bad", {"x": x**2}).apply({}, [t, x], [u1d])
    with pytest.raises(SymweakError, match="neither a coordinate"):
        Rule("bad", {"y": -y}).apply({}, [t, x], [u1d])
    with pytest.raises(SymweakError, match="no choice of 0 or 1"):
        a = sympy.Symbol("a")
        Rule("bad", {"x": x + a + 2}).apply({UT: terms("u_x")}, [t, x], [u1d])
    with pytest.raises(SymweakError, match="must be 'filter', 'augment' or 'pair'"):
        Rule("bad", {"x": -x}, action="swap")
    with pytest.raises(SymweakError, match="transforms nothing"):
        Rule("bad", {})


def test_register_rule_makes_a_grammar_name():
    register_rule(
        "reflect", lambda f: Rule("reflect", {"x": -x, f: -sympy.Function(f)(t, x)}), 1, 1
    )
    cons = parse_constraints("reflect(u)", coords="t,x", fields=["u"])
    libs, _ = apply_rules({UT: terms("u^2, u_xx")}, cons.rules, [t, x], [u1d])
    assert shorts(libs[UT]) == ["u_xx"]


@given(st.lists(st.sampled_from(terms(BURGERS_LIB)), unique=True, max_size=9))
def test_rules_are_idempotent(lib):
    parity = Rule("parity", {x: -x, u1d: -u1d})
    for rule in (Galilean("u"), parity):
        once, _ = apply_rules({UT: lib}, [rule], [t, x], [u1d])
        twice, (report,) = apply_rules(once, [rule], [t, x], [u1d])
        assert once == twice
        assert report.removed == {} and report.added == {}


def test_discover_applies_constraint_rules_on_the_fast_path():
    obs = generate("burgers", cache=False)
    res = symweak.discover(obs, lhs="u_t", constraints="galilean(u)", progress=False)
    report = res.history.grid.rules[0]
    assert report["rule"] == "galilean(u)"
    assert "u^2" in report["removed"]["u_t"] and "d_x(u^2)" not in report["removed"]["u_t"]
    assert res.short() == "u_t = -0.5*d_x(u^2) + 0.1*u_xx" or res.ir.isclose(
        symweak.parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx"), rtol=1e-6
    )


def test_discover_rejects_bad_rules_before_training():
    obs = generate("burgers", cache=False)
    with pytest.raises(SymweakError, match=r"rules= takes symweak\.rules\.Rule objects, got str"):
        symweak.discover(obs, rules=["galilean(u)"])
    with pytest.raises(SymweakError, match="uses the field `q`"):
        symweak.discover(obs, rules=[Rule("bad", {"u": sympy.Function("q")(t, x)})])


def test_complex_field_given_directly_is_split_with_the_u1_hypothesis(caplog):
    obs = generate("nls", cache=False, split=False)
    with caplog.at_level("WARNING", logger="symweak"):
        res = symweak.discover(obs, lhs="psi_t", progress=False)
    assert (
        "symweak: complex field(s) split into real and imaginary parts (psi = u + i v) with the "
        'U(1) hypothesis; left-hand sides psi_t -> u_t, v_t (constraints="u1(u, v) as '
        'equivariant" imposes the phase symmetry instead)' in caplog.text
    )
    assert res.settings["complex_split"] == {"psi": ["u", "v"]}
    assert res.history.grid.rules[0]["rule"] == "u1(u, v)"
    truth = symweak.System(
        [
            symweak.parse_equation("u_t = -0.5*v_xx - u^2*v - v^3", fields=["u", "v"]),
            symweak.parse_equation("v_t = 0.5*u_xx + u*v^2 + u^3", fields=["u", "v"]),
        ]
    )
    for got, want in zip(res.system, truth):
        assert got.isclose(want, rtol=1e-6)
    # a U(1) rule stated for the pair replaces the hypothesis instead of joining it
    caplog.clear()
    with caplog.at_level("WARNING", logger="symweak"):
        res = symweak.discover(
            obs, lhs="psi_t", constraints="u1(u, v) as equivariant", progress=False
        )
    assert (
        "symweak: complex field(s) split into real and imaginary parts (psi = u + i v); "
        "left-hand sides psi_t -> u_t, v_t\n" in caplog.text
    )
    assert [r["rule"] for r in res.history.grid.rules] == ["u1(u, v) as equivariant"]
    for got, want in zip(res.system, truth):
        assert got.isclose(want, rtol=1e-4)


def test_pair_rule_ties_coefficients_across_equations():
    U, V = (sympy.Function(n)(t, x) for n in "uv")
    ut, vt = terms("u_t, v_t", fields="uv")
    libs = {
        ut: terms("v_xx, u^2*v, v^3", fields="uv"),
        vt: [symweak.Term(2 * U, "xx"), *terms("u*v^2, u^3", fields="uv")],
    }
    quarter = Rule("quarter", {"u": -V, "v": U}, action="pair")
    (tie,) = quarter.ties(libs, [t, x], [U, V])
    assert tie[0] == ut and tie[1] == vt
    # u_t = a v_xx + ... forces v_t = -a u_xx + ...; the stored partner is 2 u_xx, hence -1/2
    assert [(a.short(), b.short(), k) for a, b, k in tie[2]] == [
        ("v_xx", "d_xx(2*u)", -0.5),
        ("u^2*v", "u*v^2", -1.0),
        ("v^3", "u^3", -1.0),
    ]
    with pytest.raises(SymweakError, match="`pair` needs a transformation without parameters"):
        a = sympy.Symbol("a")
        Rule("bad", {"u": a * U}, action="pair").ties({ut: []}, [t, x], [U, V])


def test_fit_equations_solves_tied_equations_jointly():
    import numpy as np

    from symweak.regress import fit_equations, lstsq

    rng = np.random.default_rng(0)
    ut, vt = terms("u_t, v_t", fields="uv")
    lib_u, lib_v = terms("v_xx, v^3", fields="uv"), terms("u_xx, u^3, u", fields="uv")
    Gu, Gv = rng.normal(size=(40, 2)), rng.normal(size=(40, 3))
    bu = Gu @ [0.5, 1.0]
    bv = Gv @ [-0.5, -1.0, 0.25]  # tied: k = -1 for both pairs; u is v_t's own term
    ties = [(ut, vt, [(lib_u[0], lib_v[0], -1.0), (lib_u[1], lib_v[1], -1.0)])]
    out = fit_equations(
        {ut: (lib_u, Gu, bu), vt: (lib_v, Gv, bv)}, ties, lambda G, b, _l: lstsq(G, b)
    )
    assert {k.short(): round(v, 10) for k, v in out[ut][0].items()} == {"v_xx": 0.5, "v^3": 1.0}
    assert {k.short(): round(v, 10) for k, v in out[vt][0].items()} == {
        "u_xx": -0.5,
        "u^3": -1.0,
        "u": 0.25,
    }


@pytest.mark.parametrize(
    "text", ["rule quarter: u -> -v, v -> u as pair", "u1(u, v) as pair", "u1(u, v) as equivariant"]
)
def test_pair_rule_through_discover_gives_equivariant_nls(text):
    obs = generate("nls", cache=False)
    res = symweak.discover(obs, lhs="u_t, v_t", constraints=text, progress=False)
    (eq_u, eq_v) = res.system
    cu = {k.short(): v for k, v in eq_u.coefficients.items()}
    cv = {k.short(): v for k, v in eq_v.coefficients.items()}
    assert cu == pytest.approx({"u^2*v": -1.0, "v^3": -1.0, "v_xx": -0.5}, rel=1e-5)
    # the tie: v_t's coefficients are exactly minus u_t's partners
    assert cv == {"u*v^2": -cu["u^2*v"], "u^3": -cu["v^3"], "u_xx": -cu["v_xx"]}
    assert res.history.grid.rules[0]["ties"][0][:2] == ["u_t", "v_t"]


def test_u1_as_pair_ties_the_mirrored_terms_like_the_quarter_turn():
    U, V = (sympy.Function(n)(t, x) for n in "uv")
    ut, vt = terms("u_t, v_t", fields="uv")
    libs = {ut: terms("v_xx, u^2*v, v^3", fields="uv"), vt: terms("u*v^2, u^3", fields="uv")}
    (spec,) = parse_constraints("u1(u, v) as pair").rules
    assert (spec.name, spec.fields, spec.action) == ("u1", ("u", "v"), "pair")
    rule = rule_from_spec(spec)
    assert isinstance(rule, U1) and rule.action == "pair" and rule.name == "u1(u, v) as pair"
    new, _ = apply_rules(libs, [rule], [t, x], [U, V])
    assert shorts(new[vt]) == ["u*v^2", "u^3", "u_xx"]  # augmented like u1(u, v)
    # a fresh rule from the same spec (as the pipeline builds one for the ties) ties too
    (tie,) = rule_from_spec(spec).ties(new, [t, x], [U, V])
    assert [(a.short(), b.short(), k) for a, b, k in tie[2]] == [
        ("v_xx", "u_xx", -1.0),
        ("u^2*v", "u*v^2", -1.0),
        ("v^3", "u^3", -1.0),
    ]
    # without `as pair` the same rule only augments
    (plain,) = parse_constraints("u1(u, v)").rules
    assert plain.action is None
    assert rule_from_spec(plain).ties(new, [t, x], [U, V]) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("u1(u, v) as filter", "Unknown action `filter` for the built-in rule `u1`"),
        ("galilean(u) as pair", "Unknown action `pair` for the built-in rule `galilean`"),
    ],
)
def test_builtin_rule_action_is_checked(text, message):
    with pytest.raises(symweak.GrammarError, match=message):
        parse_constraints(text)
    with pytest.raises(
        SymweakError, match="u1\\(\\.\\.\\.\\) takes action 'augment', 'pair' or 'equivariant'"
    ):
        U1("u", "v", action="filter")


def test_u1_as_equivariant_keeps_the_terms_every_phase_respects_and_ties_the_parts():
    U, V = (sympy.Function(n)(t, x) for n in "uv")
    ut, vt = terms("u_t, v_t", fields="uv")
    lib = terms("u, v^3, u^2*v, sin(u), u_xx, v_xx, d_x(u*v), u^4", fields="uv")
    (spec,) = parse_constraints("u1(u, v) as equivariant").rules
    rule = rule_from_spec(spec)
    assert rule.name == "u1(u, v) as equivariant"
    new, (report,) = apply_rules({ut: lib, vt: lib}, [rule], [t, x], [U, V])
    # per derivative the library had: re, im and |psi|^2 re, |psi|^2 im (u^4 asks no quintic)
    expected = [
        "u", "v", "(u^2 + v^2)*u", "(u^2 + v^2)*v",
        "u_x", "v_x", "d_x((u^2 + v^2)*u)", "d_x((u^2 + v^2)*v)",
        "u_xx", "v_xx", "d_xx((u^2 + v^2)*u)", "d_xx((u^2 + v^2)*v)",
    ]  # fmt: skip
    assert shorts(new[ut]) == expected and shorts(new[vt]) == expected
    assert report.removed["u_t"] == ["v^3", "u^2*v", "sin(u)", "d_x(u*v)", "u^4"]
    # the two parts are tied as by the quarter turn, sums of monomials included
    (tie,) = rule_from_spec(spec).ties(new, [t, x], [U, V])
    assert [(a.short(), b.short(), k) for a, b, k in tie[2]][:4] == [
        ("u", "v", 1.0),
        ("v", "u", -1.0),
        ("(u^2 + v^2)*u", "(u^2 + v^2)*v", 1.0),
        ("(u^2 + v^2)*v", "(u^2 + v^2)*u", -1.0),
    ]
    assert len(tie[2]) == len(expected)
    # a quintic where the library reaches degree 5; w^2 (another field alone) is not
    # equivariant and leaves u_t
    W = sympy.Function("w")(t, x)
    lib5 = [*terms("u^5, u_xx", fields="uvw"), *terms("w^2", fields="uvw")]
    new5, _ = apply_rules({ut: lib5}, [rule_from_spec(spec)], [t, x], [U, V, W])
    assert shorts(new5[ut]) == [
        "u", "v", "(u^2 + v^2)*u", "(u^2 + v^2)*v", "(u^2 + v^2)^2*u", "(u^2 + v^2)^2*v",
        "u_xx", "v_xx", "d_xx((u^2 + v^2)*u)", "d_xx((u^2 + v^2)*v)",
        "d_xx((u^2 + v^2)^2*u)", "d_xx((u^2 + v^2)^2*v)",
    ]  # fmt: skip
    with pytest.raises(SymweakError, match="uses the field `v`, which the data do not have"):
        U1("u", "v", action="equivariant").apply({UT: terms("u")}, [t, x], [u1d])


def test_u1_as_equivariant_with_a_real_field_beside_psi():
    """Zakharov-type coupling: w·ψ is equivariant, w alone is not (it leaves ψ's equations),
    and w's own equation is invariant (ψ only through |ψ|²)."""
    U, V, W = (sympy.Function(n)(t, x) for n in "uvw")
    ut, vt, wt = terms("u_t, v_t, w_t", fields="uvw")
    lib = terms("u*w, v^3, u_xx, w_xx, u*v, w", fields="uvw")
    rule = U1("u", "v", action="equivariant")
    new, _ = apply_rules({ut: lib, vt: lib, wt: lib}, [rule], [t, x], [U, V, W])
    assert shorts(new[ut]) == [
        "u", "v", "(u^2 + v^2)*u", "(u^2 + v^2)*v",
        "u*w", "v*w", "(u^2 + v^2)*u*w", "(u^2 + v^2)*v*w",
        "u_xx", "v_xx", "d_xx((u^2 + v^2)*u)", "d_xx((u^2 + v^2)*v)",
    ]  # fmt: skip
    assert shorts(new[wt]) == ["w_xx", "w", "u^2 + v^2", "(u^2 + v^2)*w", "d_xx(u^2 + v^2)"]
    # w_t maps onto itself under the quarter turn: only u_t and v_t are tied
    (tie,) = rule.ties(new, [t, x], [U, V, W])
    assert (tie[0], tie[1]) == (ut, vt) and len(tie[2]) == 12


def test_conserved_keeps_only_flux_terms_in_the_named_equations():
    from symweak.discover._library import conservation_form

    cons = parse_constraints("conserved: u", coords="t,x", fields=["u", "v"])
    assert cons.conserved == ("u",)
    ut, vt = terms("u_t, v_t", fields="uv")
    lib = terms("u, v, u_x, d_x(u^2), u_xx, u_x^2, d_xx(u_x^2), u*v", fields="uv")
    out = conservation_form({ut: lib, vt: lib}, cons)
    assert shorts(out[ut]) == ["u_x", "d_x(u^2)", "u_xx", "d_xx(u_x^2)"]
    assert out[vt] == lib  # v is not named
    # through discover: Burgers is a conservation law, and its flux form survives
    obs = generate("burgers", cache=False)
    res = symweak.discover(obs, lhs="u_t", constraints="conserved: u", progress=False)
    assert {t.short() for t in res.system[0].coefficients} == {"d_x(u^2)", "u_xx"}
    library = res.history.grid.library
    assert "u" not in library and "u^2" not in library and "u_xx" in library
    assert all(t.startswith(("u_x", "d_x")) for t in library), library

"""The built-in ``isotropic(u, v)``: the quarter turn of the x-y plane with the velocity
(u, v) turning along, tying terms as a ``pair`` rule (docs/rules.md)."""

import numpy as np
import pytest
import sympy

from symweak import GrammarError, SymweakError
from symweak.grammar import parse_constraints, parse_terms
from symweak.regress import self_tie_groups
from symweak.rules import Isotropic, Rule, rule_from_spec

t, x, y = sympy.symbols("t x y")
FIELDS = ["omega", "u", "v"]
W, U, V = (sympy.Function(n)(t, x, y) for n in FIELDS)


def terms(text):
    return parse_terms(text, coords="t,x,y", fields=FIELDS)


def _ties(rule, lhs, lib):
    return [
        (a.short(), b.short(), [(p.short(), q.short(), f) for p, q, f in pairs])
        for a, b, pairs in rule.ties({e: lib for e in lhs}, [t, x, y], [W, U, V])
    ]


def test_isotropic_ties_as_the_hand_written_quarter_turn():
    (wt,) = terms("omega_t")
    lib = terms("omega_xx, omega_yy, d_x(omega*u), d_y(omega*v), omega_x, omega_y, u_x, v_y")
    spec = parse_constraints("isotropic(u, v)", coords="t,x,y", fields=FIELDS).rules[0]
    built = rule_from_spec(spec)
    assert isinstance(built, Isotropic) and built.action == "pair"
    hand = Rule("rot", {"x": y, "y": -x, "u": V, "v": -U}, action="pair")
    mine = _ties(built, [wt], lib)
    assert mine == _ties(hand, [wt], lib)
    assert mine[0][2][:2] == [("omega_xx", "omega_yy", 1.0), ("d_x(omega*u)", "d_y(omega*v)", 1.0)]
    groups = self_tie_groups(lib, built.ties({wt: lib}, [t, x, y], [W, U, V])[0][2])
    # the Laplacian, the advection and the divergence u_x + v_y each become one column;
    # omega_x -> omega_y -> -omega_x contradicts itself and is left out
    assert [[lib[i].short() for i in idx] for idx, _ in groups] == [
        ["omega_xx", "omega_yy"],
        ["d_x(omega*u)", "d_y(omega*v)"],
        ["u_x", "v_y"],
    ]
    assert all(np.allclose(f, 1.0) for _, f in groups)


def test_isotropic_pairs_the_velocity_equations():
    ut, vt = terms("u_t, v_t")
    lib = terms("u_xx, u_yy, v_xx, v_yy, u, v")
    (tie,) = Isotropic("u", "v").ties({ut: lib, vt: lib}, [t, x, y], [W, U, V])
    # u_t's terms map to v_t's: u_xx -> v_yy, u -> v, v -> -u (u_t -> v_t)
    assert (tie[0].short(), tie[1].short()) == ("u_t", "v_t")
    got = {(p.short(), q.short()): k for p, q, k in tie[2]}
    assert got[("u_xx", "v_yy")] == pytest.approx(1.0)
    assert got[("u", "v")] == pytest.approx(1.0)
    assert got[("v", "u")] == pytest.approx(-1.0)


def test_isotropic_as_filter_drops_terms_the_turn_changes():
    (wt,) = terms("omega_t")
    lib = terms("omega_xx, omega_yy, omega, sin(omega), omega_x, d_x(omega*u), u*v")
    libs, report = Isotropic("u", "v", action="filter").apply({wt: lib}, [t, x, y], [W, U, V])
    # the scalar omega is invariant; every derivative term maps to another term; u*v -> -v*u
    assert [term.short() for term in libs[wt]] == ["omega", "sin(omega)"]
    assert report.removed == {"omega_t": ["omega_xx", "omega_yy", "omega_x", "d_x(omega*u)", "u*v"]}


def test_isotropic_refuses_what_it_cannot_do():
    with pytest.raises(GrammarError, match=r"`isotropic` takes 2 field name\(s\)"):
        parse_constraints("isotropic(u)", coords="t,x,y", fields=FIELDS)
    with pytest.raises(GrammarError, match="Unknown action `equivariant`"):
        parse_constraints("isotropic(u, v) as equivariant", coords="t,x,y", fields=FIELDS)
    with pytest.raises(SymweakError, match="two different velocity fields"):
        Isotropic("u", "u")
    s, X = sympy.symbols("t x")
    u1 = sympy.Function("u")(s, X)
    (ut,) = parse_terms("u_t", coords="t,x", fields=["u", "v"])
    with pytest.raises(SymweakError, match=r"isotropic\(u, v\) turns the plane .* the data have x"):
        Isotropic("u", "v").ties({ut: [ut]}, [s, X], [u1, sympy.Function("v")(s, X)])


def test_an_equation_tied_within_itself_and_to_another_is_refused_before_training(monkeypatch):
    import symweak
    from symweak.discover import network

    rng = np.random.default_rng(0)
    t_, x_, y_ = (rng.uniform(0, 1, 300) for _ in range(3))
    obs = symweak.Observations(
        coords={"t": t_, "x": x_, "y": y_},
        fields={"u": np.sin(x_ + y_ - t_), "v": np.cos(x_ - y_ + t_)},
    )

    def never(*args, **kwargs):  # the check must come first
        raise AssertionError("training started")

    monkeypatch.setattr(network, "run", never)
    with pytest.raises(SymweakError) as err:
        symweak.discover(
            obs,
            lhs=["u_t", "v_t"],
            constraints="u1(u, v) as pair\nrule swap: x -> y, y -> x as pair",
            progress=False,
        )
    assert str(err.value) == (
        "`pair` rules tie an equation both within itself and to another equation (u_t: within "
        "itself by swap, to another equation by u1(u, v) as pair; v_t: within itself by swap, "
        "to another equation by u1(u, v) as pair); fitting both kinds of tie at once is not "
        "supported yet: keep one of the rules as `pair` and give the other as `augment`."
    )
    # each rule alone is accepted by the check (the isotropic turn ties u_t to v_t only)
    from symweak.discover._problem import Problem

    for text in ("u1(u, v) as pair", "rule swap: x -> y, y -> x as pair", "isotropic(u, v)"):
        Problem.build(obs, None, ["u_t", "v_t"], 0, constraints=text)

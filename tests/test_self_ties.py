"""A ``pair`` rule that maps an equation onto itself (a quarter turn or a swap of the plane)
ties terms within that equation: one merged column per group of tied terms."""

import numpy as np
import pytest
import sympy

import symweak
from symweak import SymweakError
from symweak.bench import generate
from symweak.grammar import parse_terms
from symweak.regress import fit_equations, lstsq, self_tie_groups
from symweak.rules import Rule

t, x, y = sympy.symbols("t x y")
FIELDS = ["omega", "u", "v"]


def terms(text, coords="t,x,y", fields=FIELDS):
    return parse_terms(text, coords=coords, fields=list(fields))


def test_quarter_turn_ties_vorticity_terms_within_the_equation():
    W, U, V = (sympy.Function(n)(t, x, y) for n in FIELDS)
    (wt,) = terms("omega_t")
    lib = terms(
        "omega_xx, omega_yy, d_x(omega*u), d_y(omega*v), omega_x, omega_y, d_xy(omega^2), omega"
    )
    rot = Rule("rot", {"x": y, "y": -x, "u": V, "v": -U}, action="pair")
    (tie,) = rot.ties({wt: lib}, [t, x, y], [W, U, V])
    assert tie[0] == wt and tie[1] == wt
    # each tie once; omega is its own image (no tie); omega_x -> omega_y -> -omega_x
    assert [(a.short(), b.short(), k) for a, b, k in tie[2]] == [
        ("omega_xx", "omega_yy", 1.0),
        ("d_x(omega*u)", "d_y(omega*v)", 1.0),
        ("omega_x", "omega_y", 1.0),
        ("omega_y", "omega_x", -1.0),
        ("d_xy(omega^2)", "d_xy(omega^2)", -1.0),
    ]
    groups = self_tie_groups(lib, tie[2])
    # the Laplacian and the advection are merged; omega_x, omega_y and d_xy(omega^2) cannot
    # keep a non-zero coefficient under the turn and are left out; omega stays alone
    assert [([lib[i].short() for i in idx], list(f)) for idx, f in groups] == [
        (["omega_xx", "omega_yy"], [1.0, 1.0]),
        (["d_x(omega*u)", "d_y(omega*v)"], [1.0, 1.0]),
        (["omega"], [1.0]),
    ]


def test_self_tie_groups_factors_and_contradictions():
    lib = terms("u_xx, u_yy, u_x, u_y, u", fields=["u"])
    a, b, c, d, e = lib
    groups = self_tie_groups(lib, [(b, a, -2.0), (c, d, 1.0), (d, c, 1.0), (e, e, 1.0)])
    # (u_yy, u_xx, -2): u_xx's coefficient is -2 times u_yy's; the first term has factor 1
    assert [(list(idx), list(f)) for idx, f in groups] == [
        ([0, 1], [1.0, -0.5]),
        ([2, 3], [1.0, 1.0]),
        ([4], [1.0]),
    ]
    assert [list(idx) for idx, _ in self_tie_groups(lib, [(e, e, -1.0)])] == [[0], [1], [2], [3]]


def test_fit_equations_fits_self_tied_terms_as_one_column():
    rng = np.random.default_rng(1)
    (ut,) = terms("u_t", fields=["u"])
    lib = terms("u_xx, u_yy, u", fields=["u"])
    G = rng.normal(size=(60, 3))
    b = G @ [0.1, 0.1, 0.5] + 0.01 * rng.normal(size=60)
    ties = [(ut, ut, [(lib[0], lib[1], 1.0)])]
    seen = []

    def fit_fn(G, b, names):
        seen.append([t.short() for t in names])
        return lstsq(G, b)

    out = fit_equations({ut: (lib, G, b)}, ties, fit_fn)
    assert seen == [["u_xx", "u"]]  # one merged column for u_xx and u_yy
    rhs, fit = out[ut]
    coef = {k.short(): v for k, v in rhs.items()}
    assert coef["u_xx"] == coef["u_yy"] == pytest.approx(0.1, abs=0.005)
    assert coef["u"] == pytest.approx(0.5, abs=0.005)
    assert len(fit.coef) == 3 and list(fit.support) == [0, 1, 2]
    # an equation tied both to itself and to another equation is refused, with the fix
    (vt,) = terms("v_t", fields=["u", "v"])
    with pytest.raises(SymweakError, match="tied both to another equation and within"):
        fit_equations(
            {ut: (lib, G, b), vt: (lib, G, b)},
            [*ties, (ut, vt, [(lib[2], lib[2], 1.0)])],
            fit_fn,
        )


def test_swap_rule_ties_the_laplacian_of_allen_cahn_2d():
    obs = generate("allen_cahn_2d").add_noise(0.1, seed=0)
    free = symweak.discover(obs, ops="+,-,*", lhs="u_t", progress=False)
    tied = symweak.discover(
        obs, ops="+,-,*", lhs="u_t", constraints="rule swap: x -> y, y -> x as pair", progress=False
    )
    cf = {k.short(): v for k, v in free.system[0].coefficients.items()}
    ct = {k.short(): v for k, v in tied.system[0].coefficients.items()}
    assert set(cf) == set(ct) == {"u", "u^3", "u_xx", "u_yy"}
    assert cf["u_xx"] != cf["u_yy"]
    assert ct["u_xx"] == ct["u_yy"] == pytest.approx(0.05, rel=0.02)
    assert ct["u"] == pytest.approx(0.5, rel=0.02)
    (report,) = tied.history.grid.rules
    assert report["ties"][0][:2] == ["u_t", "u_t"]
    assert ["u_xx", "u_yy", 1.0] in report["ties"][0][2]

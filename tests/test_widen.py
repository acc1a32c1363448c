"""Products of derivatives offered by default when the D^α F(U) fit leaves a clear part of
the left-hand side unexplained (network path)."""

import numpy as np
import pytest

from symweak import Observations
from symweak.discover._problem import Problem
from symweak.discover.network._widen import default_inputs
from symweak.ir import product_library


def _obs(fields, space):
    rng = np.random.default_rng(0)
    coords = {"t": rng.uniform(0, 1, 300), **{c: rng.uniform(0, 1, 300) for c in space}}
    return Observations(coords=coords, fields={f: rng.normal(size=300) for f in fields})


def _problem(fields, space, lhs, constraints=None):
    return Problem.build(_obs(fields, space), "+,-,*", lhs, 0, constraints=constraints)


def test_one_field_in_one_space_dimension_gets_cubic_products_of_u_and_u_x():
    inputs, degree = default_inputs(_problem("u", "x", "u_t"))
    assert [str(g) for g in inputs] == ["u(t, x)", "Derivative(u(t, x), x)"]
    assert degree == 3
    terms = [t.short() for t in product_library(inputs, degree)]
    assert terms[:6] == ["u_x", "d_x(u^2)", "u_x^2", "d_x(u^3)", "u*u_x^2", "u_x^3"]
    assert "d_x(u_x^2)" in terms and len(terms) == 12


def test_two_fields_or_two_space_dimensions_get_quadratic_products():
    inputs, degree = default_inputs(_problem("uv", "x", ["u_t", "v_t"]))
    assert degree == 2 and len(inputs) == 4
    assert len(product_library(inputs, degree)) == 17
    inputs, degree = default_inputs(_problem("w", "xy", "w_t"))
    assert degree == 2 and [str(g) for g in inputs][1:] == [
        "Derivative(w(t, x, y), x)",
        "Derivative(w(t, x, y), y)",
    ]


@pytest.mark.parametrize(
    "fields, space, lhs, constraints",
    [
        ("uvw", "xy", ["w_t"], None),  # 3 fields in 2-D: too many products to offer blind
        ("u", "x", "u_t", "inputs: u, u_x"),  # the user chose the products
    ],
)
def test_no_default_products(fields, space, lhs, constraints):
    assert default_inputs(_problem(fields, space, lhs, constraints)) is None


def _terms(text):
    from symweak.grammar._parser import parse_equation

    return list(parse_equation("u_t = " + text).terms)


def _neighbours(text, fields, degree=4):
    import sympy

    from symweak.discover._library import monomial_neighbours

    t, x = sympy.symbols("t x")
    funcs = [sympy.Function(f)(t, x) for f in fields]
    return [n.short() for n in monomial_neighbours(_terms(text), funcs, degree)]


def test_monomial_neighbours_of_one_field_are_the_powers_next_to_each_term():
    # u gives u^3 (two up: its parity partner) and the constant, u^2 gives u^4; d_xx(u^2)
    # gives d_xx(u^3), d_xx(u^4) and u_xx (held); d_xxxx(u^2) gives u_xxxx; u_x gives
    # d_x(u^2) and d_x(u^3) but no constant (its derivative is 0)
    got = _neighbours("u + u^2 + u_x + u_xx + d_xx(u^2) + d_xxxx(u^2)", "u")
    assert got == [
        "u^3", "1", "u^4", "d_x(u^2)", "d_x(u^3)", "d_xx(u^3)", "d_xx(u^4)", "d_xxxx(u^3)",
        "d_xxxx(u^4)", "u_xxxx",
    ]  # fmt: skip


def test_monomial_neighbours_of_two_fields_step_each_field_and_skip_functions():
    # two up only from a power of one field: v_xx gives d_xx(v^3), u*v no u^3*v
    got = _neighbours("u*v + sin(u) + v_xx", "uv")
    assert got == ["u^2*v", "v", "u*v^2", "u", "d_xx(u*v)", "d_xx(v^2)", "d_xx(v^3)"]


def test_monomial_neighbours_stop_at_the_degree_and_at_terms_already_held():
    assert _neighbours("u^3 + u^2", "u", degree=3) == ["u"]
    assert _neighbours("u^4", "u", degree=4) == ["u^3"]


@pytest.mark.parametrize(
    "name", ["zeldovich", "brusselator", "gardner", "cahn_hilliard", "schnakenberg"]
)
def test_monomial_cases_obey_their_equations(name):
    from symweak.bench import generate
    from symweak.bench._monomials import MONOMIALS
    from symweak.bench._strong import strong_form_fit

    obs = generate(name, cache=False)
    for eq in MONOMIALS[name].true_equations():
        fit = strong_form_fit(obs, eq, {"t": False, "x": True})
        for term, coef in eq.coefficients.items():
            assert fit[term] == pytest.approx(float(coef), rel=0.01), (str(eq.lhs), term.short())


def test_the_neighbours_record_survives_save_and_load():
    from symweak.discover._history import History

    record = {"offered": ["u^3", "1"], "residuals": {"cap": 0.19}, "kept": "widened"}
    assert History.from_dict(History(neighbours=record).to_dict()).neighbours == record
    assert History.from_dict(History().to_dict()).neighbours is None


@pytest.mark.slow
def test_a_power_the_read_back_missed_comes_back_from_the_neighbours():
    # Zeldovich u_t = 0.05 u_xx + u^2 - u^3, 10 % of the grid as point columns, clean: the
    # read-back held u and u^2 (0.61 u - 0.61 u^2, 19 % unexplained); with the neighbours
    # offered, measured 1.000 u^2 - 1.000 u^3 + 0.0500 u_xx, nothing uncertain
    import symweak
    from symweak.bench import columns, generate

    obs = columns(generate("zeldovich").sample(0.1, seed=0), seed=0)
    res = symweak.discover(obs, ops="+,-,*", lhs="u_t", seed=0, progress=False)
    assert res.history.neighbours["kept"] == "widened"
    assert "u^3" in res.history.neighbours["used"]
    coefs = {t.short(): float(c) for t, c in res.ir.coefficients.items()}
    assert set(coefs) == {"u^2", "u^3", "u_xx"}
    assert coefs["u^2"] == pytest.approx(1.0, rel=0.02)
    assert coefs["u^3"] == pytest.approx(-1.0, rel=0.02)
    assert coefs["u_xx"] == pytest.approx(0.05, rel=0.05)
    assert res.verdicts == {"u^2": "determined", "u^3": "determined", "u_xx": "determined"}


@pytest.mark.slow
def test_the_full_grid_offers_the_constant_where_a_feed_term_is_missing():
    # Brusselator u_t = 0.05 u_xx + 1 - 3u + u^2 v from its full grid: without the constant
    # 0.86 u^2 v - 2.46 u + 0.59 v - 0.11 v^2 (1.4 % unexplained); measured with it: exact
    # to 4 digits, 8e-11 unexplained
    import symweak
    from symweak.bench import generate

    res = symweak.discover(generate("brusselator"), ops="+,-,*", lhs=["u_t", "v_t"], seed=0)
    assert res.method == "grid"
    assert res.history.neighbours["kept"] == "widened"
    coefs = res.coefficients["u_t"]
    assert {t.short() for t in res.system[0].coefficients} == {"1", "u^2*v", "u", "u_xx"}
    assert coefs["1"] == pytest.approx(1.0, rel=1e-3)
    assert coefs["u^2*v"] == pytest.approx(1.0, rel=1e-3)
    assert coefs["u"] == pytest.approx(-3.0, rel=1e-3)
    assert res.coefficients["v_t"]["u^2*v"] == pytest.approx(-1.0, rel=1e-3)


def test_the_full_grid_keeps_its_fit_when_it_explains_the_data():
    import symweak
    from symweak.bench import generate

    res = symweak.discover(generate("zeldovich"), ops="+,-,*", lhs="u_t", seed=0)
    assert res.method == "grid" and res.history.neighbours is None
    assert {t.short() for t in res.ir.coefficients} == {"u^2", "u^3", "u_xx"}


def test_the_neighbours_are_offered_below_the_products_floor():
    # Schnakenberg clean left 2.99 % on one variant without its feed and u^2 v: the
    # neighbours (a few terms, probed first) are offered from 2 %, the products from 3 %
    from types import SimpleNamespace

    from symweak.discover._settings import NEIGHBOURS_FLOOR, WIDEN_FLOOR
    from symweak.discover.network._widen import _first_residuals

    residuals = {"cap&axis": 0.040, "axis": 0.0299}
    final = SimpleNamespace(residuals=residuals)
    state = SimpleNamespace(history=SimpleNamespace(phases={"final": final}), interrupted=False)
    assert (NEIGHBOURS_FLOOR, WIDEN_FLOOR) == (0.02, 0.03)
    assert _first_residuals(state, NEIGHBOURS_FLOOR) == residuals
    assert _first_residuals(state) == {}
    final.residuals = {"cap&axis": 0.040, "axis": 0.0199}
    assert _first_residuals(state, NEIGHBOURS_FLOOR) == {}
    state.interrupted, final.residuals = True, residuals
    assert _first_residuals(state, NEIGHBOURS_FLOOR) == {}


@pytest.mark.slow
def test_feeds_and_a_cubic_come_back_from_a_first_fit_that_left_three_percent():
    # Schnakenberg, 10 % of the grid as point columns, clean: the first fit (u v, u, u^2,
    # v; 2.99 % unexplained on one variant) is below the products' floor but not the
    # neighbours'; measured 0.1015 + 0.9998 u^2 v - 1.001 u and 0.9008 - 1.001 u^2 v +
    # 0.1004 v_xx (u_t's diffusion 0.01 u_xx is about 1 % of u_t and is not found)
    import symweak
    from symweak.bench import columns, generate

    obs = columns(generate("schnakenberg").sample(0.1, seed=0), seed=0)
    res = symweak.discover(obs, ops="+,-,*", lhs=["u_t", "v_t"], seed=0, progress=False)
    assert res.history.neighbours["kept"] == "widened"
    assert res.history.neighbours["used"] == ["1", "u^2*v"]
    got = {
        e.lhs.short(): {t.short(): float(c) for t, c in e.coefficients.items()} for e in res.system
    }
    assert set(got["u_t"]) == {"1", "u", "u^2*v"}
    assert set(got["v_t"]) == {"1", "u^2*v", "v_xx"}
    want = {
        "u_t": {"1": 0.1, "u": -1.0, "u^2*v": 1.0},
        "v_t": {"1": 0.9, "u^2*v": -1.0, "v_xx": 0.1},
    }
    for lhs, terms in want.items():
        for term, value in terms.items():
            assert got[lhs][term] == pytest.approx(value, rel=0.03), (lhs, term)

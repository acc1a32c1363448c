import json

import numpy as np
import pytest
import sympy

import symweak
from symweak import Discovery, SymweakError
from symweak.bench import SYSTEMS, generate
from symweak.bench.metrics import score, score_system

t, x = sympy.symbols("t x")
U = sympy.Function("u")(t, x)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="module")
def burgers():
    return generate("burgers", cache=False)


def test_full_grid_burgers_contract(burgers):
    res = symweak.discover(burgers, ops="+,-,*,sin", lhs="u_t", seed=0)
    eq = res.equation
    assert isinstance(eq, sympy.Eq)
    assert eq.lhs == sympy.Derivative(U, t)
    coeffs = res.coefficients
    assert set(coeffs) == {sympy.Derivative(U**2, x), sympy.Derivative(U, (x, 2))}
    assert coeffs[sympy.Derivative(U**2, x)] == pytest.approx(-0.5, rel=1e-6)
    assert coeffs[sympy.Derivative(U, (x, 2))] == pytest.approx(0.1, rel=1e-6)
    strong = sympy.expand(eq.rhs.doit())
    assert strong.coeff(U * sympy.Derivative(U, x)) == pytest.approx(-1.0, rel=1e-6)
    assert (
        res.latex() == r"\partial_{t} u = -0.5 \partial_{x}\left(u^{2}\right) + 0.1 \partial_{xx} u"
    )
    assert res.method == "grid" and res.seed == 0


def test_full_grid_burgers_with_time_in_hundredths(burgers):
    # the same Burgers data with time in hundredths, then thousandths: each coefficient 100
    # (1 000) times larger. The paper's radius η·L_min on every axis made the x supports a
    # few grid points wide and discover stopped with an error; beyond an aspect of 8 the
    # long axis gets η·L_x/8, the same supports in both units.
    grid = burgers.grid

    def fit(scale):
        fast = symweak.Observations.from_grid(
            burgers.to_grid("u"), t=np.asarray(grid.axes["t"]) * scale, x=grid.axes["x"]
        )
        return symweak.discover(fast, ops="+,-,*,sin", lhs="u_t", seed=0).coefficients

    a, b = fit(0.01), fit(0.001)
    flux, diffusion = sympy.Derivative(U**2, x), sympy.Derivative(U, (x, 2))
    assert set(a) == set(b) == {flux, diffusion}
    assert a[flux] == pytest.approx(-50.0, rel=1e-3)
    assert a[diffusion] == pytest.approx(10.0, rel=1e-3)
    for term, value in a.items():
        assert b[term] == pytest.approx(10 * value, rel=1e-6)


def test_noisy_burgers_structure_and_determinism(burgers):
    noisy = burgers.add_noise(0.2, seed=1)
    a = symweak.discover(noisy, seed=3)
    b = symweak.discover(noisy, seed=3)
    assert a.ir == b.ir
    s = score(a.ir, SYSTEMS["burgers"].true_equation())
    assert s.tpr == 1.0 and s.e_inf < 0.05


def test_system_nls_returns_equations_per_lhs():
    obs = generate("nls")
    res = symweak.discover(obs, lhs="u_t, v_t", seed=0)
    assert isinstance(res.equation, list) and len(res.equation) == 2
    scores = score_system(res.system, SYSTEMS["nls"].true_equations())
    assert [s.tpr for s in scores] == [1.0, 1.0]
    assert max(s.e_inf for s in scores) < 1e-5
    v = sympy.Function("v")(t, x)
    assert set(res.coefficients) == {sympy.Derivative(U, t), sympy.Derivative(v, t)}
    # the full-grid path says what the data determine, one mapping per left-hand side
    assert res.verdicts == {
        "u_t": {"u^2*v": "determined", "v^3": "determined", "v_xx": "determined"},
        "v_t": {"u*v^2": "determined", "u^3": "determined", "u_xx": "determined"},
    }
    assert set(res.alternatives) == {"u_t", "v_t"} and res.detection_floor == {}
    assert [a.equation for a in res.alternatives["v_t"]] == [res.system[1]]
    assert set(res.uncertainty["u_t"]) == {"u^2*v", "v^3", "v_xx"}
    # clean data: each interval reaches 2 % of its coefficient either side, no less
    for term in res.uncertainty["u_t"].values():
        c, (lo, hi) = term["coefficient"], term["interval"]
        assert lo <= c - 0.0199 * abs(c) and hi >= c + 0.0199 * abs(c)


def test_constraints_forbid_keep_add(burgers):
    res = symweak.discover(burgers, constraints="forbid: u_xx\nkeep: u^3\nadd: sin(u)")
    terms = {t.short() for t in res.ir.terms}
    assert "u_xx" not in terms and "u^3" in terms
    assert "sin(u)" in res.history.grid.library
    with pytest.raises(symweak.GrammarError, match="Unknown field `w`"):
        symweak.discover(burgers, constraints="forbid: w")


def test_save_and_load_reproduce_the_equation(tmp_path, burgers):
    res = symweak.discover(burgers, seed=0)
    path = tmp_path / "run.json"
    res.save(path)
    back = Discovery.load(path)
    assert back.ir == res.ir
    assert back.coefficients == res.coefficients  # exact float64 round trip
    assert back.settings["n_tests"] == 1000 and back.seed == 0
    data = json.loads(path.read_text())
    assert data["symweak_version"] == symweak.__version__
    path.write_text("{not json")
    with pytest.raises(SymweakError, match="not valid JSON"):
        Discovery.load(path)
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(SymweakError, match="missing format marker"):
        Discovery.load(path)


def test_bad_requests_fail_before_training(burgers):
    with pytest.raises(
        SymweakError, match="lhs `d_x\\(u\\^2\\)` must be a derivative of one field"
    ):
        symweak.discover(burgers, lhs="d_x(u^2)")
    with pytest.raises(symweak.GrammarError, match="Unknown field `w`"):
        symweak.discover(burgers, lhs="w_t")
    with pytest.raises(symweak.GrammarError, match="Unknown operator `foo`"):
        symweak.discover(burgers, ops="+,foo")
    with pytest.raises(symweak.DataError, match="discover\\(\\) takes Observations"):
        symweak.discover(np.zeros(3))
    with pytest.raises(SymweakError, match="seed must be an integer"):
        symweak.discover(burgers, seed=0.5)
    with pytest.raises(SymweakError, match="method must be"):
        symweak.discover(burgers, method="magic")
    with pytest.raises(
        SymweakError,
        match=r"seed must be a non-negative integer below 2\*\*63, got -3; use e.g. seed=3",
    ):
        symweak.discover(burgers, seed=-3)
    with pytest.raises(
        SymweakError,
        match=r"lhs `u_x` must be a time derivative of one field, such as u_t or u_tt",
    ):
        symweak.discover(burgers, lhs="u_x")
    with pytest.raises(SymweakError, match=r"lhs `u_tx` must be a time derivative"):
        symweak.discover(burgers, constraints="lhs: u_tx")


def test_data_without_dynamics_is_refused():
    t = np.linspace(0, 1, 11)
    x = np.linspace(0, 1, 16)
    flat = symweak.Observations.from_grid(np.full((11, 16), 0.5), t=t, x=x)
    with pytest.raises(
        symweak.DataError,
        match=r"Field 'u' is constant \(every value is 0.5\): there is no dynamics to identify "
        r"for `u_t`",
    ):
        symweak.discover(flat, lhs="u_t")
    still = symweak.Observations.from_grid(np.tile(np.sin(x), (11, 1)), t=t, x=x)
    with pytest.raises(
        symweak.DataError,
        match=r"Field 'u' does not change in time \(each place keeps one value at every time\)",
    ):
        symweak.discover(still, lhs="u_t")
    # the same as point columns in another order, a third of the points left out: the
    # lattice is found and the same check applies before any training
    part = still.sample(0.67, seed=1)
    order = np.random.default_rng(0).permutation(len(part))
    cols = symweak.Observations(
        coords={k: v[order] for k, v in part.coords.items()}, fields={"u": part.fields["u"][order]}
    )
    assert cols.grid is not None and not cols.is_full_grid
    with pytest.raises(symweak.DataError, match=r"does not change in time"):
        symweak.discover(cols, lhs="u_t", ops="+,-,*")


def test_predict_without_surrogate_explains(burgers):
    res = symweak.discover(burgers)
    with pytest.raises(SymweakError, match="no surrogate"):
        res.predict(t=np.zeros(2), x=np.zeros(2))


def test_second_order_time_2d_wave_small():
    obs = generate("wave", nt=50, nx=32, ny=32, T=5.0)
    res = symweak.discover(obs, lhs="u_tt", degree=2, max_order=2, n_tests=400)
    s = score(res.ir, SYSTEMS["wave"].true_equation())
    assert s.tpr == 1.0 and s.e_inf < 1e-3


def test_people_read_four_digits_files_and_code_keep_all(tmp_path, burgers):
    res = symweak.discover(burgers.add_noise(0.1, seed=0), lhs="u_t", seed=0, progress=False)
    full = res.short()
    # the full text reads back as the same float64 coefficients
    assert symweak.parse_equation(full).coefficients == res.ir.coefficients
    assert str(res) == "u_t = -0.5014*d_x(u^2) + 0.09836*u_xx"
    assert repr(res) == "<Discovery grid: u_t = -0.5014*d_x(u^2) + 0.09836*u_xx>"
    res.digits = 6
    assert str(res) == "u_t = -0.501437*d_x(u^2) + 0.0983621*u_xx"
    res.save(tmp_path / "run.json")
    assert Discovery.load(tmp_path / "run.json").short() == full
    (coef,) = [c for t, c in res.ir.coefficients.items() if t.short() == "d_x(u^2)"]
    assert repr(coef) in res.to_code("numpy")

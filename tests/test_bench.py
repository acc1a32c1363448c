from pathlib import Path

import numpy as np
import pytest

import symweak
from symweak import Equation, System, Term, parse_equation
from symweak.bench import SYSTEMS, generate, get_system
from symweak.bench._strong import fd_weights, grid_derivative, strong_form_fit
from symweak.bench.metrics import reconstruction_mse, score, score_system

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"

# Small versions keep the default suite fast; the full-size runs are `symweak bench data`.
SMALL = {
    "burgers": {},
    "kdv": {},
    "ks": {},
    "chafee_infante": {},
    "nls": {},
    "wave": {},
    "sine_gordon": {"nx": 101, "ny": 33, "nt": 40},
    "navier_stokes": {"nx": 96, "ny": 48, "nt": 41, "T": 8.0},
}


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_generator_obeys_its_equation_within_1_percent(name):
    system = SYSTEMS[name]
    obs = generate(name, **SMALL[name])
    assert obs.is_full_grid and obs.coord_names == system.coords
    assert set(system.fields) <= set(obs.field_names)
    periodic = {c: c in system.periodic for c in system.coords}
    for eq in system.true_equations():
        fit = strong_form_fit(obs, eq, periodic)
        for term, coef in eq.coefficients.items():
            assert fit[term] == pytest.approx(coef, rel=0.01), (name, term.short(), fit[term])


def test_generation_is_cached_and_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path))
    a = generate("burgers", nt=11)
    files = list(tmp_path.glob("burgers-*.npz"))
    assert len(files) == 1
    b = generate("burgers", nt=11)
    np.testing.assert_array_equal(a.fields["u"], b.fields["u"])
    c = generate("burgers", nt=11, cache=False)
    np.testing.assert_array_equal(a.fields["u"], c.fields["u"])


def test_system_metadata():
    assert get_system("NS").name == "navier_stokes" and get_system("ci").name == "chafee_infante"
    with pytest.raises(symweak.DataError, match="Unknown benchmark system 'heat'"):
        get_system("heat")
    assert SYSTEMS["burgers"].true_equation() == parse_equation("u_t = -u*u_x + 0.1*u_xx")
    nls = SYSTEMS["nls"].true_equations()
    assert isinstance(nls, System) and len(nls) == 2
    assert SYSTEMS["wave"].true_equation().lhs == Term(SYSTEMS["wave"].true_equation().lhs.F, "tt")


@pytest.mark.skipif(not (SHARED / "burgers.mat").exists(), reason="../shared/data not present")
@pytest.mark.parametrize(
    "name, file, tol", [("burgers", "burgers.mat", 1e-6), ("kdv", "kdv.mat", 2e-4)]
)
def test_matches_classic_dataset(name, file, tol):
    ours = generate(name)
    ref = symweak.load(SHARED / file)
    np.testing.assert_allclose(ours.coords["x"], ref.coords["x"], atol=1e-12)
    assert np.abs(ours.to_grid("u") - ref.to_grid("u")).max() < tol


@pytest.mark.skipif(not (SHARED / "nls.mat").exists(), reason="../shared/data not present")
def test_nls_matches_classic_dataset_every_second_point():
    ours = generate("nls", split=False)
    ref = symweak.load(SHARED / "nls.mat")
    assert np.abs(ours.to_grid("psi") - ref.to_grid("u")[::2, ::2]).max() < 1e-3


# ----------------------------------------------------------------- numerics
def test_fd_weights_reproduce_classic_stencils():
    np.testing.assert_allclose(fd_weights(1, [-1, 0, 1]), [-0.5, 0.0, 0.5])
    np.testing.assert_allclose(fd_weights(2, [-1, 0, 1]), [1.0, -2.0, 1.0])
    np.testing.assert_allclose(
        fd_weights(2, [-2, -1, 0, 1, 2]), np.array([-1, 16, -30, 16, -1]) / 12
    )


def test_grid_derivative_spectral_and_fd():
    x = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    f = np.sin(3 * x)
    np.testing.assert_allclose(grid_derivative(f, 0, 2, x[1] - x[0], True), -9 * f, atol=1e-10)
    xs = np.linspace(0, 1, 201)
    g = grid_derivative(np.exp(xs), 0, 3, xs[1] - xs[0], False)
    inner = np.isfinite(g)
    assert inner.sum() == 201 - 2 * 4
    np.testing.assert_allclose(g[inner], np.exp(xs)[inner], rtol=1e-7)


# ----------------------------------------------------------------- metrics
TRUE = parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx")


def test_metrics_perfect_and_equivalent_forms():
    s = score(parse_equation("u_t = -u*u_x + 0.1*u_xx"), TRUE)
    assert (s.tpr, s.e_inf, s.e_2) == (1.0, 0.0, 0.0)


def test_metrics_coefficient_errors():
    s = score(parse_equation("u_t = -0.4722*d_x(u^2) + 0.1059*u_xx"), TRUE)
    assert s.tpr == 1.0
    assert s.e_inf == pytest.approx(0.059, rel=1e-9)  # |0.1059-0.1|/0.1, as the paper's table
    assert s.e_2 == pytest.approx(np.hypot(0.0278, 0.0059) / np.hypot(0.5, 0.1), rel=1e-9)


def test_metrics_missing_extra_and_sign_error():
    missing = score(parse_equation("u_t = -0.5*d_x(u^2)"), TRUE)
    assert missing.tpr == 0.5 and missing.e_inf == 1.0 and missing.false_negatives == ("u_xx",)
    extra = score(parse_equation("u_t = -0.5*d_x(u^2) + 0.1*u_xx + 0.2*u^3"), TRUE)
    assert extra.tpr == pytest.approx(2 / 3) and extra.false_positives == ("u^3",)
    assert extra.e_inf == 0.0 and extra.e_2 == pytest.approx(0.2 / np.hypot(0.5, 0.1))
    sign = score(parse_equation("u_t = 0.5*d_x(u^2) + 0.1*u_xx"), TRUE)
    assert sign.tpr == 1.0 and sign.e_inf == pytest.approx(2.0)


def test_score_system_matches_by_lhs_and_mse():
    truth = SYSTEMS["nls"].true_equations()
    found = System([truth[1], truth[0]])
    assert [s.tpr for s in score_system(found, truth)] == [1.0, 1.0]
    half = score_system(System([truth[0]]), truth)
    assert half[1].tpr == 0.0
    mse = reconstruction_mse({"u": np.array([1.0, 2.0])}, {"u": np.array([1.0, 4.0])})
    assert mse == {"u": 2.0}
    with pytest.raises(ValueError, match="Left-hand sides differ"):
        score(Equation(Term(truth[1].lhs.F, "t"), {}), TRUE)


@pytest.mark.parametrize("case", ["heat", "airy", "burgers"])
def test_unit_cases_obey_their_equations(case):
    from symweak.bench._units import UNIT_CASES

    sim = UNIT_CASES[case].generator()
    obs = symweak.Observations.from_grid(sim["fields"]["u"], t=sim["t"], x=sim["x"])
    eq = parse_equation(UNIT_CASES[case].equation)
    fit = strong_form_fit(obs, eq, {"t": False, "x": True})
    for term, value in eq.coefficients.items():
        assert fit[term] == pytest.approx(float(value), rel=0.01), (case, term.short())


def test_unit_variants_change_units_and_layout_as_stated():
    from symweak.bench._units import UNIT_CASES, VARIANTS, expected_equation, unit_case_data

    assert expected_equation("burgers", "time in hundredths").short() == (
        "u_t = -50*d_x(u^2) + 2*u_xx"
    )
    assert expected_equation("burgers", "field x 1e4").short() == (
        "u_t = -5e-05*d_x(u^2) + 0.02*u_xx"
    )
    assert expected_equation("burgers", "field + 300").short() == (
        "u_t = 300*u_x - 0.5*d_x(u^2) + 0.02*u_xx"
    )
    assert expected_equation("heat", "field + 300").short() == "u_t = 1.5*u_xx"
    base = unit_case_data("heat", "as simulated")
    assert len(base) == 2586 and base.grid is not None and not base.is_full_grid
    fast = unit_case_data("heat", "time in hundredths")
    np.testing.assert_allclose(fast.coords["t"], base.coords["t"] / 100)
    np.testing.assert_array_equal(fast.fields["u"], base.fields["u"])
    big = unit_case_data("heat", "field x 1e4")
    np.testing.assert_allclose(big.fields["u"], 1e4 * base.fields["u"])
    kelvin = unit_case_data("heat", "field + 300")
    np.testing.assert_allclose(kelvin.fields["u"], base.fields["u"] + 300)
    snaps = unit_case_data("heat", "12 snapshots")
    assert snaps.is_full_grid and len(np.unique(snaps.coords["t"])) == 12 and len(snaps) == 3072
    sensors = unit_case_data("airy", "24 sensors")
    assert len(np.unique(sensors.coords["x"])) == 24 and len(sensors) == 24 * 101
    noisy = unit_case_data("heat", "as simulated", noise=0.2)
    spread = np.std(noisy.fields["u"] - base.fields["u"])
    rms = np.sqrt(np.mean(base.fields["u"] ** 2))  # add_noise: σ × the samples' RMS
    assert 0.18 < spread / rms < 0.22
    assert UNIT_CASES["heat"].equation == "u_t = 1.5*u_xx"
    assert set(VARIANTS) >= {"as simulated", "12 snapshots", "24 sensors"}


def test_units_report_names_an_unknown_case_before_running():
    from symweak import SymweakError
    from symweak.bench._units import units_report

    message = r"Unknown units case or variant \['heta'\]; known: heat, airy, burgers\."
    with pytest.raises(SymweakError, match=message):
        next(units_report(cases=["heta"]))


def test_profile_counts_top_level_operations_in_their_innermost_phase():
    """Ranges named symweak:...; an aten op called by another is not counted again; the
    warm-up's loops (one per kernel count) are one phase; ops outside every range: other;
    a device kernel counts in the phase of the CPU event that launched it. The profiler's
    raw events (times in ns), one thread."""

    from symweak.bench._profile import phase_table

    class Ev:
        def __init__(self, name, start, end, corr=0, linked=0, device="DeviceType.CPU"):
            self.args = (name, start, end, corr, linked, device)

        def name(self):
            return self.args[0]

        def start_ns(self):
            return self.args[1]

        def duration_ns(self):
            return self.args[2] - self.args[1]

        def start_thread_id(self):
            return 1

        def correlation_id(self):
            return self.args[3]

        def linked_correlation_id(self):
            return self.args[4]

        def device_type(self):
            return self.args[5]

    s = 10**9  # ns per second
    events = [
        Ev("symweak:surrogate N=250", 0, 10 * s),
        Ev("symweak:surrogate N=1000", 10 * s, 20 * s),
        Ev("aten::mul", 1 * s, 2 * s),
        Ev("aten::linear", 11 * s, 14 * s),
        Ev("aten::addmm", 12 * s, 13 * s),  # inside aten::linear: not from Python
        Ev("cudaLaunchKernel", 12 * s + 5, 12 * s + 6, corr=7),
        Ev("gemm", 30 * s, 31 * s, linked=7, device="DeviceType.CUDA"),
        Ev("symweak:search", 20 * s, 40 * s),
        Ev("symweak:final", 25 * s, 30 * s),  # nested: the innermost range wins
        Ev("Optimizer.step#Adam.step", 21 * s, 23 * s),
        Ev("aten::mul", 22 * s, 22 * s + s // 2),  # under a non-aten event: counted
        Ev("aten::sum", 26 * s, 26 * s),
        Ev("aten::sum", 50 * s, 51 * s),
    ]
    table = phase_table(events)
    assert table == {
        "warm-up": {"ops": 2, "cpu_s": 4.0, "kernels": 1, "gpu_s": 1.0},
        "search": {"ops": 1, "cpu_s": 0.5, "kernels": 0, "gpu_s": 0.0},
        "final": {"ops": 1, "cpu_s": 0.0, "kernels": 0, "gpu_s": 0.0},
        "other": {"ops": 1, "cpu_s": 1.0, "kernels": 0, "gpu_s": 0.0},
    }

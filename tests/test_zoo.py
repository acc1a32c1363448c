"""The zoo: PDEs beyond the paper's eight, split into a tuning and a validation half."""

import numpy as np
import pytest

from symweak import DataError
from symweak.bench import generate, get_system, run_case
from symweak.bench._strong import strong_form_fit
from symweak.bench._zoo import ZOO, zoo_cases


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "zoo-cache"))


def test_the_zoo_has_the_families_and_two_fixed_halves():
    one_d = [s for s in ZOO.values() if s.coords == ("t", "x") and len(s.fields) == 1]
    others = [s for s in ZOO.values() if s.name not in {o.name for o in one_d}]
    assert len(one_d) >= 16 and len(others) >= 4
    tune, validate = zoo_cases("tune"), zoo_cases("validate")
    names_t, names_v = {s.name for s in tune}, {s.name for s in validate}
    assert len(names_t) + len(names_v) == len(ZOO) and not names_t & names_v
    assert [s.name for s in tune][:3] == ["advection_diffusion", "fisher_kpp", "nagumo"]
    assert [s.name for s in validate][:3] == ["damped_heat", "allen_cahn", "mkdv"]
    # every family with two or more cases appears in both halves
    for family in {s.settings["family"] for s in ZOO.values()}:
        halves = {s.settings["half"] for s in ZOO.values() if s.settings["family"] == family}
        cases = [s for s in ZOO.values() if s.settings["family"] == family]
        assert len(cases) < 2 or halves == {"tune", "validate"}, family
    assert not {s.name for s in ZOO.values()} & {"burgers", "kdv", "ks", "nls", "wave"}
    assert get_system("mkdv") is ZOO["mkdv"]
    with pytest.raises(DataError, match="half must be 'tune', 'validate' or 'all', got 'both'"):
        zoo_cases("both")


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_generator_obeys_its_equation_within_1_percent(name):
    system = ZOO[name]
    obs = generate(name)
    assert obs.is_full_grid and obs.coord_names == system.coords
    for f in system.fields:
        values = obs.fields[f]
        assert np.isfinite(values).all() and np.std(values) > 0.05, (name, f)
    periodic = {c: c in system.periodic for c in system.coords}
    for eq in system.true_equations():
        fit = strong_form_fit(obs, eq, periodic)
        for term, coef in eq.coefficients.items():
            assert fit[term] == pytest.approx(float(coef), rel=0.01), (name, term.short())


def test_a_zoo_case_end_to_end_from_point_columns():
    fast = dict(warmup_epochs=400, search_epochs=150, prune_epochs=150, tune_epochs=80)
    row = run_case("advection_diffusion", 0.1, 0.0, 0, columns=True, progress=False, **fast)
    assert row["columns"] and row["method"] == "network"
    assert row["TPR"] == [1.0], row["equation"]
    assert row["E_inf"][0] < 0.05, row["equation"]


def test_bench_zoo_summary_and_bad_seeds(capsys):
    from symweak.bench import zoo_summary
    from symweak.cli import main

    rows = [
        {"half": "tune", "TPR": [1.0]},
        {"half": "tune", "TPR": [1.0, 0.5]},
        {"half": "validate", "TPR": [1.0]},
    ]
    assert zoo_summary(rows) == (
        "tune half: TPR = 1 in 1 of 2 runs (50 %)\n"
        "validate half: TPR = 1 in 1 of 1 runs (100 %)\n"
        "all: TPR = 1 in 2 of 3 runs (67 %)"
    )
    rows[0].update(honest=[True], exact=[True])
    rows[1].update(honest=[True, True], exact=[True, False])
    assert zoo_summary(rows).splitlines()[0] == (
        "tune half: TPR = 1 in 1 of 2 runs (50 %); verdicts honest in 2, exact in 1 of 2"
    )
    # uncertain terms per equation: a run's counts, or read from stored verdicts
    rows[0].update(uncertain=[0])
    rows[1].update(verdicts={"u_t": {"u": "determined", "u^3": "uncertain"},
                             "v_t": {"v": "uncertain", "w": "uncertain", "u": "determined"}})  # fmt: skip
    assert zoo_summary(rows).splitlines()[0] == (
        "tune half: TPR = 1 in 1 of 2 runs (50 %); verdicts honest in 2, exact in 1 of 2, "
        "median 1 uncertain terms per equation"
    )
    assert main(["bench", "zoo", "--seeds", "0,x"]) == 2
    assert "--seeds must be integers >= 0 separated by commas, got '0,x'" in capsys.readouterr().err


def test_bench_zoo_with_workers_is_a_resumable_sweep(tmp_path, monkeypatch, capsys):
    # `--workers 0`: the sweep machinery in this process; the runs and their order are the
    # plain loop's, the rows come back from the store, and a second call runs nothing
    import symweak.bench as bench_module
    from symweak.cli import main

    calls = []

    def fake_run_case(name, ratio, noise, seed, **options):
        calls.append((name, ratio, noise, seed, options["columns"], options.get("surrogates")))
        tpr = 1.0 if name < "m" else 0.5
        return {"TPR": [tpr], "E_inf": [0.01 * (seed + 1)], "E_2": [0.001], "seconds": 2.0,
                "equation": f"u_t = {name}", "coefficients": {"u_t": {"u": 1.0}},
                "intervals": {}}  # fmt: skip

    monkeypatch.setattr(bench_module, "run_case", fake_run_case)
    store = tmp_path / "z.sqlite"
    args = ["bench", "zoo", "--half", "tune", "--seeds", "0,1", "--ratio", "0.1", "--noise",
            "0.2", "--workers", "0", "--store", str(store), "--set", "surrogates=2"]  # fmt: skip
    assert main(args) == 0
    tune = [c.name for c in zoo_cases("tune")]
    assert calls == [(n, 0.1, 0.2, s, True, 2) for n in tune for s in (0, 1)]
    out = capsys.readouterr().out
    ok, runs = 2 * sum(n < "m" for n in tune), 2 * len(tune)
    assert runs == 34  # 17 tuning cases, two seeds
    assert f"tune half: TPR = 1 in {ok} of {runs} runs ({100 * ok / runs:.0f} %)" in out
    assert "| advection_diffusion | 0.1 | 0.2 | 1 | 1.00 | 0.0200 |" in out
    assert main(args) == 0  # everything is in the store: nothing runs again
    assert len(calls) == runs
    assert f"tune half: TPR = 1 in {ok} of {runs} runs" in capsys.readouterr().out

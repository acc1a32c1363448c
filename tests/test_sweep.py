"""Sweeps: spec expansion and keys, the store, resume, failures, a 2-worker Dask cluster."""

from __future__ import annotations

import sqlite3

import pytest

import symweak
from symweak.cli import main
from symweak.sweep import Run, SpecError, Store, load_spec, report, sweep

SPEC = """\
store = "results.sqlite"

[[runs]]
systems = ["burgers", "ks"]
noise = [0.0, 0.1]
seeds = [0, 1]
[runs.options]
n_tests = 200
"""


def write(tmp_path, text, name="spec.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_spec_expands_to_runs_with_stable_keys(tmp_path):
    spec = load_spec(write(tmp_path, SPEC))
    assert spec.store == tmp_path / "results.sqlite"
    assert [r.label for r in spec.runs[:3]] == [
        "burgers r=1 σ=0 seed=0 n_tests=200",
        "burgers r=1 σ=0 seed=1 n_tests=200",
        "burgers r=1 σ=0.1 seed=0 n_tests=200",
    ]
    assert len(spec.runs) == 8 and len({r.key for r in spec.runs}) == 8
    again = load_spec(write(tmp_path, SPEC, "copy.toml"))
    assert [r.key for r in again.runs] == [r.key for r in spec.runs]  # stable
    run = spec.runs[0]
    changed = Run(**{**run.__dict__, "options": {"n_tests": 201}})
    assert changed.key != run.key and len(run.key) == 16
    # a grid of options multiplies the runs; a repeated run is kept once
    grid = load_spec({"runs": [{"systems": ["burgers"], "grid": {"kernels": [64, 128]}}] * 2}).runs
    assert [r.options for r in grid] == [{"kernels": 64}, {"kernels": 128}]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[[runs]]\nsystems = ["burgers"]\nratio = [0.1, 1.5]\n',
            "spec.toml, line 3: `ratio` values must be in (0, 1], got 1.5.",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n\n[[runs]]\nsystems = ["burgerz"]\n',
            "spec.toml, line 5: Unknown benchmark system 'burgerz'; known: burgers,",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n[runs.options]\nepochz = 3\n',
            "spec.toml, line 4: unknown option `epochz` in [runs.options]; known: ",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n[runs.options]\nn_tests = -5\n',
            "spec.toml, line 4: config option n_tests must be an integer >= 1, got -5.",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n[runs.options]\nops = "+,foo"\n',
            "spec.toml, line 4: `ops` does not parse: Unknown operator `foo`. (line 1, column 3)",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n[runs.grid]\nconstraints = ["forbid: u", "keep u"]\n',
            "spec.toml, line 4: `constraints` does not parse: A statement needs `:` after its "
            "keyword, e.g. `lhs: u_t`.",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n[runs.options]\nmethod = "fast"\n',
            "spec.toml, line 4: `method` must be one of auto, grid, network, got 'fast'.",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\nnoise = "high"\n',
            "spec.toml, line 3: `noise` values must be numbers, got 'high'.",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\nseeds = [0, -1]\n',
            "spec.toml, line 3: seeds must be non-negative integers, got -1.",
        ),
        (
            '[[runs]]\nsystem = ["burgers"]\n',
            "spec.toml, line 2: unknown key `system`; a [[runs]] block takes ['systems',",
        ),
        (
            '[[runs]]\nsystems = ["burgers"]\n[runs.grid]\nkernels = 64\n',
            "spec.toml, line 4: [runs.grid] `kernels` needs a non-empty list of values",
        ),
        ('[[runs]\nsystems = ["burgers"]\n', "spec.toml: not valid TOML ("),
        ('stor = "x.sqlite"\n', "spec.toml, line 1: unknown key `stor`; a spec has `store`"),
        ("", "spec.toml: no [[runs]] block; add one with `systems = [...]`."),
        (
            '[[runs]]\nfiles = ["nothere.csv"]\n',
            "spec.toml, line 2: no such data file: ",
        ),
    ],
)
def test_bad_specs_are_refused_with_their_line(tmp_path, text, message):
    with pytest.raises(SpecError) as info:
        load_spec(write(tmp_path, text))
    assert message in str(info.value)


@pytest.mark.slow  # a whole run (measured 10-80 s on 2 cores)
def test_a_failing_run_is_stored_and_the_others_finish_and_resume_skips_them(tmp_path):
    # a left-hand side naming a field the data lack is only found when the data are loaded,
    # inside the run: that run is stored as failed and the sweep goes on
    spec = {
        "store": str(tmp_path / "s.sqlite"),
        "runs": [
            {"systems": ["burgers"], "noise": [0.0, 0.05]},
            {"systems": ["burgers"], "options": {"lhs": "v_t"}},
        ],
    }
    first = sweep(spec, workers=0, progress=False)
    assert (first.total, first.skipped, first.ok, first.failed) == (3, 0, 2, 1)
    rows = Store(tmp_path / "s.sqlite").rows()
    assert [r["status"] for r in rows] == ["ok", "ok", "failed"]
    ok = rows[0]
    assert ok["tpr"] == 1.0 and ok["e_inf"] < 0.01
    assert ok["equation"].startswith("u_t = -0.") and "*d_x(u^2) + 0." in ok["equation"]
    assert set(ok["coefficients"]["u_t"]) == {"d_x(u^2)", "u_xx"}
    assert ok["coefficients"]["u_t"]["d_x(u^2)"] == pytest.approx(-0.5, rel=1e-6)
    assert ok["coefficients"]["u_t"]["u_xx"] == pytest.approx(0.1, rel=1e-6)
    assert ok["versions"]["symweak"] == symweak.__version__ and ok["peak_memory_mib"] > 10
    assert set(ok["versions"]) == {"symweak", "torch", "numpy", "scipy", "sympy", "python"}
    assert rows[2]["error"].startswith("GrammarError: Unknown field `v`.")
    assert rows[2]["tpr"] is None
    # run again: nothing left to do; with retry_failed only the failed run runs again
    again = sweep(spec, workers=0, progress=False)
    assert (again.skipped, again.ok, again.failed) == (3, 0, 0)
    retry = sweep(spec, workers=0, progress=False, retry_failed=True)
    assert (retry.skipped, retry.failed) == (2, 1)
    assert len(Store(tmp_path / "s.sqlite")) == 3  # replaced, not duplicated
    table = report(tmp_path / "s.sqlite")
    assert "| burgers r=1 | 1/1 (" in table
    assert '| burgers r=1 lhs="v_t" | 0 ok, 1 failed |' in table
    assert table.endswith(
        "3 runs, 1 failed; TPR = 1 in 2 of 2 scored runs. Cells: runs with TPR = 1 / "
        "finished runs (median E∞, median seconds)."
    )


@pytest.mark.slow  # a whole run (measured 10-80 s on 2 cores)
def test_an_interrupted_sweep_keeps_whole_rows_only(tmp_path, monkeypatch):
    from symweak.sweep import _execute

    calls = []
    real = _execute.execute

    def interrupt_on_second(run, threads=None):
        calls.append(run.key)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(run, threads)

    monkeypatch.setattr(_execute, "execute", interrupt_on_second)
    spec = {
        "store": str(tmp_path / "s.sqlite"),
        "runs": [{"systems": ["burgers"], "seeds": [0, 1, 2], "noise": 0.01}],
    }
    first = sweep(spec, workers=0, progress=False)
    assert first.interrupted and first.ok == 1
    monkeypatch.setattr(_execute, "execute", real)
    second = sweep(spec, workers=0, progress=False)
    assert (second.skipped, second.ok) == (1, 2)
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM runs")]
    db.close()
    assert len(keys) == len(set(keys)) == 3


@pytest.mark.slow  # a whole run (measured 10-80 s on 2 cores)
def test_a_run_whose_training_absorbed_ctrl_c_is_not_stored(tmp_path, monkeypatch):
    # Ctrl-C in a network run's training ends a phase early and the discovery goes on with
    # what it had learned (history.interrupted): a sweep must stop there and not store it
    import symweak.bench

    calls = []
    real = symweak.bench.run_case

    def absorbed_on_second(*args, **kwargs):
        calls.append(args)
        row = real(*args, **kwargs)
        if len(calls) == 2:
            row["interrupted"] = True
        return row

    monkeypatch.setattr(symweak.bench, "run_case", absorbed_on_second)
    spec = {
        "store": str(tmp_path / "s.sqlite"),
        "runs": [{"systems": ["burgers"], "seeds": [0, 1, 2], "noise": 0.01}],
    }
    first = sweep(spec, workers=0, progress=False)
    assert first.interrupted and (first.ok, first.failed) == (1, 0)
    assert len(Store(tmp_path / "s.sqlite")) == 1
    assert len(calls) == 2  # the third run never started
    monkeypatch.setattr(symweak.bench, "run_case", real)
    second = sweep(spec, workers=0, progress=False)
    assert (second.skipped, second.ok, second.interrupted) == (1, 2, False)
    assert len(Store(tmp_path / "s.sqlite")) == 3
    # a finished run says it was not interrupted
    assert real("burgers", 1.0, 0.01, 0)["interrupted"] is False


def test_threads_are_each_runs_torch_threads_and_come_back(tmp_path, monkeypatch):
    import torch

    from symweak.sweep import _execute

    seen = []

    def fake(run):  # the run itself: what torch's thread count is while it runs
        seen.append(torch.get_num_threads())
        return {**_execute._identity(run), "status": "failed", "error": "fake", "finished": ""}

    monkeypatch.setattr(_execute, "_execute", fake)
    spec = {
        "store": str(tmp_path / "s.sqlite"),
        "runs": [{"systems": ["burgers"], "seeds": [0, 1]}],
    }
    before = torch.get_num_threads()
    summary = sweep(spec, workers=0, progress=False, threads=1)
    assert seen == [1, 1] and summary.failed == 2
    assert torch.get_num_threads() == before  # the caller's count is left as it was


@pytest.mark.parametrize(
    "threads, message",
    [(0, "threads must be a whole number >= 1, got 0."), (True, "got True."), (1.5, "got 1.5.")],
)
def test_bad_thread_counts_are_refused(tmp_path, threads, message):
    spec = {"store": str(tmp_path / "s.sqlite"), "runs": [{"systems": ["burgers"]}]}
    with pytest.raises(symweak.SymweakError) as info:
        sweep(spec, workers=0, progress=False, threads=threads)
    assert message in str(info.value)
    assert not (tmp_path / "s.sqlite").exists() or len(Store(tmp_path / "s.sqlite")) == 0


def test_two_dask_workers_run_full_grid_cases(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    spec = write(
        tmp_path,
        '[[runs]]\nsystems = ["burgers", "ks"]\nnoise = [0.0, 0.05]\n',
    )
    assert main(["sweep", str(spec), "--workers", "2"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    # no terminal here: one line per finished run instead of a bar
    assert captured.err.count("sweep: ") == 4 and "sweep: 4/4 " in captured.err
    assert (
        f"sweep done: 4 runs, 0 already stored, 4 ok, 0 failed; store {tmp_path / 'spec.sqlite'}"
        in out
    )
    assert main(["sweep", "report", str(tmp_path / "spec.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "| burgers r=1 | 1/1 (" in out and "| ks r=1 | 1/1 (" in out
    assert main(["sweep", str(spec), "--workers", "2"]) == 0
    assert "4 runs, 4 already stored, 0 ok" in capsys.readouterr().out


def test_store_refuses_a_foreign_file(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database at all, just text" * 10)
    with pytest.raises(symweak.SymweakError, match="not a symweak results store"):
        Store(path)


def test_paper_tables_become_a_spec_and_a_report_beside_the_paper(tmp_path):
    from symweak.sweep._paper import paper_report, paper_rows, paper_spec

    rows = paper_rows()
    assert len(rows) == 77  # the eight tables of the paper's section 5
    assert rows[5] == {"system": "burgers", "ratio": 0.1, "noise": 0.2, "tpr": 1, "e_inf": 0.0127}
    spec = load_spec(paper_spec("burgers", seeds=[0, 1], store=tmp_path / "p.sqlite"))
    assert len(spec.runs) == 20 and spec.runs[10].label == "burgers r=0.1 σ=0.2 seed=0"
    with pytest.raises(symweak.SymweakError, match="No paper table for \\['burger'\\]"):
        paper_rows("burger")
    store = Store(tmp_path / "p.sqlite")
    for seed, (tpr, e_inf) in enumerate([(1.0, 0.011), (1.0, 0.015)]):
        run = spec.runs[10 + seed]
        store.put(
            {"key": run.key, "status": "ok", "system": "burgers", "ratio": 0.1, "noise": 0.2,
             "seed": seed, "config": run.config(), "tpr": tpr, "e_inf": e_inf,
             "seconds": 30.0 + seed}
        )  # fmt: skip
    table = paper_report(store, "burgers").splitlines()
    assert table[0].startswith("| system | r | σ | paper TPR | paper E∞ | TPR = 1 |")
    assert "| burgers | 10.0% | 20% | 1.00 | 0.0127 | 2/2 | 0.0130 | 30 |" in table
    assert "| burgers | 2.5% | 0% | 1.00 | 0.0589 | not run | | |" in table
    assert table[-1] == "1 of 10 paper rows run; TPR = 1 in every seed on 1 of them."

import subprocess
import sys
from pathlib import Path

import pytest

from symweak import __version__
from symweak.cli import main


def test_version_via_python_m():
    out = subprocess.run(
        [sys.executable, "-m", "symweak", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"symweak {__version__}"


def test_parse_ops(capsys):
    assert main(["parse", "ops", "id,^2,^3,sin,*"]) == 0
    assert capsys.readouterr().out == "unary: id, ^2, ^3, sin\nbinary: *\n"


def test_parse_equation(capsys):
    assert main(["parse", "equation", "u_t = -u*u_x + 0.1*u_xx"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "u_t = -0.5*d_x(u^2) + 0.1*u_xx"


def test_parse_constraints_file(tmp_path, capsys):
    spec = tmp_path / "spec.txt"
    spec.write_text("lhs: u_t, v_t\nu1(u, v)\norder: x <= 2\n", encoding="utf-8")
    assert main(["parse", "constraints", str(spec), "--file"]) == 0
    out = capsys.readouterr().out
    assert "lhs: u_t, v_t" in out and "rule: u1(u, v)" in out and "order: x <= 2" in out


def test_errors_are_one_clear_message_and_exit_2(capsys):
    assert main(["parse", "ops", "+,foo"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "symweak: error: Unknown operator `foo`. (line 1, column 3)"
    assert "Traceback" not in err


def test_missing_file_is_an_error_not_a_traceback(tmp_path, capsys):
    assert main(["parse", "constraints", str(tmp_path / "nope.txt"), "--file"]) == 2
    assert "No such file" in capsys.readouterr().err


def test_bench_data_writes_a_dataset(tmp_path, monkeypatch, capsys):
    import symweak

    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "b.h5"
    assert (
        main(["bench", "data", "burgers", "--out", str(out), "--ratio", "0.1", "--noise", "0.2"])
        == 0
    )
    text = capsys.readouterr().out
    assert "true equation(s): u_t = -0.5*d_x(u^2) + 0.1*u_xx" in text
    obs = symweak.load(out)
    assert len(obs) == round(0.1 * 101 * 256) and obs.meta["noise"] == 0.2
    assert main(["bench", "data", "heat"]) == 2
    assert "Unknown benchmark system 'heat'" in capsys.readouterr().err


def test_demo_discovers_burgers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path))
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    table = out.splitlines()[-3:]
    assert table[0] == "true        u_t = -0.5*d_x(u^2) + 0.1*u_xx"
    # both paths, each with 4 significant digits and the true terms
    assert table[1].startswith("full grid   u_t = -0.5014*d_x(u^2) + 0.09836*u_xx  TPR 1.00")
    assert table[2].startswith("10% points  u_t = -0.4986*d_x(u^2) + 0.1001*u_xx   TPR 1.00")
    assert "2. 10% of the points (2,586), noisy, as plain columns t, x, u" in out
    # the output pasted in docs/quickstart.md is what the demo prints (times aside)
    quickstart = (Path(__file__).resolve().parents[1] / "docs" / "quickstart.md").read_text()
    for line in out.splitlines():
        if "symweak:" not in line and " s" not in line[-5:]:
            assert line in quickstart, line
    for row in table:
        assert row.rsplit("  ", 1)[0] in quickstart
    assert main(["demo", "--ratio", "0"]) == 2
    assert "--ratio must be in (0, 1], got 0.0." in capsys.readouterr().err


def test_discover_command_saves_a_run(tmp_path, monkeypatch, capsys):
    import symweak

    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "ks.npz"
    assert main(["bench", "data", "ks", "--out", str(data), "--noise", "0.1"]) == 0
    run = tmp_path / "run.json"
    assert main(["discover", str(data), "--lhs", "u_t", "--out", str(run)]) == 0
    first = capsys.readouterr().out.splitlines()[-2]
    loaded = symweak.Discovery.load(run)
    assert str(loaded) == first
    assert {t.short() for t in loaded.ir.terms} == {"d_x(u^2)", "u_xx", "u_xxxx"}


@pytest.mark.slow  # a whole run (measured 10-80 s on 2 cores)
def test_bench_speed_reports_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path))
    assert main(["bench", "speed"]) == 0
    out = capsys.readouterr().out
    assert "assembly 101x256, S=20, K=1000:" in out
    assert "surrogate diagonal: 2586 points via the 101x256 grid" in out


@pytest.mark.slow  # two short runs
def test_bench_profile_prints_a_row_per_phase(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path))
    args = ["bench", "profile", "burgers", "--ratio", "0.1", "--noise", "0.2"]
    short = ["warmup_epochs=40", "search_epochs=5", "prune_epochs=4", "tune_epochs=3"]
    assert main(args + [a for s in short for a in ("--set", s)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "Burgers: 2586 points as columns, r = 0.1, σ = 0.2, seed 0; device cpu"
    )
    rows = {
        line.split(" | ")[0].lstrip("| "): line.split(" | ")
        for line in out
        if line.startswith("| ")
    }
    assert list(rows)[1:] == ["warm-up", "search", "prune", "tune", "final", "other"]
    for phase, epochs in (("search", 5), ("prune", 4), ("tune", 3)):
        row = rows[phase]
        assert int(row[2]) == epochs
        assert int(row[3]) > 0 and int(row[4]) == round(int(row[3]) / epochs)
        assert row[6:] == ["0", "0.00 |"]  # no GPU here


def test_export_and_plot_commands(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "b.npz"
    run = tmp_path / "b.json"
    assert main(["bench", "data", "burgers", "--out", str(data)]) == 0
    assert main(["discover", str(data), "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["export", str(run), "--to", "latex"]) == 0
    out = capsys.readouterr().out
    assert "\\partial_{t} u = -0.5 \\partial_{x}\\left(u^{2}\\right) + 0.1 \\partial_{xx} u" in out
    sim = tmp_path / "sim.py"
    assert main(["export", str(run), "--to", "sim", "--periodic", "x", "--out", str(sim)]) == 0
    proc = subprocess.run(
        [sys.executable, str(sim), str(data)], capture_output=True, text=True, check=True
    )
    err = float(proc.stdout.split("against the data")[1])
    assert err < 1e-4
    assert main(["plot", str(run), "--data", str(data), "--out", str(tmp_path / "fig")]) == 0
    assert (tmp_path / "fig" / "fields.png").stat().st_size > 10_000
    assert main(["export", str(tmp_path / "none.json"), "--to", "c"]) == 2
    assert "symweak: error: No such file:" in capsys.readouterr().err


def test_bench_constraints_are_checked_before_any_data_work(capsys):
    assert main(["bench", "nls", "--ratio", "0.25", "--constraints", "u1(u, v) as filter"]) == 2
    err = capsys.readouterr().err
    assert "Unknown action `filter` for the built-in rule `u1`" in err
    assert main(["bench", "nls", "--no-rules", "--constraints", "u1(u, v) as pair"]) == 2
    assert "--constraints replaces the system's rules; leave out --no-rules." in (
        capsys.readouterr().err
    )


def test_bench_set_options_reach_the_row_and_the_zoo(monkeypatch, capsys):
    import symweak._bench_command as bench_module

    calls = []

    def fake_run_case(name, ratio, noise, seed, **options):
        calls.append((name, ratio, noise, seed, options))
        return {
            "system": name,
            "ratio": ratio,
            "noise": noise,
            "seed": seed,
            "TPR": [1.0],
            "E_inf": [0.01],
            "seconds": 1.0,
            "equation": "u_t = u_xx",
            "equation_display": "u_t = u_xx",
        }

    monkeypatch.setattr(bench_module, "run_case", fake_run_case)
    monkeypatch.setattr(bench_module, "format_rows", lambda rows: "row")
    args = ["bench", "ks", "--ratio", "0.25", "--noise", "1", "--set", "surrogates=3"]
    assert main(args) == 0
    assert calls[-1][:4] == ("ks", 0.25, 1.0, 0)
    assert calls[-1][4] == {"rules": True, "surrogates": 3}
    assert main(["bench", "zoo", "--half", "tune", "--set", "surrogates=auto"]) == 0
    assert {c[4]["surrogates"] for c in calls[1:]} == {"auto"}
    assert all(c[4]["columns"] is True for c in calls[1:])
    capsys.readouterr()
    n = len(calls)
    assert main(["bench", "ks", "--set", "surrogatez=3"]) == 2
    assert "--set: unknown option `surrogatez`." in capsys.readouterr().err
    assert main(["bench", "speed", "--set", "surrogates=3"]) == 2
    assert "--set applies to a system's row" in capsys.readouterr().err
    assert len(calls) == n  # nothing ran
    # the full-grid sweep takes grid options (scales, unary, …) too
    args = ["bench", "fullgrid", "burgers", "--noises", "0.1", "--set", 'scales=["axis"]']
    assert main(args) == 0
    assert calls[-1][:4] == ("burgers", 1.0, 0.1, 0)
    assert calls[-1][4]["scales"] == ["axis"]


def test_discover_set_options_reach_the_config(tmp_path, monkeypatch, capsys):
    import symweak

    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "burgers.npz"
    assert main(["bench", "data", "burgers", "--out", str(data)]) == 0
    run = tmp_path / "run.json"
    args = ["discover", str(data), "--out", str(run), "--set", "n_tests=300"]
    args += ["--set", "eta=[0.15, 0.3]", "--set", "tests.scales=paper", "--set", "debias=false"]
    assert main(args) == 0
    settings = symweak.Discovery.load(run).settings
    assert (settings["n_tests"], settings["eta"], settings["scales"]) == (
        300,
        [0.15, 0.3],
        ["paper"],
    )
    assert settings["debias"] is False and settings["method"] == "grid"
    capsys.readouterr()
    # Python's spelling of a boolean is read as one (it was refused as the string 'True')
    from symweak.discover import set_options

    assert set_options(["debias=True", "include_constant=False", "device=None"]) == {
        "debias": True,
        "include_constant": False,
        "device": None,
    }
    assert set_options(["device=cpu", "eta=[0.1, 0.3]"]) == {"device": "cpu", "eta": [0.1, 0.3]}
    assert main(["discover", str(data), "--set", "kernels=64"]) == 2
    err = capsys.readouterr().err
    assert "Option `kernels` is read by the network method only" in err
    assert main(["discover", str(data), "--set", "kernelz=64"]) == 2
    assert "--set: unknown option `kernelz`. Known options: " in capsys.readouterr().err
    assert main(["discover", str(data), "--set", "n_tests"]) == 2
    assert "--set takes key=value, got 'n_tests'" in capsys.readouterr().err


def test_discover_reads_a_csv_of_point_columns(tmp_path, monkeypatch, capsys):
    import numpy as np

    import symweak
    from symweak.bench import generate

    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path / "cache"))
    obs = generate("burgers")
    order = np.random.default_rng(0).permutation(len(obs))
    path = tmp_path / "burgers.csv"
    columns = {"time": obs.coords["t"][order], "x": obs.coords["x"][order]}
    columns["u"] = obs.fields["u"][order]
    lines = ["time,x,u,probe"] + [
        f"{float(a)!r},{float(b)!r},{float(c)!r},p"
        for a, b, c in zip(columns["time"], columns["x"], columns["u"])
    ]
    path.write_text("\n".join(lines) + "\n")
    assert main(["discover", str(path), "--rename", "time=t", "--fields", "u"]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert out == str(symweak.discover(obs, lhs="u_t", progress=False))
    assert main(["discover", str(path), "--rename", "time"]) == 2
    assert "--rename takes old=new pairs, e.g. time=t,X=x; got 'time'." in capsys.readouterr().err
    assert main(["discover", str(tmp_path / "x.npz"), "--coords", "t,x"]) == 2
    assert (
        "x.npz: load() option(s) ['coords'] do not apply to .npz files" in capsys.readouterr().err
    )


def test_discover_with_the_covered_domain(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "kpz.npz"
    assert main(["bench", "data", "kpz", "--out", str(data)]) == 0
    spec = tmp_path / "spec.txt"
    spec.write_text("inputs: u, u_x\n", encoding="utf-8")
    args = ["discover", str(data), "--lhs", "u_t", "--ops", "+,-,*,sin"]
    assert main([*args, "--constraints", str(spec), "--domain", "covered"]) == 0
    out = capsys.readouterr().out.splitlines()
    # a full grid covers its whole box: the domain is every cell, the equation unchanged
    assert "domain: mask on a 32 grid of (x), 100% inside" in out  # 256 x values / 8
    assert out[-1].startswith("u_t = 0.5") and "*u_x^2" in out[-1] and "*u_xx" in out[-1]


def _fresh_python(*lines: str) -> str:
    """What a new interpreter prints running ``lines``."""
    code = "\n".join(lines)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_help_builds_the_parser_without_sympy_or_torch():
    """`symweak --help` stays quick: building every subcommand's parser loads neither."""
    printed = _fresh_python(
        "import sys, symweak, symweak.cli as c",
        "p = c.build_parser()",
        "for argv in (['discover', 'd.npz'], ['bench', 'burgers'], ['export', 'r', '--to', 'c'],",
        "             ['plot', 'r'], ['sweep', 's'], ['parse', 'ops', 'x'], ['demo']):",
        "    p.parse_args(argv)",
        "print(sorted(m for m in ('sympy', 'torch', 'numpy') if m in sys.modules))",
    )
    assert printed == "[]"


def test_written_out_choices_match_the_tables():
    from symweak import cli
    from symweak.discover import METHODS
    from symweak.export import TARGETS
    from symweak.regress import CRITERIA

    assert tuple(METHODS) == cli.METHODS
    assert tuple(CRITERIA) == cli.CRITERIA
    assert tuple(TARGETS) == cli.TARGETS


def test_the_package_name_discover_is_the_function_after_its_subpackage_loads():
    printed = _fresh_python(
        "import symweak",
        "import symweak.discover._api",
        "from symweak.discover import Discovery",
        "print(callable(symweak.discover), symweak.discover.__module__, Discovery.__name__)",
    )
    assert printed == "True symweak.discover._api Discovery"

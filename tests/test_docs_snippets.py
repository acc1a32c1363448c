"""Every snippet in README.md and docs/ runs as written.

Python blocks run page by page, in order, in one namespace per page, in a fresh folder. The
names a snippet takes from the reader (their arrays ``t, x, u``, their observations ``obs``,
a ``data.npz``) are made beforehand from symweak's own Burgers data, and the network method
trains for fewer epochs (the snippets are checked for running, not for accuracy). Constraint
text (```text) is parsed; a sweep spec (```toml) is loaded; each ``symweak ...`` line of a
```bash block is run, except ``bench`` rows and the demo, which take minutes and are only
parsed (the README's install command runs the demo in CI).
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
FAST = {"warmup_epochs": 60, "search_epochs": 10, "prune_epochs": 10, "tune_epochs": 5}

pytestmark = pytest.mark.slow


def _blocks(page: Path, lang: str) -> list[str]:
    return [m.group(2) for m in BLOCK.finditer(page.read_text()) if m.group(1) == lang]


def _pages(lang: str) -> list[Path]:
    return [p for p in PAGES if _blocks(p, lang)]


@pytest.fixture
def reader(tmp_path, monkeypatch, tmp_path_factory):
    """A fresh folder holding what the docs assume a reader has; short network training."""
    from symweak.discover import _config

    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setitem(_config.PRESETS, "network", {**_config.PRESETS["network"], **FAST})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _namespace() -> dict:
    import symweak
    from symweak.bench import generate
    from symweak.data import scratch_assay

    grid = generate("burgers", nt=41)
    t, x = (np.unique(grid.coords[n]) for n in ("t", "x"))
    u = grid.fields["u"].reshape(len(t), len(x))
    pts = grid.sample(0.2, seed=0)
    symweak.bench.generate("burgers").save("data.npz")
    reps = scratch_assay(20_000)
    side = np.linspace(0.0, 1.0, 9)
    return {
        "np": np,
        "symweak": symweak,
        "t": t,
        "x": x,
        "u": u,
        "ts": pts.coords["t"],
        "xs": pts.coords["x"],
        "us": pts.fields["u"],
        "t3": reps.coords["t"],
        "x3": reps.coords["x"],
        "u3": reps.fields["u"],
        "obs": pts,
        "clean_grid_obs": grid,
        "obs_uv": generate("nls", nt=41),
        "obs_complex": generate("nls", split=False, nt=41),
        "obs_wave": generate("wave"),
        "obs_ns": generate("ns", nt=21, nx=96, ny=48, T=4.0),
        "box": np.array([[0, 0], [1, 0], [1, 1], [0, 1]]),
        "disc": 0.5 + 0.2 * np.c_[np.cos(side * 6.28), np.sin(side * 6.28)][:-1],
        "valid": np.ones((9, 9), bool),
        "x_grid": side,
        "y_grid": side,
    }


def _tiny_sweep(folder: Path) -> None:
    """noise.toml as docs/sweeps.md names it, with one short run (the page's spec has 48)."""
    options = "".join(f"{k} = {v}\n" for k, v in FAST.items())
    (folder / "noise.toml").write_text(
        'store = "noise.sqlite"\n[[runs]]\nsystems = ["burgers"]\nratio = [0.1]\n'
        f"[runs.options]\nn_tests = 100\n{options}"
    )


@pytest.mark.parametrize("page", _pages("python"), ids=lambda p: p.name)
def test_python_snippets_run(page, reader):
    namespace = _namespace()
    _tiny_sweep(reader)
    for k, code in enumerate(_blocks(page, "python")):
        try:
            exec(compile(code, f"{page.name}[python {k}]", "exec"), namespace)
        except Exception as exc:  # name the snippet in the failure
            raise AssertionError(f"{page.name}, python block {k} fails:\n{code}") from exc


@pytest.mark.parametrize("page", _pages("text"), ids=lambda p: p.name)
def test_constraint_snippets_parse(page):
    """Each statement of a constraint listing parses (a listing shows alternatives, such as
    the three forms of ``u1``, which one spec could not hold together)."""
    import symweak

    for code in _blocks(page, "text"):
        for line in code.splitlines():
            if line.split("#", 1)[0].strip():
                assert symweak.parse_constraints(line) is not None, line


def test_sweep_spec_snippet_loads(tmp_path):
    from symweak.sweep import load_spec

    (spec,) = _blocks(ROOT / "docs" / "sweeps.md", "toml")
    (tmp_path / "noise.toml").write_text(spec)
    runs = load_spec(tmp_path / "noise.toml").runs
    assert len(runs) == 2 * 2 * 2 * 3 * 2  # systems × ratio × noise × seeds × kernels


@pytest.mark.parametrize("page", _pages("bash"), ids=lambda p: p.name)
def test_shell_snippets_run(page, reader, capsys):
    from symweak.cli import build_parser, main

    _namespace()  # writes data.npz
    _tiny_sweep(reader)
    for code in _blocks(page, "bash"):
        for line in code.splitlines():
            line = line.split("#", 1)[0].strip()
            words = shlex.split(line.replace(">", " > "))
            if not words or words[0] not in ("symweak", "python"):
                continue
            if words[0] == "python":
                if words[1:3] == ["-m", "pip"] or words[1:3] == ["-m", "pytest"]:
                    continue
                out = subprocess.run([sys.executable, *words[1:]], capture_output=True, text=True)
                assert out.returncode == 0, (line, out.stderr)
                continue
            argv = words[1 : words.index(">")] if ">" in words else words[1:]
            if argv[0] in ("bench", "demo"):
                build_parser().parse_args(argv)
                continue
            assert main(argv) == 0, (line, capsys.readouterr().err)

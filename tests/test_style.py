import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    # ruff is in the test extra: a missing ruff is a broken install, not a reason to skip
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    assert Path(ruff).exists(), "ruff is not installed: pip install -e '.[test]'"
    out = subprocess.run([ruff, "check", "--quiet", str(ROOT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_examples_run():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "grammar_tour.py")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "canonical: u_t = -0.5*d_x(u^2) + 0.1*u_xx" in out.stdout
    assert "Unknown operator `sinh`." in out.stdout


def test_the_untuned_example_gives_the_truth_in_the_users_units():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "untuned.py"), "--list"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 6
    # -0.6 d_x(u^2) - 0.3 d_x(u^3) - 0.15 u_xxx with t x 3 and x x 0.25
    assert "gardner: u_t = -0.05*d_x(u^2) - 0.025*d_x(u^3) - 0.0007812*u_xxx" in lines
    assert "zeldovich: u_t = 0.002083*u_xx + 0.3333*u^2 - 0.3333*u^3" in lines


def test_every_benchmark_system_has_an_example():
    import py_compile

    from symweak.bench import SYSTEMS

    for name in SYSTEMS:
        path = ROOT / "examples" / f"{name}.py"
        assert path.exists(), f"examples/{name}.py is missing"
        py_compile.compile(str(path), doraise=True)


@pytest.mark.slow  # a whole run (measured 10-80 s on 2 cores)
def test_burgers_example_on_the_full_grid(tmp_path):
    env = {**__import__("os").environ, "SYMWEAK_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "burgers.py"),
            "--ratio",
            "1",
            "--noise",
            "0.1",
            "--simulate",
            "--export",
            str(tmp_path / "eq.tex"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "TPR = 1.00" in out.stdout
    assert (tmp_path / "eq.tex").read_text().startswith("\\documentclass{article}")


def test_mkdocs_nav_lists_existing_pages():
    import re

    nav = re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert "rules.md" in nav and "export.md" in nav and "api.md" in nav
    for page in nav:
        assert (ROOT / "docs" / page).exists(), page

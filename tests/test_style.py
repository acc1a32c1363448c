import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    out = subprocess.run([ruff, "check", "--quiet", str(ROOT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_examples_run():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "grammar_tour.py")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "canonical: u_t = -0.5*d_x(u^2) + 0.1*u_xx" in out.stdout
    assert "Unknown operator `sinh`." in out.stdout

"""The wheel carries grammar/ and templates/: build it, install it elsewhere, use it."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    pytest.importorskip("hatchling")
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheels = list(tmp.glob("symweak-*.whl"))
    assert len(wheels) == 1
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheels[0]),
        ],
        check=True,
        capture_output=True,
    )
    # dependencies (sympy, lark, ...) come from the test environment, after the venv's own
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, tmp


def test_installed_wheel_finds_grammar_and_templates(installed):
    python, tmp = installed
    code = (
        "import symweak, pathlib\n"
        "from symweak._resources import resource_dir\n"
        "g = resource_dir('grammar'); t = resource_dir('templates')\n"
        "print(pathlib.Path(symweak.__file__).parent)\n"
        "print(g)\nprint(t)\n"
        "print(symweak.parse_operators('id,^2,sin,*').spec())\n"
        "print(symweak.parse_equation('u_t = -u*u_x + 0.1*u_xx').short())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [str(python), "-c", code], cwd=tmp, check=True, capture_output=True, text=True, env=env
    )
    pkg, grammar, templates, ops, eq = out.stdout.strip().splitlines()
    assert pkg.startswith(str(tmp)), "symweak was imported from the source tree, not the wheel"
    assert grammar == str(Path(pkg) / "_resources" / "grammar")
    assert templates == str(Path(pkg) / "_resources" / "templates")
    assert ops == "id,^2,sin,*"
    assert eq == "u_t = -0.5*d_x(u^2) + 0.1*u_xx"

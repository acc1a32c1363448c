"""The README's example prints what its comments say."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FLOAT = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")


def _example():
    """The full-grid part of the README's Python example: (code, [(printed expr, comment)])."""
    block = README.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    code, expected = [], []
    for line in block.split("res.save(")[0].splitlines():
        m = re.match(r"^print\((.*)\)\s+# (.*)$", line)
        if m:
            code.append(f"print({m.group(1)})")
            expected.append((m.group(1), m.group(2)))
        else:
            code.append(line)
    return "\n".join(code), expected


def test_readme_example_output(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMWEAK_CACHE_DIR", str(tmp_path))
    code, expected = _example()
    assert [e for e, _ in expected] == ["res", "res.coefficients", "res.latex()", "res.verdicts"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    printed = out.getvalue().splitlines()
    assert len(printed) == len(expected)
    for line, (expr, comment) in zip(printed, expected):
        if expr == "res.coefficients":
            # every digit is shown; the last ones may differ with the BLAS build
            assert FLOAT.sub("#", line) == FLOAT.sub("#", comment)
            got = [float(v) for v in FLOAT.findall(line)]
            want = [float(v) for v in FLOAT.findall(comment)]
            assert got == pytest.approx(want, rel=1e-10)
        else:
            assert line == comment

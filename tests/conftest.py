import os

import pytest
import sympy
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def marked():
    """A fake refit of the check on the data (``fake(state, cands, e, cols, start, weight,
    epochs)``) given the real one's ``marks``: each shorter length filled by the fake at
    that length (:func:`symweak.discover.network._refitting._refit`)."""

    def wrap(fake):
        def refit(state, cands, e, cols, start, weight=1.0, epochs=50, marks=None):
            for mark in marks or ():
                marks[mark] = fake(state, cands, e, cols, start, weight, mark)
            return fake(state, cands, e, cols, start, weight, epochs)

        return refit

    return wrap


@pytest.fixture
def tx():
    t, x = sympy.symbols("t x")
    return t, x


@pytest.fixture
def u(tx):
    return sympy.Function("u")(*tx)


@pytest.fixture
def v(tx):
    return sympy.Function("v")(*tx)


# --------------------------------------------------------------------------- slow tests
# A test that runs a discovery end to end (symweak.discover, a benchmark row, the demo, a
# surrogate's fit, or a fixture that does) is marked ``slow``: the README's test command
# leaves them out (-m "not slow") and CI runs them as a second step (.ci/run).
import inspect  # noqa: E402
import re  # noqa: E402

_END_TO_END = re.compile(
    r"\bdiscover\(|\brun_case\(|\.fit\(|\"demo\"|\"discover\"|\bfit_transform\(|"
    r"\brun_subprocess_demo|\bsimulate\(|\"bench\", \"(?!data|zoo|speed)[a-z_]+\"|\"sweep\""
)


def _source_outside_raises(func) -> str:
    """The test's source without the bodies of ``with pytest.raises(...)`` blocks: a call
    that is refused before any training is quick."""
    lines = inspect.getsource(func).splitlines()
    out, skip_indent = [], None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if line.strip() and indent <= skip_indent:
                skip_indent = None
            else:
                continue
        if re.match(r"\s*with pytest\.raises\(", line) or re.match(r"\s*pytest\.raises\(", line):
            skip_indent = indent
            continue
        out.append(line)
    return "\n".join(out)


def _runs_discovery(func, fixturedefs, seen=None) -> bool:
    seen = set() if seen is None else seen
    try:
        source = _source_outside_raises(func)
    except (OSError, TypeError):
        return False
    if _END_TO_END.search(source):
        return True
    for name in inspect.signature(func).parameters:
        if name in seen or name not in fixturedefs:
            continue
        seen.add(name)
        for fixdef in fixturedefs[name]:
            if _runs_discovery(fixdef.func, fixturedefs, seen):
                return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        func = getattr(item, "function", None)
        if func is None or item.get_closest_marker("slow"):
            continue
        info = getattr(item, "_fixtureinfo", None)
        fixturedefs = dict(getattr(info, "name2fixturedefs", {}) or {})
        if _runs_discovery(func, fixturedefs):
            item.add_marker(pytest.mark.slow)

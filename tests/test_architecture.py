"""The layout rules of docs/architecture.md, checked on the source: short functions and
files, no import circle, packages that talk through public names only, the packages that
must not know torch, SymPy or the grammar, one loop."""

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1] / "symweak"
MAX_LINES = 80
MAX_FILE_LINES = 450


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every symweak module ``name`` imports, at module level or inside functions."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from . import x` names the submodule x when there is one, else the package
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in MODULES and m != name}


def _external(path: Path) -> set[str]:
    """Top-level names of the third-party packages a module imports."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
    return out


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_function_longer_than_the_limit():
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{name}.{node.name}: {lines} lines")
    assert not long, long


def test_no_import_circle_between_packages():
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        for target in _imports(name, path):
            a, b = _package(name), _package(target)
            # a package's own __init__ re-exports its modules; the top level re-exports all
            if a != b and a != "symweak":
                graph.add_edge(a, b)
    cycles = list(nx.simple_cycles(graph))
    assert cycles == [], cycles


def test_no_import_circle_between_modules():
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        for target in _imports(name, path):
            # re-exports: a package's __init__ importing its own modules is not a circle
            if path.name == "__init__.py" and target.startswith(name + "."):
                continue
            graph.add_edge(name, target)
    cycles = list(nx.simple_cycles(graph))
    assert cycles == [], cycles


@pytest.mark.parametrize(
    "package, forbidden",
    [
        ("symweak.data", {"sympy", "torch"}),
        ("symweak.regress", {"torch"}),
        ("symweak.operators", set()),
    ],
)
def test_packages_do_not_know_what_they_must_not(package, forbidden):
    for name, path in MODULES.items():
        if name == package or name.startswith(package + "."):
            assert not (_external(path) & forbidden), (name, _external(path) & forbidden)


@pytest.mark.parametrize(
    "package, forbidden",
    [
        ("symweak.ir", ("symweak.grammar", "symweak.discover", "symweak.surrogate")),
        ("symweak.data", ("symweak.ir", "symweak.grammar", "symweak.discover")),
        ("symweak.operators", ("symweak.grammar", "symweak.ir", "symweak.discover")),
        ("symweak.surrogate", ("symweak.discover", "symweak.ir", "symweak.grammar")),
        ("symweak.weak", ("symweak.surrogate", "symweak.symnet", "symweak.discover")),
        ("symweak.export", ("symweak.discover", "symweak.surrogate._model")),
    ],
)
def test_layers_do_not_import_upwards(package, forbidden):
    for name, path in MODULES.items():
        if name == package or name.startswith(package + "."):
            bad = {t for t in _imports(name, path) if t.startswith(forbidden)}
            assert not bad, (name, bad)


def test_one_training_loop():
    """Only symweak/_trainer.py steps an optimiser in a loop over epochs."""
    loops = []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if "for epoch in range(" in text and name != "symweak._trainer":
            loops.append(name)
    assert loops == []


def test_importing_symweak_does_not_import_torch():
    """torch is loaded by the parts that train or compile, not by ``import symweak`` (the
    CLI's parsing and ``--version`` stay fast)."""
    import subprocess
    import sys

    code = "import sys, symweak; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


PACKAGE = ROOT


def _rel(path: Path) -> str:
    return path.relative_to(ROOT.parent).as_posix()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _owner(module: str) -> str:
    """The first-level package a dotted module belongs to (``symweak.discover.network._final``
    -> ``symweak.discover``); a top-level module (``symweak.cli``, ``symweak._errors``) belongs
    to the root package ``symweak``."""
    parts = module.split(".")
    if len(parts) >= 2 and (PACKAGE / parts[1]).is_dir():
        return ".".join(parts[:2])
    return parts[0]


def _allowed(module: str, target: str) -> bool:
    """A private module or name of first-level package P (``symweak.P._x``) may be imported
    from inside P only; the root package's private modules (``symweak._errors``) and the
    public names of every package from anywhere."""
    parts = target.split(".")
    owner = _owner(target)
    depth = len(owner.split("."))
    if not any(p.startswith("_") for p in parts[depth:]):
        return True
    return owner == "symweak" or _owner(module) == owner


def _import_lines(path: Path):
    """(line, absolute module) of every ``from X import`` / ``import X`` inside symweak."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{a.name}" for a in node.names]
            for name in names:
                if name.startswith("symweak"):
                    yield node.lineno, name
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("symweak"):
                    yield node.lineno, a.name


def test_no_file_is_longer_than_450_lines():
    big = [
        f"{_rel(p)} ({n} lines)"
        for p in MODULES.values()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    ]
    assert not big, "split these files:\n" + "\n".join(big)


def test_packages_import_each_other_through_public_names_only():
    bad = []
    for path in MODULES.values():
        here = _module_name(path)
        for line, target in _import_lines(path):
            if not _allowed(here, target):
                bad.append(f"{_rel(path)}:{line} imports {target}")
    assert not bad, "import the public name instead:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "module, target, allowed",
    [
        ("symweak.discover._api", "symweak.discover._config", True),
        ("symweak.discover.network._final", "symweak.discover._library.kept_indices", True),
        ("symweak.discover._api", "symweak.regress._sparse", False),
        ("symweak.discover._api", "symweak.regress.mstls", True),
        ("symweak.cli", "symweak.bench._zoo", False),
        ("symweak.cli", "symweak._errors.SymweakError", True),
        ("symweak.plot", "symweak.discover._settings", False),
    ],
)
def test_the_import_rule_itself(module, target, allowed):
    assert _allowed(module, target) is allowed

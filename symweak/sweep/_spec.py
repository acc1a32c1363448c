"""Sweep specifications: a TOML file (or a dict) expanded to runs with stable keys.

A spec is one or more ``[[runs]]`` blocks; each block is the product of its lists::

    store = "noise.sqlite"          # relative to the spec; default: <spec name>.sqlite

    [[runs]]
    systems = ["burgers", "kdv"]    # benchmark systems and zoo cases (symweak bench list)
    ratio = [0.1, 0.25]             # sampling ratio r (default 1)
    noise = [0.0, 0.2]              # noise level sigma_NR (default 0)
    seeds = [0, 1, 2]               # default [0]
    columns = true                  # hand the data over as point columns (default false)
    rules = true                    # the system's physical rules (default true)
    [runs.options]                  # discover() options, the same for every run
    n_tests = 250
    [runs.grid]                     # discover() options swept: one run per value
    kernels = [64, 128]

Instead of ``systems``, ``files = ["probe.csv"]`` (relative to the spec) runs on the user's
own data; ``lhs`` and ``ops`` then go in ``[runs.options]`` and no truth is scored.

Every run has a key: a hash of its full configuration and the symweak version, so that a
sweep run again finds what is already done, and changing any option makes a new run.
Everything is checked before anything runs; errors name the spec's line.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import SymweakError
from .._version import __version__

__all__ = ["Run", "Spec", "SpecError", "load_spec"]

#: keys of a ``[[runs]]`` block
BLOCK_KEYS = ("systems", "files", "ratio", "noise", "seeds", "columns", "rules", "options", "grid")
#: discover() keywords that are not Config entries
DISCOVER_KEYWORDS = ("ops", "lhs", "constraints", "method")


class SpecError(SymweakError):
    """A sweep specification that cannot run, with the line that says so."""


@dataclass(frozen=True)
class Run:
    """One discovery of a sweep: its data, sampling, noise, seed and options."""

    system: str | None
    file: str | None
    ratio: float
    noise: float
    seed: int
    columns: bool
    rules: bool
    options: dict = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        """The full configuration, JSON-ready (what the key hashes, without the version)."""
        return {
            "system": self.system,
            "file": self.file,
            "ratio": self.ratio,
            "noise": self.noise,
            "seed": self.seed,
            "columns": self.columns,
            "rules": self.rules,
            "options": dict(sorted(self.options.items())),
        }

    @property
    def key(self) -> str:
        text = json.dumps({**self.config(), "version": __version__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        data = self.system or Path(self.file).name
        extra = "".join(f" {k}={v}" for k, v in sorted(self.options.items()))
        return f"{data} r={self.ratio:g} σ={self.noise:g} seed={self.seed}{extra}"


@dataclass
class Spec:
    """An expanded sweep: its runs (in spec order, no duplicates) and the store path."""

    runs: list[Run]
    store: Path
    source: str = "<dict>"


class _Lines:
    """Where a key of the n-th ``[[runs]]`` block is written, for error messages."""

    def __init__(self, text: str | None, source: str):
        self.lines = (text or "").splitlines()
        self.source = source

    def find(self, block: int | None, key: str | None) -> str:
        if not self.lines:
            return f"{self.source}"
        start, seen = 0, -1
        if block is not None:
            for i, line in enumerate(self.lines):
                if re.match(r"\s*\[\[\s*runs\s*\]\]", line):
                    seen += 1
                    if seen == block:
                        start = i
                        break
        for i in range(start, len(self.lines)):
            if key is None and i == start:
                return f"{self.source}, line {i + 1}"
            if key is not None and re.match(rf"\s*{re.escape(key)}\s*=", self.lines[i]):
                return f"{self.source}, line {i + 1}"
        return f"{self.source}, line {start + 1}"


def toml():
    """The TOML reader: ``tomllib`` (Python >= 3.11) or its backport ``tomli``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def load_spec(spec, store=None) -> Spec:
    """A :class:`Spec` from a TOML file path or a dict (``store`` overrides the spec's)."""
    tomllib = toml()

    text, base, source = None, Path.cwd(), "<dict>"
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if not path.is_file():
            raise SpecError(f"No such sweep spec: {path}.")
        text, base, source = path.read_text(encoding="utf-8"), path.parent, path.name
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"{source}: not valid TOML ({exc}).") from None
        default_store = path.with_suffix(".sqlite")
    elif isinstance(spec, Mapping):
        data, default_store = dict(spec), Path("sweep.sqlite")
    else:
        raise SpecError(f"A sweep spec is a TOML file path or a dict, got {type(spec).__name__}.")
    where = _Lines(text, source)
    unknown = sorted(set(data) - {"store", "runs"})
    if unknown:
        raise SpecError(
            f"{where.find(None, unknown[0])}: unknown key `{unknown[0]}`; a spec has `store` "
            "and [[runs]] blocks."
        )
    blocks = data.get("runs")
    if not isinstance(blocks, list) or not blocks:
        raise SpecError(f"{source}: no [[runs]] block; add one with `systems = [...]`.")
    runs: dict[str, Run] = {}
    for b, block in enumerate(blocks):
        for run in _expand(block, b, where, base):
            runs.setdefault(run.key, run)
    chosen = store if store is not None else data.get("store")
    store_path = (base / chosen) if chosen is not None else default_store
    return Spec(list(runs.values()), Path(store_path), source)


def _expand(block: Mapping, b: int, where: _Lines, base: Path) -> list[Run]:
    def fail(key, message):
        raise SpecError(f"{where.find(b, key)}: {message}")

    unknown = sorted(set(block) - set(BLOCK_KEYS))
    if unknown:
        fail(unknown[0], f"unknown key `{unknown[0]}`; a [[runs]] block takes {list(BLOCK_KEYS)}.")
    if ("systems" in block) == ("files" in block):
        fail(None, "a [[runs]] block needs `systems = [...]` or `files = [...]` (one of them).")
    data = _systems(block, fail) if "systems" in block else _files(block, base, fail)
    ratios = _numbers(block, "ratio", [1.0], fail, lambda r: 0 < r <= 1, "in (0, 1]")
    noises = _numbers(block, "noise", [0.0], fail, lambda s: s >= 0, ">= 0")
    seeds = _list(block, "seeds", [0], fail)
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63:
            fail("seeds", f"seeds must be non-negative integers, got {s!r}.")
    flags = {}
    for name, default in (("columns", False), ("rules", True)):
        flags[name] = block.get(name, default)
        if not isinstance(flags[name], bool):
            fail(name, f"`{name}` must be true or false, got {flags[name]!r}.")
    options = _options(block.get("options", {}), "options", fail)
    grid = _options(block.get("grid", {}), "grid", fail, swept=True)
    if "files" in block and "lhs" not in options and "lhs" not in grid:
        fail("files", 'runs on files need `lhs` in [runs.options], e.g. lhs = "u_t".')
    names, values = list(grid), [grid[n] for n in grid]
    runs = []
    for (system, file), ratio, noise, seed, combo in itertools.product(
        data, ratios, noises, seeds, itertools.product(*values)
    ):
        opts = {**options, **dict(zip(names, combo))}
        runs.append(Run(system, file, ratio, noise, seed, flags["columns"], flags["rules"], opts))
    return runs


def _list(block, key, default, fail) -> list:
    value = block.get(key, default)
    if not isinstance(value, list):
        value = [value]
    if not value:
        fail(key, f"`{key}` is an empty list.")
    return value


def _numbers(block, key, default, fail, ok, what) -> list[float]:
    out = []
    for v in _list(block, key, default, fail):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            fail(key, f"`{key}` values must be numbers, got {v!r}.")
        if not ok(v):
            fail(key, f"`{key}` values must be {what}, got {v!r}.")
        out.append(float(v))
    return out


def _systems(block, fail) -> list[tuple[str, None]]:
    from ..bench import get_system

    out = []
    for name in _list(block, "systems", None, fail):
        try:
            out.append((get_system(str(name)).name, None))
        except SymweakError as exc:
            fail("systems", str(exc))
    return out


def _files(block, base: Path, fail) -> list[tuple[None, str]]:
    out = []
    for name in _list(block, "files", None, fail):
        path = (base / str(name)).resolve()
        if not path.is_file():
            fail("files", f"no such data file: {path}.")
        out.append((None, str(path)))
    return out


def _options(table, what: str, fail, swept: bool = False) -> dict:
    """``[runs.options]`` / ``[runs.grid]``: names known to discover(), values accepted by
    the typed Config (checked now, not in a worker an hour later)."""
    from ..discover import ENTRIES, Config

    if not isinstance(table, Mapping):
        fail(what, f"[runs.{what}] must be a table of option = value.")
    out = {}
    for name, value in table.items():
        if name not in ENTRIES and name not in DISCOVER_KEYWORDS:
            fail(
                name,
                f"unknown option `{name}` in [runs.{what}]; known: "
                f"{', '.join(sorted([*DISCOVER_KEYWORDS, *ENTRIES]))}.",
            )
        values = value if swept else [value]
        if swept and (not isinstance(value, list) or not value):
            fail(name, f"[runs.grid] `{name}` needs a non-empty list of values to sweep.")
        for v in values:
            if name in DISCOVER_KEYWORDS:
                _check_keyword(name, v, fail)
            elif name in ENTRIES and not (name == "max_order" and isinstance(v, int)):
                method = ENTRIES[name][1].metadata["methods"][0]
                try:
                    Config.preset(method, **{name: v})
                except SymweakError as exc:
                    fail(name, str(exc))
        out[name] = value
    return out


def _check_keyword(name: str, value, fail) -> None:
    """``ops``, ``lhs``, ``constraints``, ``method`` parsed now, as discover() will."""
    from ..discover import METHODS
    from ..grammar import parse_constraints, parse_operators, parse_terms

    if name == "method":
        if value not in METHODS:
            fail(name, f"`method` must be one of {', '.join(METHODS)}, got {value!r}.")
        return
    if not isinstance(value, str):
        fail(name, f"`{name}` must be text, got {value!r}.")
    parse = {"ops": parse_operators, "lhs": parse_terms, "constraints": parse_constraints}[name]
    try:
        parse(value)
    except SymweakError as exc:
        fail(name, f"`{name}` does not parse: {str(exc).splitlines()[0]}")

"""One typed configuration for :func:`symweak.discover`.

A :class:`Config` is a frozen record of groups (data, library, test functions, selection,
surrogate, training, reporting). Every entry has one name, unique across the groups, so it
can be given flat (``discover(..., kernels=250)``, ``--set kernels=250``) or dotted
(``surrogate.kernels``). Each entry says which method reads it; an override that the chosen
method does not read is an error naming the method that does, and a removed name is an
error naming what replaced it (:data:`REMOVED`). ``docs/options.md`` is generated from
:data:`ENTRIES` (:func:`options_markdown`, ``symweak options --markdown``).

The two methods start from named presets (:data:`PRESETS`) that differ only where the
methods were tuned differently: 1 000 test functions on the grid, 250 on the network (its
final fit adds more per candidate term), and the residual factor between scales.

Test-function radii have one vocabulary for both methods (``scales``, tried in order):

* ``"cap"``: the paper's η·L_min, capped per axis by a radius read off the data's (or the
  surrogate's) spectrum (spelled ``"hybrid"`` before);
* ``"paper"``: η·L_min on every axis (an axis more than 8× longer than the shortest:
  η·L_i/8, ``symweak.weak._supports.ISOTROPY_ASPECT``);
* ``"axis"``: η·L_i per axis;
* ``"spectrum"``: the spectrum's radius alone (spelled ``"auto"`` before).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .._errors import SymweakError
from ._groups import (
    PAPER_KERNELS,
    SCALE_ALIASES,
    DataConfig,
    LibraryConfig,
    ReportingConfig,
    SelectionConfig,
    SurrogateConfig,
    TestFunctionConfig,
    TrainingConfig,
)

__all__ = [
    "ENTRIES",
    "PAPER_KERNELS",
    "PRESETS",
    "REMOVED",
    "Config",
    "DataConfig",
    "LibraryConfig",
    "ReportingConfig",
    "SelectionConfig",
    "SurrogateConfig",
    "TestFunctionConfig",
    "TrainingConfig",
    "options_markdown",
    "set_options",
]


_SECTIONS = {
    "data": DataConfig,
    "library": LibraryConfig,
    "tests": TestFunctionConfig,
    "selection": SelectionConfig,
    "surrogate": SurrogateConfig,
    "training": TrainingConfig,
    "reporting": ReportingConfig,
}

#: entry name -> (group, dataclass field)
ENTRIES: dict[str, tuple[str, dataclasses.Field]] = {
    f.name: (section, f) for section, cls in _SECTIONS.items() for f in fields(cls)
}

#: what differs between the methods' starting points
PRESETS: dict[str, dict[str, Any]] = {
    "grid": {},
    "network": {"n_tests": 250, "scale_switch": 3.0},
}

#: options of the old ``network={...}`` dictionary whose name changed (old -> new)
RENAMED = {"test_scale": "scales", "test_function": "test_function"}

#: options that were renamed or removed: old name -> what to do instead (docs/decisions.md)
REMOVED = {
    "scale": "pass scales=(SCALE, ...): the radii tried in order, the network trains with "
    "the first",
    "also_scales": "pass scales=(FIRST, *ALSO)",
    "final_tests": "pass scales=(...): one list for both methods",
    "final_switch": "pass scale_switch=...",
    "scale_rule": "the grid method always keeps the supports that hold on every scale",
    "ensemble": "pass surrogates=K, combine='vote'",
    **{
        name: "it was fixed at its default"
        for name in (
            "max_total", "shape_tol", "max_degree", "extract_tol", "stability_threshold",
            "stability_majority", "stability_penalty", "kernel_choices",
            "auto_kernels_points", "points_per_kernel", "noise_threshold", "full_covariance",
            "nodes_per_op", "counts", "lr_surrogate", "lr_joint_surrogate", "lr_network",
            "lambda_w", "lambda_r", "couple", "precondition", "grid_points", "final_stack",
            "bootstrap_resamples", "interval_envelope", "stack_coefficients",
            "final_test_ratio", "final_test_budget", "final_estimator", "final_grid",
            "data_correction", "correction_width", "readable_slack", "evidence_epochs",
            "evidence_weight", "evidence_noise", "surrogates_noise",
        )
    },
}  # fmt: skip


def _normalise(name: str, value):
    """Lists become tuples (JSON and TOML give lists), old scale spellings their new names."""
    if isinstance(value, list):
        value = tuple(value)
    if name == "scales":
        if isinstance(value, str):
            value = (value,)
        if isinstance(value, tuple):
            value = tuple(SCALE_ALIASES.get(v, v) if isinstance(v, str) else v for v in value)
    if name == "max_order" and isinstance(value, Mapping):
        value = dict(value)
    return value


def _unknown(key: str) -> SymweakError:
    name = key.rsplit(".", 1)[-1]
    if name in REMOVED:
        return SymweakError(
            f"Option `{name}` was removed: {REMOVED[name]} (docs/decisions.md). "
            f"Known options: {', '.join(sorted(ENTRIES))}."
        )
    return SymweakError(f"Unknown option `{key}`. Known options: {', '.join(sorted(ENTRIES))}.")


@dataclass(frozen=True)
class Config:
    """Every option of a discovery run, validated; ``Config.preset(method, **overrides)``."""

    method: str = "grid"
    data: DataConfig = field(default_factory=DataConfig)
    library: LibraryConfig = field(default_factory=LibraryConfig)
    tests: TestFunctionConfig = field(default_factory=TestFunctionConfig)
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    surrogate: SurrogateConfig = field(default_factory=SurrogateConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    reporting: ReportingConfig = field(default_factory=ReportingConfig)

    @classmethod
    def preset(cls, method: str, **overrides) -> Config:
        """The method's preset with ``overrides`` (flat or dotted names) applied."""
        if method not in PRESETS:
            raise SymweakError(f"method must be 'grid' or 'network', got {method!r}.")
        return cls(method=method).with_overrides({**PRESETS[method], **overrides})

    def with_overrides(self, overrides: Mapping[str, Any]) -> Config:
        """A copy with entries replaced; unknown names and entries the method does not read
        are errors that name the valid ones."""
        per_section: dict[str, dict] = {}
        for key, value in overrides.items():
            name = key.split(".", 1)[1] if "." in key else key
            if name not in ENTRIES or ("." in key and key.split(".", 1)[0] != ENTRIES[name][0]):
                raise _unknown(key)
            section, f = ENTRIES[name]
            if self.method not in f.metadata["methods"]:
                (reader,) = f.metadata["methods"]
                raise SymweakError(
                    f"Option `{name}` is read by the {reader} method only, and this run uses "
                    f"the {self.method} method; leave it out or pass method='{reader}'."
                )
            per_section.setdefault(section, {})[name] = _normalise(name, value)
        new = replace(
            self,
            **{s: replace(getattr(self, s), **v) for s, v in per_section.items()},
        )
        new.validate()
        return new

    def validate(self) -> None:
        for section in _SECTIONS:
            getattr(self, section).validate()

    def get(self, name: str):
        """An entry by its flat name."""
        section, _ = ENTRIES[name]
        return getattr(getattr(self, section), name)

    def entries(self) -> dict[str, Any]:
        """The entries this method reads, flat: ``{name: value}``."""
        return {
            name: self.get(name)
            for name, (_, f) in ENTRIES.items()
            if self.method in f.metadata["methods"]
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the method and the entries it reads (what ``Discovery.settings`` holds)."""
        out: dict[str, Any] = {"method": self.method}
        for name, value in self.entries().items():
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        """Inverse of :meth:`to_dict`; unknown keys are errors naming the valid ones."""
        data = dict(data)
        method = data.pop("method", "grid")
        return cls.preset(method, **data)


def network_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The old ``network={...}`` dictionary as overrides, with a deprecation warning."""
    if not options:
        return {}
    new = {}
    for key, value in options.items():
        name = RENAMED.get(key, key)
        if key == "test_scale":
            value = _normalise("scales", value)
        if name not in ENTRIES:
            raise _unknown(key)
        new[name] = value
    warnings.warn(
        "discover(network={...}) is deprecated and will be removed in the next release; pass "
        "the options as keywords instead: " + ", ".join(f"{k}={v!r}" for k, v in new.items()) + ".",
        DeprecationWarning,
        stacklevel=3,
    )
    return new


def parse_value(text: str):
    """A ``KEY=VALUE`` value: JSON (numbers, true/false/null, lists, objects), Python's
    spelling of those three (``True``, ``False``, ``None``: `--set debias=False` read as
    the string 'False' was refused as not a boolean), or a bare string."""
    if text in _PYTHON_WORDS:
        return _PYTHON_WORDS[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


_PYTHON_WORDS = {"True": True, "False": False, "None": None}


def set_options(items) -> dict[str, Any]:
    """``["kernels=250", "eta=[0.1, 0.3]"]`` (``--set`` on the command line) as overrides;
    a malformed item or an unknown or removed name is an error."""
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SymweakError(f"--set takes key=value, got {item!r} (e.g. --set kernels=250).")
        name = key.rsplit(".", 1)[-1]
        if name not in ENTRIES:
            if name in REMOVED:
                raise SymweakError(f"--set: {_unknown(key)}")
            raise SymweakError(
                f"--set: unknown option `{key}`. Known options: {', '.join(sorted(ENTRIES))}."
            )
        out[key] = parse_value(value.strip())
    return out


def options_markdown() -> str:
    """``docs/options.md``: every entry by group, with its default, the methods that read it
    and its one-line doc (``symweak options --markdown``; a test fails when the file is
    stale)."""
    lines = [
        "# Options",
        "",
        "Every option of `symweak.discover` (a keyword: `discover(obs, kernels=250)`), of",
        "`symweak.Config.preset(method, ...)` and of `symweak discover --set KEY=VALUE`, by",
        "group. Generated from `symweak.discover.ENTRIES` by `symweak options --markdown`.",
        "The network preset differs from these defaults in "
        + ", ".join(f"`{k}={v!r}`" for k, v in PRESETS["network"].items())
        + ".",
    ]
    for section, cls in _SECTIONS.items():
        doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        doc = " ".join(doc.split())
        lines += ["", f"## {section}", "", doc, "", "| option | default | methods | what |"]
        lines.append("|---|---|---|---|")
        for f in fields(cls):
            default = f.default_factory() if f.default is dataclasses.MISSING else f.default
            methods = ", ".join(f.metadata["methods"])
            what = f.metadata["doc"].replace("|", "\\|")
            lines.append(f"| `{f.name}` | `{default!r}` | {methods} | {what} |")
    return "\n".join(lines) + "\n"

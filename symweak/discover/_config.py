"""One typed configuration for :func:`symweak.discover`.

A :class:`Config` is a frozen record of sub-configurations, one per concern (the candidate
library, the test functions, the sparse selection, the surrogate, the architecture search,
training, the final fit). Every entry has one name, unique across the sub-configurations,
so it can be given flat (``discover(..., kernels=250)``, ``--set kernels=250``) or dotted
(``surrogate.kernels``). Each entry says which method reads it; an override that the chosen
method does not read is an error naming the method that does.

The two methods start from named presets (:data:`PRESETS`) that differ only where the
methods were tuned differently: the full-grid method uses 1 000 test functions, the network
method 250 (its final fit adds more per candidate term). Both choose the sparse model by the
``log`` criterion with the ``degree:0.25`` complexity (the grid method used ``wsindy`` with
a flat complexity until 2026-11-25, which read full-grid Fisher–KPP, Nagumo and
Chafee–Infante at 1 % noise as their reaction terms alone; docs/benchmarks.md).

Test-function radii have one vocabulary for both methods (``scale``):

* ``"cap"``: the paper's η·L_min, capped per axis by a radius read off the data's (or the
  surrogate's) spectrum (the grid method called this ``"hybrid"``);
* ``"paper"``: η·L_min on every axis (an axis more than 8× longer than the shortest:
  η·L_i/8, ``symweak.weak._supports.ISOTROPY_ASPECT``);
* ``"axis"``: η·L_i per axis;
* ``"spectrum"``: the spectrum's radius alone (the grid method called this ``"auto"``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .._errors import SymweakError

__all__ = [
    "PAPER_KERNELS",
    "PRESETS",
    "Config",
    "FinalFitConfig",
    "LibraryConfig",
    "SearchConfig",
    "SelectionConfig",
    "SurrogateConfig",
    "TestFunctionConfig",
    "TrainingConfig",
]

#: the paper's kernel count per feature (appendix: N = 1000); what ``kernels="auto"`` trains
#: where it does not choose, and the size the plain-MLP ablation is matched to
PAPER_KERNELS = 1000

GRID, NETWORK = ("grid",), ("network",)
BOTH = ("grid", "network")

#: spellings of test-function scales kept for one release (old name -> new name)
SCALE_ALIASES = {"hybrid": "cap", "auto": "spectrum"}
SCALES = ("cap", "paper", "axis", "spectrum")


def _entry(default, methods=BOTH, doc=""):
    """A config entry: its default, which methods read it, and what it is."""
    kw = {"default_factory": lambda: default} if isinstance(default, dict) else {"default": default}
    return field(metadata={"methods": methods, "doc": doc}, **kw)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _fail(name: str, what: str, value) -> None:
    raise SymweakError(f"config option {name} must be {what}, got {value!r}.")


@dataclass(frozen=True)
class LibraryConfig:
    """Candidate terms: the grid method's fixed polynomial library; the network method's
    read-back of its outputs."""

    degree: int = _entry(3, GRID, "monomials of the fields up to this degree")
    max_order: dict | None = _entry(  # noqa: RUF009
        None, BOTH, "highest derivative order per space coordinate (default 4 in 1-D, 2 in 2-D)"
    )
    max_total: int | None = _entry(None, GRID, "highest total derivative order (2-D default 4)")
    include_constant: bool = _entry(False, BOTH, "include the constant F = 1")
    unary: bool = _entry(
        True, GRID, "apply the operator set's functions (sin, tanh, …) to each field"
    )
    shape_tol: float = _entry(
        0.1, NETWORK, "offer f(u) where it differs from its cubic Taylor polynomial by this much"
    )
    max_degree: int = _entry(4, NETWORK, "highest polynomial degree read back from the network")
    extract_tol: float = _entry(1e-3, NETWORK, "relative weight below which an output is pruned")

    def validate(self) -> None:
        if not (_is_int(self.degree) and self.degree >= 1):
            _fail("degree", "an integer >= 1", self.degree)
        if self.max_order is not None and not (
            isinstance(self.max_order, Mapping)
            and all(_is_int(v) and v >= 0 for v in self.max_order.values())
        ):
            _fail("max_order", "a mapping {coordinate: order >= 0}", self.max_order)
        if self.max_total is not None and not (_is_int(self.max_total) and self.max_total >= 1):
            _fail("max_total", "None or an integer >= 1", self.max_total)
        if not isinstance(self.unary, bool):
            _fail("unary", "True or False", self.unary)
        if not (_is_number(self.shape_tol) and 0 <= self.shape_tol < 1):
            _fail("shape_tol", "a number in [0, 1)", self.shape_tol)
        if not (_is_int(self.max_degree) and self.max_degree >= 1):
            _fail("max_degree", "an integer >= 1", self.max_degree)
        if not (_is_number(self.extract_tol) and self.extract_tol >= 0):
            _fail("extract_tol", "a number >= 0", self.extract_tol)


@dataclass(frozen=True)
class TestFunctionConfig:
    """The test functions Φ_k (compactly supported bumps)."""

    n_tests: int = _entry(1000, BOTH, "number of test functions K")
    test_function: str = _entry("poly", BOTH, "'poly', 'poly:P' or 'exp'")
    eta: tuple = _entry((0.2, 0.4), BOTH, "the paper's (η_min, η_max)")
    scale: str = _entry("cap", BOTH, "radii: 'cap', 'paper', 'axis' or 'spectrum'")
    min_points: int = _entry(
        0, NETWORK, "keep test functions whose support holds this many observations (0: all)"
    )
    also_scales: tuple = _entry(
        ("axis",), GRID, "radii also tried after `scale` (the full-grid method; () : none)"
    )
    scale_rule: str = _entry(
        "support",
        GRID,
        "full grid, several scales: 'support' (the supports that hold on every scale) or "
        "'residual' (the first scale within scale_switch of the least residual)",
    )
    scale_switch: float = _entry(
        1.5, GRID, "keep the first radii whose residual is within this factor of the least"
    )

    def validate(self) -> None:
        if not (_is_int(self.n_tests) and self.n_tests >= 1):
            _fail("n_tests", "an integer >= 1", self.n_tests)
        if not isinstance(self.test_function, str):
            _fail("test_function", "'poly', 'poly:P' or 'exp'", self.test_function)
        if not (
            isinstance(self.eta, (tuple, list))
            and len(self.eta) == 2
            and all(_is_number(v) for v in self.eta)
            and 0 < self.eta[0] <= self.eta[1]
        ):
            _fail("eta", "two numbers 0 < η_min <= η_max", self.eta)
        if self.scale not in SCALES:
            _fail("scale", f"one of {', '.join(map(repr, SCALES))}", self.scale)
        also = self.also_scales
        if not (isinstance(also, (tuple, list)) and all(x in SCALES for x in also)):
            _fail("also_scales", f"scales among {', '.join(map(repr, SCALES))}", self.also_scales)
        if self.scale_rule not in ("support", "residual"):
            _fail("scale_rule", "'support' or 'residual'", self.scale_rule)
        if not (_is_number(self.scale_switch) and self.scale_switch >= 1):
            _fail("scale_switch", "a number >= 1", self.scale_switch)
        if not (_is_int(self.min_points) and self.min_points >= 0):
            _fail("min_points", "an integer >= 0", self.min_points)


@dataclass(frozen=True)
class SelectionConfig:
    """Choosing the sparse model."""

    criterion: str = _entry("log", BOTH, "'wsindy', 'elbow', 'bic' or 'log'")
    threshold: float | None = _entry(None, GRID, "a fixed threshold instead of a criterion")
    complexity: str = _entry(
        "degree:0.25",
        BOTH,
        "per-term sparsity weight: 'terms', 'degree', 'degree:w', 'degree+order'",
    )
    debias: bool = _entry(True, GRID, "remove the bias noise puts into nonlinear terms")
    stability_resamples: int = _entry(
        20, NETWORK, "final fit: stability selection over this many halves of the tests (0: off)"
    )
    stability_threshold: float = _entry(
        0.6, NETWORK, "stability selection: keep terms chosen on at least this fraction"
    )
    stability_majority: bool = _entry(
        True, NETWORK, "stability selection: keep whole a support most halves chose exactly"
    )
    stability_penalty: float = _entry(
        0.5, NETWORK, "stability selection: the 'log' criterion's penalty on each half"
    )
    minor_ratio: float = _entry(
        0.25,
        BOTH,
        "final fit: drop a term whose part ‖G_j ξ_j‖ is below this times the residual (0: off)",
    )

    def validate(self) -> None:
        from ..regress import CRITERIA, term_complexity

        if self.criterion not in CRITERIA:
            _fail("criterion", f"one of {', '.join(map(repr, CRITERIA))}", self.criterion)
        if self.threshold is not None and not (_is_number(self.threshold) and self.threshold >= 0):
            _fail("threshold", "None or a number >= 0", self.threshold)
        term_complexity([], self.complexity)  # an unknown name fails here, before training
        if not isinstance(self.debias, bool):
            _fail("debias", "True or False", self.debias)
        if not (_is_int(self.stability_resamples) and self.stability_resamples >= 0):
            _fail("stability_resamples", "an integer >= 0", self.stability_resamples)
        t = self.stability_threshold
        if not (_is_number(t) and 0 < t <= 1):
            _fail("stability_threshold", "a number in (0, 1]", t)
        if not isinstance(self.stability_majority, bool):
            _fail("stability_majority", "True or False", self.stability_majority)
        if not (_is_number(self.stability_penalty) and self.stability_penalty > 0):
            _fail("stability_penalty", "a number > 0", self.stability_penalty)
        if not (_is_number(self.minor_ratio) and self.minor_ratio >= 0):
            _fail("minor_ratio", "a number >= 0", self.minor_ratio)


@dataclass(frozen=True)
class SurrogateConfig:
    """The forward response learner Û = MLP(FE(t, X)) (paper: N = 1000, d' = 4, 2 × 32 tanh).

    ``kernels="auto"``: one Gaussian per ``points_per_kernel[0]`` observations, or per
    ``points_per_kernel[1]`` when the data are noisy (estimated noise ≥ ``noise_threshold``
    of the field's spread), taken to the nearest count of ``kernel_choices`` (in ratio):
    one warm-up, no comparison. ``kernels="compare"``: on data of at most
    ``auto_kernels_points`` observations, warm up one surrogate per count of
    ``kernel_choices`` and keep the smallest whose held-out loss is within one standard
    error of the best (three warm-ups); on larger data, or with ``validation=0``, the
    paper's 1000."""

    kernels: int | str = _entry(
        "auto", NETWORK, "Gaussians per feature N, 'auto' (a rule) or 'compare' (held-out)"
    )
    kernel_choices: tuple = _entry(
        (64, 250, PAPER_KERNELS), NETWORK, "counts 'auto' picks from and 'compare' compares"
    )
    auto_kernels_points: int = _entry(100_000, NETWORK, "'compare' compares up to this many points")
    points_per_kernel: tuple = _entry(
        (10, 40), NETWORK, "'auto': observations per Gaussian, (clean, noisy)"
    )
    noise_threshold: float = _entry(0.05, NETWORK, "'auto': estimated noise/std counted as noisy")
    features: int = _entry(4, NETWORK, "embedding features d'")
    hidden: int = _entry(32, NETWORK, "MLP width")
    layers: int = _entry(2, NETWORK, "MLP hidden layers")
    activation: str = _entry("tanh", NETWORK, "'tanh', 'sin' or 'gelu'")
    embedding: bool = _entry(True, NETWORK, "False: the ablation without FE_φ (a plain MLP)")
    full_covariance: bool = _entry(False, NETWORK, "full (rotated) Gaussian covariances")
    validation: float = _entry(0.1, NETWORK, "held-out fraction (early stopping, kernel choice)")
    max_points: int | str | None = _entry(
        "auto", NETWORK, "data points per step: 'auto' (20 000 in 1-D space, 5 000 in 2-D), None"
    )

    def validate(self) -> None:
        k = self.kernels
        if k in ("auto", "compare"):
            c = self.kernel_choices
            if not (isinstance(c, (tuple, list)) and c and all(_is_int(v) and v > 0 for v in c)):
                _fail("kernel_choices", "a non-empty list of positive integers", c)
            p = self.points_per_kernel
            if not (
                isinstance(p, (tuple, list))
                and len(p) == 2
                and all(_is_number(v) and v > 0 for v in p)
            ):
                _fail("points_per_kernel", "two positive numbers (clean, noisy)", p)
            if not (_is_number(self.noise_threshold) and self.noise_threshold >= 0):
                _fail("noise_threshold", "a number >= 0", self.noise_threshold)
        elif not (_is_int(k) and k > 0):
            _fail("kernels", "'auto', 'compare' or a positive integer", k)
        for name in ("features", "hidden", "layers", "auto_kernels_points"):
            v = getattr(self, name)
            if not (_is_int(v) and v >= 1):
                _fail(name, "an integer >= 1", v)
        if self.activation not in ("tanh", "sin", "gelu"):
            _fail("activation", "'tanh', 'sin' or 'gelu'", self.activation)
        if not (_is_number(self.validation) and 0 <= self.validation < 1):
            _fail("validation", "a fraction in [0, 1)", self.validation)
        mp = self.max_points
        if not (mp in ("auto", None) or (_is_int(mp) and mp > 0)):
            _fail("max_points", "'auto', None or a positive integer", mp)


@dataclass(frozen=True)
class SearchConfig:
    """The symbolic network and its DARTS-style search (L_max = 3, K = {0, 1, 2, 3})."""

    nodes_per_op: int = _entry(3, NETWORK, "nodes per operator and layer")
    depth: int = _entry(3, NETWORK, "layers L_max")
    counts: tuple = _entry((0, 1, 2, 3), NETWORK, "candidate node counts K")
    search: bool = _entry(True, NETWORK, "False: the ablation without NAS (complete network)")

    def validate(self) -> None:
        for name in ("nodes_per_op", "depth"):
            v = getattr(self, name)
            if not (_is_int(v) and v >= 1):
                _fail(name, "an integer >= 1", v)
        if not (
            isinstance(self.counts, (tuple, list))
            and self.counts
            and all(_is_int(v) and v >= 0 for v in self.counts)
        ):
            _fail("counts", "a non-empty list of integers >= 0", self.counts)


@dataclass(frozen=True)
class TrainingConfig:
    """Epochs, learning rates and loss weights of the network method's phases."""

    warmup_epochs: int = _entry(800, NETWORK, "surrogate warm-up epochs")
    search_epochs: int = _entry(300, NETWORK, "architecture search epochs")
    prune_epochs: int = _entry(300, NETWORK, "pruning epochs")
    tune_epochs: int = _entry(200, NETWORK, "tuning epochs")
    lr_surrogate: float = _entry(1e-2, NETWORK, "warm-up learning rate")
    lr_joint_surrogate: float = _entry(1e-3, NETWORK, "surrogate learning rate in joint phases")
    lr_network: float = _entry(2e-2, NETWORK, "symbolic network learning rate")
    lambda_w: float = _entry(0.1, NETWORK, "weight of the weak loss")
    lambda_r: float = _entry(1e-3, NETWORK, "L1 weight while pruning")
    couple: tuple = _entry(
        ("search", "prune", "tune"), NETWORK, "phases in which the weak loss trains Û"
    )
    precondition: bool = _entry(True, NETWORK, "train ξ relative to each column's size")
    grid_points: int = _entry(8000, NETWORK, "points of the training quadrature grid")
    dtype: str = _entry("float32", NETWORK, "'float32' or 'float64' for training")
    device: str | None = _entry(None, NETWORK, "torch device (None: CUDA when available)")

    def validate(self) -> None:
        for name in ("warmup_epochs", "search_epochs", "prune_epochs", "tune_epochs"):
            v = getattr(self, name)
            if not (_is_int(v) and v >= 0):
                _fail(name, "an integer >= 0", v)
        for name in ("lr_surrogate", "lr_joint_surrogate", "lr_network", "lambda_w", "lambda_r"):
            v = getattr(self, name)
            if not (_is_number(v) and v >= 0):
                _fail(name, "a number >= 0", v)
        if not (_is_int(self.grid_points) and self.grid_points >= 1):
            _fail("grid_points", "an integer >= 1", self.grid_points)
        if self.dtype not in ("float32", "float64"):
            _fail("dtype", "'float32' or 'float64'", self.dtype)
        bad = set(self.couple) - {"search", "prune", "tune"}
        if bad:
            _fail("couple", "phases among 'search', 'prune', 'tune'", self.couple)


@dataclass(frozen=True)
class FinalFitConfig:
    """The network method's final sparse fit on the trained surrogate."""

    final_tests: tuple = _entry(("cap", "axis"), NETWORK, "test-function scales tried")
    final_switch: float = _entry(
        3.0, NETWORK, "keep the first scale whose residual is within this factor of the least"
    )
    final_stack: bool = _entry(
        True, NETWORK, "try all scales' test functions together first (each scale's rows / |b|)"
    )
    uncertainty: bool = _entry(
        True, NETWORK, "bootstrap intervals and the Pareto front of the final fit"
    )
    bootstrap_resamples: int = _entry(200, NETWORK, "row resamples for the intervals")
    interval_envelope: bool = _entry(
        True, NETWORK, "intervals also span the support refitted on the other test functions"
    )
    stack_coefficients: str = _entry(
        "scale",
        NETWORK,
        "with the scales stacked: coefficients refitted on the single scale the residual rule "
        "picks ('scale') or on the stack ('stack')",
    )
    final_test_ratio: float = _entry(3.0, NETWORK, "at least this many test functions per term")
    final_test_budget: float = _entry(
        1e11, NETWORK, "extra test functions only while tests × points × columns stays below"
    )
    final_estimator: str = _entry("tls", NETWORK, "'tls' (total) or 'ls' (least squares)")
    final_grid: str = _entry("full", NETWORK, "'full' (the data's grid) or 'coarse'")
    data_correction: bool = _entry(True, NETWORK, "also try the data's deviation from Û")
    correction_width: float = _entry(0.33, NETWORK, "its smoothing width (mean spacings)")
    readable_slack: float = _entry(
        0.25,
        BOTH,
        "prefer readable terms (no fitted constants inside F; a function's polynomial "
        "expansion) while the residual grows at most this",
    )
    evidence_epochs: int = _entry(
        0,
        NETWORK,
        "noisy 1-D data: judge the variants' supports by the data loss the surrogate keeps "
        "under each, trained this many epochs (0, default: off; 600 is what was measured)",
    )
    evidence_weight: float = _entry(30.0, NETWORK, "the weak residual's weight in that training")
    evidence_noise: float = _entry(
        0.05, NETWORK, "that judgement only where the estimated noise is at least this"
    )
    surrogates: int | str = _entry(
        1,
        NETWORK,
        "the final fit on the mean of this many surrogates, each trained through every phase "
        "with its own child seed (noisy data: the mean's error is smaller; K times the time); "
        "'auto': 3 where the estimated noise is at least surrogates_noise, else 1",
    )
    surrogates_noise: float = _entry(
        0.5, NETWORK, "surrogates='auto': the estimated noise (/ std) from which 3 are used"
    )

    def validate(self) -> None:
        for scale in self.final_tests or ():
            if scale not in ("cap", "paper", "axis"):
                _fail("final_tests", "scales among 'cap', 'paper', 'axis'", self.final_tests)
        if self.final_grid not in ("full", "coarse"):
            _fail("final_grid", "'full' or 'coarse'", self.final_grid)
        if self.final_estimator not in ("tls", "ls"):
            _fail("final_estimator", "'tls' or 'ls'", self.final_estimator)
        if not isinstance(self.final_stack, bool):
            _fail("final_stack", "True or False", self.final_stack)
        if not isinstance(self.interval_envelope, bool):
            _fail("interval_envelope", "True or False", self.interval_envelope)
        if not isinstance(self.uncertainty, bool):
            _fail("uncertainty", "True or False", self.uncertainty)
        if not (_is_int(self.bootstrap_resamples) and self.bootstrap_resamples >= 10):
            _fail("bootstrap_resamples", "an integer >= 10", self.bootstrap_resamples)
        if not (_is_int(self.evidence_epochs) and self.evidence_epochs >= 0):
            _fail("evidence_epochs", "an integer >= 0", self.evidence_epochs)
        if self.surrogates != "auto" and not (_is_int(self.surrogates) and self.surrogates >= 1):
            _fail("surrogates", "an integer >= 1 or 'auto'", self.surrogates)
        if self.stack_coefficients not in ("scale", "stack"):
            _fail("stack_coefficients", "'scale' or 'stack'", self.stack_coefficients)
        for name, low, strict, what in (
            ("correction_width", 0, True, "> 0"),
            ("final_test_ratio", 0, False, "a number >= 0"),
            ("final_test_budget", 0, False, "a number >= 0"),
            ("final_switch", 1, False, "a number >= 1"),
            ("readable_slack", 0, False, "a number >= 0"),
            ("evidence_weight", 0, True, "> 0"),
            ("evidence_noise", 0, False, "a number >= 0"),
            ("surrogates_noise", 0, False, "a number >= 0"),
        ):
            v = getattr(self, name)
            if not (_is_number(v) and (v > low if strict else v >= low)):
                _fail(name, what, v)


_SECTIONS = {
    "library": LibraryConfig,
    "tests": TestFunctionConfig,
    "selection": SelectionConfig,
    "surrogate": SurrogateConfig,
    "search": SearchConfig,
    "training": TrainingConfig,
    "final": FinalFitConfig,
}

#: entry name -> (section, dataclass field)
ENTRIES: dict[str, tuple[str, dataclasses.Field]] = {
    f.name: (section, f) for section, cls in _SECTIONS.items() for f in fields(cls)
}

#: what differs between the methods' starting points
PRESETS: dict[str, dict[str, Any]] = {
    "grid": {},
    "network": {"n_tests": 250},
}

#: options of the old ``network={...}`` dictionary whose name changed (old -> new)
RENAMED = {"test_scale": "scale", "test_function": "test_function"}


def _normalise(name: str, value):
    """Lists become tuples (JSON and TOML give lists), old scale spellings their new names."""
    if isinstance(value, list):
        value = tuple(value)
    if name == "scale" and value in SCALE_ALIASES:
        value = SCALE_ALIASES[value]
    if name == "max_order" and isinstance(value, Mapping):
        value = dict(value)
    return value


@dataclass(frozen=True)
class Config:
    """Every option of a discovery run, validated; ``Config.preset(method, **overrides)``."""

    method: str = "grid"
    library: LibraryConfig = field(default_factory=LibraryConfig)
    tests: TestFunctionConfig = field(default_factory=TestFunctionConfig)
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    surrogate: SurrogateConfig = field(default_factory=SurrogateConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    final: FinalFitConfig = field(default_factory=FinalFitConfig)

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
                raise SymweakError(
                    f"Unknown option `{key}`. Known options: {', '.join(sorted(ENTRIES))}."
                )
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
            value = _normalise("scale", value)
        if name not in ENTRIES:
            raise SymweakError(
                f"Unknown network option(s) [{key!r}]; known: {', '.join(sorted(ENTRIES))}."
            )
        new[name] = value
    warnings.warn(
        "discover(network={...}) is deprecated and will be removed in the next release; pass "
        "the options as keywords instead: " + ", ".join(f"{k}={v!r}" for k, v in new.items()) + ".",
        DeprecationWarning,
        stacklevel=3,
    )
    return new

"""The option groups of :class:`~._config.Config`: one frozen dataclass per group (data,
library, test functions, selection, surrogate, training, reporting), each entry with its
default, the methods that read it and a one-line doc, validated with a message that names
the entry."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .._errors import SymweakError

GRID, NETWORK = ("grid",), ("network",)
#: the paper's kernel count per feature (appendix: N = 1000); what ``kernels="auto"`` trains
#: where it does not choose, and the size the plain-MLP ablation is matched to
PAPER_KERNELS = 1000


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
class DataConfig:
    """How the observations are split and fed to the surrogate."""

    validation: float = _entry(0.1, NETWORK, "held-out fraction (early stopping, kernel choice)")
    max_points: int | str | None = _entry(
        "auto", NETWORK, "data points per step: 'auto' (20 000 in 1-D space, 5 000 in 2-D), None"
    )

    def validate(self) -> None:
        if not (_is_number(self.validation) and 0 <= self.validation < 1):
            _fail("validation", "a fraction in [0, 1)", self.validation)
        mp = self.max_points
        if not (mp in ("auto", None) or (_is_int(mp) and mp > 0)):
            _fail("max_points", "'auto', None or a positive integer", mp)


@dataclass(frozen=True)
class LibraryConfig:
    """Candidate terms: the grid method's fixed library; the bounds of the network's
    read-back."""

    degree: int = _entry(3, GRID, "monomials of the fields up to this degree")
    max_order: dict | None = _entry(  # noqa: RUF009
        None, BOTH, "highest derivative order per space coordinate (default 4 in 1-D, 2 in 2-D)"
    )
    include_constant: bool = _entry(False, BOTH, "include the constant F = 1")
    unary: bool = _entry(
        True, GRID, "apply the operator set's functions (sin, tanh, …) to each field"
    )

    def validate(self) -> None:
        if not (_is_int(self.degree) and self.degree >= 1):
            _fail("degree", "an integer >= 1", self.degree)
        if self.max_order is not None and not (
            isinstance(self.max_order, Mapping)
            and all(_is_int(v) and v >= 0 for v in self.max_order.values())
        ):
            _fail("max_order", "a mapping {coordinate: order >= 0}", self.max_order)
        for name in ("include_constant", "unary"):
            if not isinstance(getattr(self, name), bool):
                _fail(name, "True or False", getattr(self, name))


@dataclass(frozen=True)
class TestFunctionConfig:
    """The test functions Φ_k (compactly supported bumps) and their radii."""

    n_tests: int = _entry(1000, BOTH, "number of test functions K")
    test_function: str = _entry("poly", BOTH, "'poly', 'poly:P' or 'exp'")
    eta: tuple = _entry((0.2, 0.4), BOTH, "the paper's (η_min, η_max)")
    scales: tuple = _entry(
        ("cap", "axis"),
        BOTH,
        "radii tried by the final selection, in order ('cap', 'paper', 'axis', 'spectrum'); "
        "the network trains with the first, and left unset it takes ('spectrum', 'cap') where "
        "one coordinate spans over 8 times another (not a few snapshots)",
    )
    scale_switch: float = _entry(
        1.5,
        BOTH,
        "among equally good fits, keep the first scale within this factor of the "
        "least residual (network preset: 3)",
    )
    min_points: int = _entry(
        0, NETWORK, "keep test functions whose support holds this many observations (0: all)"
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
        s = self.scales
        if not (isinstance(s, (tuple, list)) and s and all(x in SCALES for x in s)):
            _fail("scales", f"a non-empty list of {', '.join(map(repr, SCALES))}", s)
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
        if not (_is_number(self.minor_ratio) and self.minor_ratio >= 0):
            _fail("minor_ratio", "a number >= 0", self.minor_ratio)


@dataclass(frozen=True)
class SurrogateConfig:
    """The forward response learner Û = MLP(FE(t, X)) (paper: N = 1000, d' = 4, 2 × 32 tanh),
    and how many are trained.

    ``kernels="auto"``: one Gaussian per 10 observations, or per 40 when the data are noisy,
    taken to the nearest of 64, 250 and 1000 (one warm-up). ``kernels="compare"``: warm up
    one surrogate per count and keep the smallest whose held-out loss is within one standard
    error of the best (three warm-ups; on more than 100 000 observations, or with
    ``validation=0``, the paper's 1000)."""

    kernels: int | str = _entry(
        "auto", NETWORK, "Gaussians per feature N, 'auto' (a rule) or 'compare' (held-out)"
    )
    features: int = _entry(4, NETWORK, "embedding features d'")
    hidden: int = _entry(32, NETWORK, "MLP width")
    layers: int = _entry(2, NETWORK, "MLP hidden layers")
    activation: str = _entry("tanh", NETWORK, "'tanh', 'sin' or 'gelu'")
    embedding: bool = _entry(True, NETWORK, "False: the ablation without FE_φ (a plain MLP)")
    surrogates: int | str = _entry(
        1,
        NETWORK,
        "train this many surrogates with child seeds, combined as `combine` says ('mean': "
        "each more one a warm-up and a tuning phase, about half a run; 'vote': K whole runs); "
        "'auto': 3 where the estimated noise / std is at least 0.5",
    )

    combine: str = _entry(
        "mean",
        NETWORK,
        "with surrogates > 1: 'mean' (one final fit on their mean) or 'vote' (a whole run per "
        "seed; the shown run's terms get the fraction of runs that kept them)",
    )

    def validate(self) -> None:
        if self.combine not in ("mean", "vote"):
            _fail("combine", "'mean' or 'vote'", self.combine)
        k = self.kernels
        if k not in ("auto", "compare") and not (_is_int(k) and k > 0):
            _fail("kernels", "'auto', 'compare' or a positive integer", k)
        for name in ("features", "hidden", "layers"):
            v = getattr(self, name)
            if not (_is_int(v) and v >= 1):
                _fail(name, "an integer >= 1", v)
        if self.activation not in ("tanh", "sin", "gelu"):
            _fail("activation", "'tanh', 'sin' or 'gelu'", self.activation)
        if not isinstance(self.embedding, bool):
            _fail("embedding", "True or False", self.embedding)
        if self.surrogates != "auto" and not (_is_int(self.surrogates) and self.surrogates >= 1):
            _fail("surrogates", "an integer >= 1 or 'auto'", self.surrogates)


@dataclass(frozen=True)
class TrainingConfig:
    """The network method's phases: epochs, the architecture search, precision, device
    (learning rates and loss weights are the paper's, fixed in ``discover/_settings.py``)."""

    warmup_epochs: int = _entry(
        800,
        NETWORK,
        "surrogate warm-up epochs (a ceiling: it stops once the held-out loss has not improved "
        "for a quarter of them)",
    )
    search_epochs: int = _entry(300, NETWORK, "architecture search epochs")
    prune_epochs: int = _entry(300, NETWORK, "pruning epochs")
    tune_epochs: int = _entry(200, NETWORK, "tuning epochs")
    depth: int = _entry(3, NETWORK, "symbolic network layers L_max")
    search: bool = _entry(True, NETWORK, "False: the ablation without NAS (complete network)")
    dtype: str = _entry("float32", NETWORK, "'float32' or 'float64' for training")
    device: str | None = _entry(None, NETWORK, "torch device (None: CUDA when available)")

    def validate(self) -> None:
        for name in ("warmup_epochs", "search_epochs", "prune_epochs", "tune_epochs"):
            v = getattr(self, name)
            if not (_is_int(v) and v >= 0):
                _fail(name, "an integer >= 0", v)
        if not (_is_int(self.depth) and self.depth >= 1):
            _fail("depth", "an integer >= 1", self.depth)
        if not isinstance(self.search, bool):
            _fail("search", "True or False", self.search)
        if self.dtype not in ("float32", "float64"):
            _fail("dtype", "'float32' or 'float64'", self.dtype)


@dataclass(frozen=True)
class ReportingConfig:
    """What is computed beside the equation."""

    uncertainty: bool = _entry(
        True,
        BOTH,
        "what the data determine (verdicts, alternatives, detection floors), bootstrap "
        "intervals, each term's price and the Pareto front",
    )

    def validate(self) -> None:
        if not isinstance(self.uncertainty, bool):
            _fail("uncertainty", "True or False", self.uncertainty)

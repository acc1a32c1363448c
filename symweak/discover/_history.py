"""What a discovery run records, as dataclasses (serialised with :func:`dataclasses.asdict`).

Every record reads as attributes (``res.history.phases["tune"].seconds``); ``to_dict`` and
``History.from_dict`` are what ``Discovery.save`` / ``load`` write and read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .._files import jsonable

__all__ = [
    "FinalRecord",
    "FitRecord",
    "GridRecord",
    "History",
    "PhaseRecord",
    "SurrogateChoice",
    "TuneRecord",
    "WarmupRecord",
]


def _subsample(values: list, n: int = 50) -> list:
    """At most about ``n`` evenly spaced entries (what a history keeps of a loss curve)."""
    return values[:: max(1, len(values) // n)]


@dataclass
class PhaseRecord:
    """A training phase: its time, epochs run and loss curves (subsampled)."""

    seconds: float
    epochs: int
    data_loss: list = field(default_factory=list)
    weak_loss: list = field(default_factory=list)


@dataclass
class WarmupRecord:
    """The surrogate warm-up: the kept kernel count; with ``kernels="compare"``, the
    held-out loss and its standard error per count (``{kernels: [loss, se]}``); with
    ``kernels="auto"``, the estimated noise per field (fraction of its spread) the rule read;
    ``aspect``: the Gaussians' initial width along each coordinate relative to a round one
    where a clean field is much finer along one axis (``{coordinate: factor}``; empty:
    round)."""

    seconds: float
    final_loss: float | None
    kernels: int
    kernel_choice: dict = field(default_factory=dict)
    noise: dict = field(default_factory=dict)
    aspect: dict = field(default_factory=dict)


@dataclass
class TuneRecord:
    """Tuning: the weak loss and the least-squares coefficients over the epochs
    (``coefficients[lhs][term] = [values]``)."""

    seconds: float
    epochs: int
    weak_loss: list = field(default_factory=list)
    coefficients: dict = field(default_factory=dict)


@dataclass
class FinalRecord:
    """The final sparse fit: the kept test-function variant, how many test functions and
    the relative residual of every variant tried."""

    seconds: float
    tests: str
    n_tests: int
    residuals: dict = field(default_factory=dict)
    #: with an open-form term (fitted constants inside F) in the fit: the residuals of the
    #: fit with it ("open") and of the fit from terms without ("readable"), and which was kept
    readable: dict = field(default_factory=dict)
    #: the variant whose system gave the coefficients (the kept one, or with the scales
    #: stacked, the single scale the residual rule picks)
    coefficients: str = ""


@dataclass
class SurrogateChoice:
    """The surrogate the final fit used: the phase and epoch of the lowest held-out loss."""

    phase: str
    epoch: int
    loss: float


@dataclass
class FitRecord:
    """One equation's sparse fit."""

    lhs: str
    residual: float
    method: str
    threshold: float | None = None
    library_size: int | None = None
    #: stability selection: ``{term: inclusion probability}`` over the equation's library
    probabilities: dict = field(default_factory=dict)
    #: bootstrap over the final system's test functions: ``{term: [low, high]}`` of each kept
    #: coefficient (95 %), the same estimator as the coefficients shown
    intervals: dict = field(default_factory=dict)
    #: other supports: ``[{"terms": {term: coefficient}, "complexity", "held_out",
    #: "chosen"}]``, simplest first, scored on held-out test functions
    pareto: list = field(default_factory=list)
    #: ``{term: held-out residual}`` of the kept support without that term (same halves of
    #: the test functions as ``pareto``): what the term's absence would leave unexplained
    without: dict = field(default_factory=dict)
    #: what the data determine (docs/verdicts.md): ``{term: "determined" | "uncertain"}``
    #: over the terms of ``alternatives`` (others are excluded by the data)
    verdicts: dict = field(default_factory=dict)
    #: the equations the data cannot tell apart from the best one, closest first:
    #: ``[{"terms": {term: coefficient}, "held_out", "margin", "reason"}]``
    alternatives: list = field(default_factory=list)
    #: ``{term: smallest |coefficient| these data detect}`` for the uncertain terms
    floors: dict = field(default_factory=dict)
    #: the same for every excluded candidate, those that could hold the largest part of
    #: the left-hand side undetected first
    excluded: dict = field(default_factory=dict)
    #: an equation that couples no points, checked on the data's own time series at the
    #: places observed through time: ``{"places", "unexplained", "noise"}``
    #: (:mod:`symweak.discover._pointwise`)
    time_series: dict = field(default_factory=dict)
    #: the best of the Pareto front's equations that fit markedly better than the returned
    #: one (:func:`symweak.discover._verdicts.richer_fronts`): ``{"held_out", "returned",
    #: "terms", "count"}``; empty where none does
    richer: dict = field(default_factory=dict)
    #: where the final fit's surrogate is a tuned one: the same equation judged on the
    #: surrogate before tuning, ``{"phase", "verdicts", "disputed"}`` (the terms one
    #: judgement determines and the other excludes: uncertain in ``verdicts``;
    #: :mod:`.network._untuned`)
    untuned: dict = field(default_factory=dict)
    #: ``{term: likelihood ratio}`` of the weakest determined terms refitted on the data
    #: with and without them (:mod:`.network._refit`; below its cutoff: uncertain)
    refits: dict = field(default_factory=dict)
    #: where the check on the data returned a swap the data fit better in place of the
    #: selected equation: ``{"replaced", "by", "statistic", "selected"}`` (the selected
    #: equation's ``{term: coefficient}``; :mod:`.network._adopt`)
    adopted: dict = field(default_factory=dict)


@dataclass
class GridRecord:
    """The full-grid method's run."""

    seconds: float
    library: list
    n_tests: int
    test_function: str
    radii: dict
    rules: list = field(default_factory=list)
    non_finite_functions: list = field(default_factory=list)
    noise_estimate: dict | None = None
    #: the test-function radii kept (one of ``scales``) and each one's
    #: mean relative weak-form residual
    scale: str | None = None
    residuals: dict = field(default_factory=dict)


_PHASE_TYPES = {"warmup": WarmupRecord, "tune": TuneRecord, "final": FinalRecord}


@dataclass
class History:
    """Per-phase records of a run. ``phases``: ``{name: record}`` in the order they ran
    (network method); ``grid``: the full-grid method's record."""

    phases: dict = field(default_factory=dict)
    architecture: dict | None = None
    network_outputs: list = field(default_factory=list)
    library: list = field(default_factory=list)
    #: product terms from ``inputs:`` that joined the final fit (short text)
    products: list = field(default_factory=list)
    #: products of derivatives offered by default (network path): ``{"offered", "residuals",
    #: "kept"}``, with ``"widened_residuals"`` and ``"used"`` where the final fit was made
    #: again with them (None when none were offered)
    widened: dict | None = None
    #: the library's monomial neighbours offered by default (network path), recorded like
    #: ``widened`` (None when none were offered)
    neighbours: dict | None = None
    #: U(1) phase symmetry tried for two fields (network path): ``{"rule", "residuals",
    #: "symmetric_residuals", "equations", "kept"}`` (None when it was not tried)
    symmetry: dict | None = None
    #: ``surrogates=K, combine="vote"``: the other runs, ``[{"seed", "equations"}]``
    ensemble: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    surrogate: SurrogateChoice | None = None
    #: how many surrogates the final fit integrated the mean of (``surrogates=K``)
    surrogates: int = 1
    fits: list = field(default_factory=list)
    grid: GridRecord | None = None
    interrupted: bool = False
    #: each field's observed values: ``{field: {"quantiles": 0 %, 1 %, …, 100 %, "noise":
    #: the run's noise estimate in the field's units}}`` (:mod:`._posed`)
    observed: dict = field(default_factory=dict)
    #: ``{lhs: {"replaced", "why"}}``: the selection's equation was ill-posed and the
    #: closest well-posed one the data cannot tell apart from it is returned (:mod:`._posed`)
    posed: dict = field(default_factory=dict)

    def seconds(self) -> dict[str, float]:
        """``{phase: seconds}`` of every phase that ran (``{"grid": s}`` on the grid method)."""
        if self.grid is not None:
            return {"grid": self.grid.seconds}
        return {name: rec.seconds for name, rec in self.phases.items()}

    def to_dict(self) -> dict[str, Any]:
        return jsonable(asdict(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> History:
        """Inverse of :meth:`to_dict` (unknown keys of older files are ignored)."""
        if not data:
            return cls()

        def build(kind, values):
            if values is None:
                return None
            names = {f.name for f in fields(kind)}
            return kind(**{k: v for k, v in values.items() if k in names})

        phases = {
            name: build(_PHASE_TYPES.get(name, PhaseRecord), rec)
            for name, rec in (data.get("phases") or {}).items()
        }
        return cls(
            phases=phases,
            architecture=data.get("architecture"),
            network_outputs=list(data.get("network_outputs") or []),
            library=list(data.get("library") or []),
            products=list(data.get("products") or []),
            widened=data.get("widened"),
            neighbours=data.get("neighbours"),
            symmetry=data.get("symmetry"),
            ensemble=list(data.get("ensemble") or []),
            rules=list(data.get("rules") or []),
            surrogate=build(SurrogateChoice, data.get("surrogate")),
            surrogates=int(data.get("surrogates", 1)),
            fits=[build(FitRecord, f) for f in data.get("fits") or []],
            grid=build(GridRecord, data.get("grid")),
            interrupted=bool(data.get("interrupted", False)),
            observed=dict(data.get("observed") or {}),
            posed=dict(data.get("posed") or {}),
        )

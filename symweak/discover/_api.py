"""``symweak.discover``: inputs → :class:`Problem` → method → :class:`Discovery`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from .._errors import DataError, SymweakError
from .._memory import keep_freed_memory
from ..data import check_float32
from ..grammar import Constraints, OperatorSet
from ..ir import System, Term
from ._config import Config, network_options
from ._pointwise import check_pointwise
from ._posed import observed_once
from ._problem import Problem
from ._result import Discovery
from ._snapshots import snapshot_times
from ._testfunctions import lattice_axis_ok
from ._units import SPECTRAL, long_space, long_time
from ._verdicts import widen_to_precision

__all__ = ["METHODS", "PAPER_OPS", "discover"]

log = logging.getLogger("symweak")

#: The paper's operator set (appendix, table of hyperparameters).
PAPER_OPS = "id,^2,^3,sin,*"

#: the methods ``discover`` runs (``"auto"`` picks one from the data)
METHODS = ("auto", "grid", "network")


def _auto_method(obs) -> str:
    """The full-grid method where the data fill a lattice fine and even enough to integrate
    on (:func:`lattice_axis_ok`), the network method otherwise: sensors at 24 scattered
    positions × every time fill a lattice, but a test function there spans a few uneven
    nodes (the heat equation came back with ten terms in 2 s), while the surrogate can be
    integrated anywhere."""
    if not obs.is_full_grid:
        return "network"
    coarse = _coarse_axes(obs)
    if coarse:
        log.info(
            "symweak: the data fill a lattice, but its %s axis is too coarse or uneven for the "
            "full-grid method (%s points); using the network method",
            ", ".join(coarse),
            ", ".join(str(len(a)) for a in coarse.values()),
        )
        return "network"
    return "grid"


def _coarse_axes(obs) -> dict:
    """The axes of the data's lattice too coarse or uneven to integrate on (none off a grid)."""
    if obs.grid is None:
        return {}
    return {n: a for n, a in obs.grid.axes.items() if not lattice_axis_ok(a)}


def warn_coarse_grid(obs) -> str | None:
    """With ``method="grid"`` forced: a warning (logged and returned) when an axis of the
    lattice is too coarse for the full-grid method (6 snapshots: u_t = 0.0338 u, silently)."""
    coarse = _coarse_axes(obs)
    if not coarse:
        return None
    text = (
        f"symweak: method='grid' on a lattice whose {', '.join(coarse)} axis is too coarse or "
        f"uneven to integrate test functions on ({', '.join(str(len(a)) for a in coarse.values())}"
        " points: each support spans a handful of nodes); expect a poor equation. "
        "method='auto' takes the network method for these data."
    )
    log.warning("%s", text)
    return text


def _config(problem: Problem, method: str, config, overrides: Mapping[str, Any]) -> Config:
    """The run's configuration: ``config`` (a Config or a dict of entries) or the method's
    preset, with ``overrides`` applied."""
    overrides = dict(overrides)
    if isinstance(overrides.get("max_order"), int) and not isinstance(overrides["max_order"], bool):
        overrides["max_order"] = {n: overrides["max_order"] for n in problem.obs.space_names}
    if config is None:
        return Config.preset(method, **overrides)
    if isinstance(config, Mapping):
        return Config.preset(method, **{**config, **overrides})
    if not isinstance(config, Config):
        raise SymweakError(
            f"config must be a symweak.Config or a dict of options, got {type(config).__name__}."
        )
    if config.method != method:
        raise SymweakError(
            f"config is for the {config.method} method but this run uses the {method} method; "
            f"build it with Config.preset({method!r}) or pass method={config.method!r}."
        )
    return config.with_overrides(overrides)


def _configured(problem: Problem, method: str, config, given: Mapping) -> tuple[Config, dict]:
    """The run's configuration (:func:`_config`; on the network method the radii of
    lopsided units where no ``scales`` were given: :func:`_lopsided`) and its settings."""
    cfg, record = _config(problem, method, config, given), problem.record()
    auto = method == "network" and "scales" not in given and not isinstance(config, Config)
    cfg, chosen = _lopsided(problem, record["spans"], cfg, config) if auto else (cfg, {})
    return cfg, {**cfg.to_dict(), **record, **chosen}


def _lopsided(problem: Problem, spans: Mapping, cfg: Config, config) -> tuple[Config, dict]:
    """(``cfg``, the settings that record the choice) where ``config`` did not choose
    ``scales``: the radii the field's spectrum reads (:data:`._units.SPECTRAL`) where one
    coordinate spans more than 8 times another's range — time
    (:func:`._units.long_time` of the coordinates' ``spans``) or a space axis
    (:func:`._units.long_space`) — and the data are not a few snapshots
    (:func:`._snapshots.snapshot_times`: there the paper's radius stays)."""
    if isinstance(config, Mapping) and "scales" in config:
        return cfg, {}
    ratio = long_time(spans)
    if ratio is not None:
        axis, short = "t", min((n for n in spans if n != "t"), key=lambda n: spans[n])
    elif (space := long_space(spans)) is not None:
        (axis, ratio), short = space, min(spans, key=lambda n: spans[n])
    else:
        return cfg, {}
    if snapshot_times(problem.obs) is not None:
        return cfg, {"snapshots": axis}  # the paper's radius: the warning says so
    log.info(
        "symweak: %s spans %.3g times the range of %s: the test functions take the radii the "
        "field's spectrum reads (scales=%r; pass scales=... to choose)", axis, ratio, short,
        SPECTRAL,
    )  # fmt: skip
    return cfg.with_overrides({"scales": SPECTRAL}), {"spectral": axis}


def _network(problem, cfg, progress, settings, rebuild):
    """The network method, and with ``combine="vote"`` the other runs folded in
    (``rebuild(seed)``: the same problem with another seed; :class:`._ensemble.Voters`)."""
    from . import network as network_method
    from ._ensemble import Voters, combine, member_seeds

    voters = None
    count = cfg.surrogate.surrogates
    if cfg.surrogate.combine == "vote" and count != "auto" and int(count) > 1:
        # a known count: the other runs start now, beside this one
        voters = Voters(member_seeds(problem.seed, int(count)), cfg, rebuild)
    try:
        with voters.beside() if voters is not None else nullcontext():
            equations, surrogate, history = network_method.run(problem, cfg, progress)
        if history.interrupted:
            log.warning("symweak: the run was interrupted; returning the best result so far")
        settings["interrupted"] = history.interrupted
        ensemble = 1
        if cfg.surrogate.combine == "vote":
            ensemble = network_method.how_many_surrogates(cfg.surrogate, history, problem)
        if ensemble > 1 and not history.interrupted:
            if voters is None:  # "auto": the count is known now
                voters = Voters(member_seeds(problem.seed, ensemble), cfg, rebuild)
            members, stopped = voters.collect(progress)
            history.interrupted |= stopped
            settings["interrupted"] = history.interrupted
            combine(equations, history, members)
            settings["ensemble"] = ensemble
    finally:
        if voters is not None:
            voters.close()
    return equations, surrogate, history


#: the network method needs at least this many observations per coefficient of a quadratic
#: in the coordinates (60 for t, x): the noise estimate fits such a quadratic to each point's
#: 3 × 6 nearest neighbours, and 15 scattered points came back with every term uncertain
POINTS_PER_COEFFICIENT = 10


def _noise(history) -> float:
    """The warm-up's estimated noise / std, the largest over the fields (0 without one)."""
    noise = getattr((getattr(history, "phases", None) or {}).get("warmup"), "noise", None) or {}
    return max((float(v) for v in noise.values() if v == v), default=0.0)


def _check_enough_points(obs) -> None:
    D = len(obs.coord_names)
    need = POINTS_PER_COEFFICIENT * (1 + D + D * (D + 1) // 2)
    if len(obs) < need:
        raise DataError(
            f"Only {len(obs)} observations for a PDE in {', '.join(obs.coord_names)}: the "
            f"network method needs at least {need} ({POINTS_PER_COEFFICIENT} per coefficient "
            "of a quadratic in the coordinates, on which the noise estimate and the "
            "surrogate's finest features rest). Provide more points."
        )


def discover(
    data,
    ops: str | OperatorSet | None = PAPER_OPS,
    lhs: str | Term | None = None,
    seed: int = 0,
    *,
    constraints: str | Constraints | None = None,
    method: str = "auto",
    config: Config | Mapping[str, Any] | None = None,
    rules: Sequence | None = None,
    progress: bool = True,
    network: Mapping[str, Any] | None = None,
    **overrides,
) -> Discovery:
    """Discover the PDE governing ``data``.

    Parameters
    ----------
    data: :class:`~symweak.Observations`, a file path (``.npz .mat .h5 .nc``) or an xarray object.
    ops: operator set, e.g. ``"+,-,*,sin"`` (default: the paper's ``"id,^2,^3,sin,*"``).
    lhs: left-hand side(s), e.g. ``"u_t"``, ``"u_tt"``, ``"u_t, v_t"`` (default: first field's u_t).
    seed: every random choice (test functions, sampling, initialisation) follows it.
    constraints: constraint text (see docs/grammar.md) or a parsed :class:`Constraints`.
    method: ``"auto"`` (the full-grid method when the data fill a grid, else the network
        method), ``"grid"``, or ``"network"``.
    config: a :class:`~symweak.discover.Config` (``Config.preset(method, ...)``) or a dict of
        options; default: the method's preset.
    rules: extra rewrite rules (:class:`symweak.rules.Rule` objects, e.g. ``Galilean("u")``,
        ``U1("u", "v")`` or your own) applied to the candidate library after those named in
        the constraints (``galilean(u, v)``, ``u1(u, v)``, ``rule NAME: ...``).
    progress: progress bars while training.
    overrides: any option of :class:`~symweak.discover.Config` by name, e.g. ``n_tests=500``,
        ``kernels=250``, ``criterion="bic"``, ``max_order=3`` (``docs/options.md``,
        ``symweak.discover.ENTRIES``); an option the chosen method does not read is an error.
        ``surrogates=K, combine="vote"`` runs K − 1 more whole runs with child seeds and
        folds their equations into the shown run's inclusion probabilities and intervals
        (:mod:`symweak.discover._ensemble`).
    network: deprecated — the old dictionary of network options; pass them as keywords.
    """
    if not isinstance(progress, (bool, np.bool_)):
        raise SymweakError(f"progress must be True or False, got {progress!r}.")
    problem = Problem.build(data, ops, lhs, seed, constraints, rules)
    keep_freed_memory()  # before the first training step: see symweak._memory
    if method not in METHODS:
        raise SymweakError(f"method must be 'auto', 'grid' or 'network', got {method!r}.")
    if method == "auto":
        method = _auto_method(problem.obs)
    elif method == "grid":
        warn_coarse_grid(problem.obs)
    cfg, settings = _configured(problem, method, config, {**network_options(network), **overrides})
    if method == "network":
        check_float32(problem.obs.coords)  # the surrogate trains in float32
        _check_enough_points(problem.obs)
        rebuild = lambda s: Problem.build(data, ops, lhs, s, constraints, rules)  # noqa: E731
        equations, surrogate, history = _network(problem, cfg, progress, settings, rebuild)
    else:
        from . import _grid

        if progress:
            log.info("symweak: full-grid fast path on %s", problem.obs.describe().splitlines()[0])
        equations, history = _grid.run(problem, cfg)
        surrogate = None
    widen_to_precision(equations, history.fits, _noise(history))
    check_pointwise(problem.obs, equations, history.fits)
    observed_once(problem, history)
    result = Discovery(
        System(equations),
        settings=settings,
        seed=problem.seed,
        history=history,
        method=method,
        surrogate=surrogate,
        coords=problem.obs.coord_names,
        fields=problem.obs.field_names,
    )
    for warning in result.warnings():
        log.warning("symweak: %s", warning)
    return result

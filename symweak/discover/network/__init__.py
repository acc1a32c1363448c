"""The network method (paper Algorithm 1) for scattered or partial data: surrogate warm-up,
architecture search, pruning, extraction, tuning and the final sparse fit — one module per
phase, each reading and updating the shared :class:`~._state.NetworkState`.

Ctrl-C in any phase stops that phase and goes on with what has been learned so far; later
training phases are skipped and the final fit runs on the best surrogate seen.
"""

from __future__ import annotations

import torch

from ..._errors import SymweakError
from ..._seeds import deterministic_torch
from ..._trainer import deferred_interrupts, profiler_range
from ...surrogate import choose_device
from .._history import History
from .._settings import AUTO_SURROGATES as AUTO_SURROGATES
from . import _extract, _final, _prune, _refit, _search, _symmetry, _tune, _warmup, _widen
from ._correction import residual_correction as residual_correction
from ._faint import faint
from ._forking import torch_threads
from ._members import Members
from ._state import NetworkState
from ._warmup import choose_kernels as choose_kernels
from ._warmup import noise_ratio, surrogates_for

__all__ = ["choose_kernels", "residual_correction", "run"]


def run(problem, config, progress: bool = True):
    """Run every phase; returns (equations, surrogate, history). Same seed, same result:
    torch's deterministic algorithms are on while it runs (:func:`deterministic_torch`)."""
    if problem.ops is None or not len(problem.ops):
        raise SymweakError("The network path needs an operator set, e.g. ops='id,^2,^3,sin,*'.")
    with deterministic_torch():
        return _run(problem, config, progress)


def _train(problem, config, device, history, progress: bool):
    """Phases 1-4 (warm-up, search, pruning with extraction, tuning) and the more
    surrogates of ``surrogates=K`` (:mod:`._members`; started once the warm-up has settled
    their count, so that they warm up while this run searches): (state, candidates)."""
    torch.manual_seed(problem.seed)
    warm = _warmup.run(problem, config, device, history, progress)
    state = NetworkState(problem, config, device, warm, history)
    count = how_many_surrogates(config.surrogate, history, problem)
    members = None
    if count > 1 and config.surrogate.combine == "mean" and not state.interrupted:
        members = Members(problem, config, device, count, progress)
    try:
        with torch_threads(members.threads if members is not None else None):
            _search.run(state, progress)
            _prune.run(state, progress)
            # the read-back is SymPy work outside any training loop: Ctrl-C there is held
            # until it ends (the tuning then runs no epochs), not lost with the run
            with deferred_interrupts("the read-back") as held:
                candidates = _extract.run(state)
            state.interrupted |= held["interrupted"]
            best = state.best
            state.untuned = (best.phase, best.state, best.loss)  # replaced, never changed
            if members is not None and not state.interrupted:
                members.start(candidates)  # the members tune while this run does
            _tune.run(state, candidates, progress)
        if members is not None:
            state.members, stopped = members.collect(candidates, state.interrupted)
            state.interrupted |= stopped
            history.surrogates = 1 + len(state.members)
    finally:
        if members is not None:
            members.close()
    return state, candidates


def how_many_surrogates(cfg, history, problem) -> int:
    """``cfg.surrogates`` (the surrogate group), or for ``"auto"`` ``AUTO_SURROGATES`` where
    the noise estimate (noise / std, the largest over the fields; the warm-up's, or made here
    when the warm-up made none) is at least ``SURROGATES_NOISE``, else 1."""
    if cfg.surrogates != "auto":
        return int(cfg.surrogates)
    return surrogates_for(cfg, noise_ratio(history, problem))


def _run(problem, config, progress: bool):
    device = choose_device(config.training.device)
    history = History()
    state, candidates = _train(problem, config, device, history, progress)
    with deferred_interrupts("the final fit") as held, profiler_range("final"):
        equations = _final.run(state, candidates)
        equations, candidates = _widen.neighbours_by_default(state, candidates, equations)
        equations = _widen.products_by_default(state, candidates, equations)
        equations = _symmetry.phase_symmetry(state, candidates, equations)
        if config.reporting.uncertainty:
            equations = _refit.check(state, candidates, equations)
            for record in history.fits:
                faint(record)
    state.interrupted |= held["interrupted"]
    history.interrupted = state.interrupted
    state.surrogate.eval()
    return equations, state.surrogate, history

"""The network method (paper Algorithm 1) for scattered or partial data: surrogate warm-up,
architecture search, pruning, extraction, tuning and the final sparse fit — one module per
phase, each reading and updating the shared :class:`~._state.NetworkState`.

Ctrl-C in any phase stops that phase and goes on with what has been learned so far; later
training phases are skipped and the final fit runs on the best surrogate seen.
"""

from __future__ import annotations

import dataclasses

import torch

from ..._errors import SymweakError
from ..._seeds import child_seed, deterministic_torch
from ..._trainer import announce, deferred_interrupts, profiler_range
from ...surrogate import choose_device
from .._history import History
from .._settings import AUTO_SURROGATES as AUTO_SURROGATES
from . import _extract, _final, _prune, _search, _symmetry, _tune, _warmup, _widen
from ._correction import residual_correction as residual_correction
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


def _train(problem, config, device, history, progress: bool, candidates=None):
    """Phases 1-4 (warm-up, search, pruning with extraction, tuning): (state, candidates).
    Given ``candidates`` (one of the more surrogates of ``surrogates=K``): the warm-up and
    the tuning phase on those candidates, without a search or pruning of its own."""
    torch.manual_seed(problem.seed)
    member = candidates is not None
    warm = _warmup.run(problem, config, device, history, progress, member=member)
    state = NetworkState(problem, config, device, warm, history)
    if not member:
        _search.run(state, progress)
        _prune.run(state, progress)
        candidates = _extract.run(state)
    _tune.run(state, candidates, progress)
    return state, candidates


def _members(problem, config, device, progress: bool, state, count: int, candidates) -> list:
    """``surrogates - 1`` more surrogates, each from its own child seed (initialisation,
    Gaussians, held-out split, test functions, batches), warmed up and tuned on the run's
    own ``candidates`` (their own candidates would never be used; search and pruning were
    half a member's time), restored to its best held-out checkpoint. The final fit
    integrates the mean of all of them: their errors differ where the data leave the field
    open. It stops early when the run was interrupted."""
    members = []
    base = child_seed(problem.seed, "surrogates")
    for k in range(1, count):
        if state.interrupted:
            break
        announce(f"surrogate {k + 1} of {count}", progress)
        member_problem = dataclasses.replace(problem, seed=base + 7919 * k)
        member, _ = _train(member_problem, config, device, History(), progress, candidates)
        if member.check is not None:
            member.best.restore()
        member.surrogate.eval()
        members.append(member.surrogate)
        state.interrupted |= member.interrupted
    return members


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
    count = how_many_surrogates(config.surrogate, history, problem)
    if count > 1 and config.surrogate.combine == "mean" and not state.interrupted:
        state.members = _members(problem, config, device, progress, state, count, candidates)
        history.surrogates = 1 + len(state.members)
    with deferred_interrupts("the final fit") as held, profiler_range("final"):
        equations = _final.run(state, candidates)
        equations, candidates = _widen.neighbours_by_default(state, candidates, equations)
        equations = _widen.products_by_default(state, candidates, equations)
        equations = _symmetry.phase_symmetry(state, candidates, equations)
    state.interrupted |= held["interrupted"]
    history.interrupted = state.interrupted
    state.surrogate.eval()
    return equations, state.surrogate, history

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
from . import _extract, _final, _prune, _search, _tune, _warmup, _widen
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


def _train(problem, config, device, history, progress: bool):
    """Phases 1-4 (warm-up, search, pruning with extraction, tuning): (state, candidates)."""
    torch.manual_seed(problem.seed)
    warm = _warmup.run(problem, config, device, history, progress)
    state = NetworkState(problem, config, device, warm, history)
    _search.run(state, progress)
    _prune.run(state, progress)
    candidates = _extract.run(state)
    _tune.run(state, candidates, progress)
    return state, candidates


def _member(problem, config, device, progress: bool, candidates) -> NetworkState:
    """One more surrogate for the mean: the warm-up from ``problem``'s seed, then the tuning
    phase (the surrogate trained on ℒ_data + λ_w ℒ_weak, ξ by least squares every step) on
    the run's own candidate library. No search or pruning: a member's own candidates were
    never used, and on Burgers (10 % as point columns, σ 0.2, K = 3, seeds 0–2) the mean
    came out as accurate as with members trained through every phase (E∞ 0.011, 0.029,
    0.027 against 0.019, 0.012, 0.029) in 60 % of the time (18–27 s against 33–46 s)."""
    torch.manual_seed(problem.seed)
    history = History()
    warm = _warmup.run(problem, config, device, history, progress, member=True)
    member = NetworkState(problem, config, device, warm, history)
    _tune.run(member, candidates, progress)
    return member


def _members(problem, config, device, progress: bool, state, count: int, candidates) -> list:
    """``surrogates - 1`` more surrogates (:func:`_member`), each from its own child seed
    (initialisation, Gaussians, held-out split, test functions, batches), restored to its
    best held-out checkpoint. The final fit integrates the mean of all of them: their errors
    differ where the data leave the field open, so the mean's is smaller (tanh damping from
    10 % of the grid at σ = 0.2: RMS error 0.016 for the mean of four against 0.016–0.028
    for each, see docs/network.md). It stops early when the run was interrupted."""
    members = []
    base = child_seed(problem.seed, "surrogates")
    for k in range(1, count):
        if state.interrupted:
            break
        announce(f"surrogate {k + 1} of {count}", progress)
        member_problem = dataclasses.replace(problem, seed=base + 7919 * k)
        member = _member(member_problem, config, device, progress, candidates)
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
        equations = _widen.products_by_default(state, candidates, equations)
    state.interrupted |= held["interrupted"]
    history.interrupted = state.interrupted
    state.surrogate.eval()
    return equations, state.surrogate, history

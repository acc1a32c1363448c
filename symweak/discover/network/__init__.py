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
from ...surrogate import choose_device
from .._history import History
from . import _extract, _final, _prune, _search, _tune, _warmup
from ._correction import residual_correction as residual_correction
from ._state import NetworkState
from ._warmup import choose_kernels as choose_kernels

__all__ = ["choose_kernels", "residual_correction", "run"]


def run(problem, config, progress: bool = True):
    """Run every phase; returns (equations, surrogate, history). Same seed, same result:
    torch's deterministic algorithms are on while it runs (:func:`deterministic_torch`)."""
    if problem.ops is None or not len(problem.ops):
        raise SymweakError("The network path needs an operator set, e.g. ops='id,^2,^3,sin,*'.")
    with deterministic_torch():
        return _run(problem, config, progress)


def _run(problem, config, progress: bool):
    torch.manual_seed(problem.seed)
    device = choose_device(config.training.device)
    history = History()
    warm = _warmup.run(problem, config, device, history, progress)
    state = NetworkState(problem, config, device, warm, history)
    _search.run(state, progress)
    _prune.run(state, progress)
    candidates = _extract.run(state)
    _tune.run(state, candidates, progress)
    equations = _final.run(state, candidates)
    history.interrupted = state.interrupted
    state.surrogate.eval()
    return equations, state.surrogate, history

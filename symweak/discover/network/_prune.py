"""Phase 2: pruning — the joint loss plus λ_r (|ξ| + |W| + |b|) on the fixed architecture."""

from __future__ import annotations

from ._joint import joint_groups, train_phase

__all__ = ["run"]


def run(state, progress: bool) -> None:
    if not state.interrupted:
        epochs = state.config.training.prune_epochs
        train_phase(state, "prune", epochs, joint_groups(state), True, progress)

"""One joint training phase (search or prune) through THE training loop: ℒ_data + λ_w ℒ_weak
(+ λ_r L1 of ξ and the network's weights when pruning)."""

from __future__ import annotations

import logging

from ..._trainer import Step, adam, cuda_graphs, train_loop
from .._history import PhaseRecord, _subsample
from .._settings import LAMBDA_R, LAMBDA_W, LR_JOINT_SURROGATE, LR_NETWORK

__all__ = ["joint_groups", "train_phase"]

log = logging.getLogger("symweak")


def _read(*values):
    """What a step reports, as one float64 tensor (read from the device at once)."""
    import torch

    return torch.stack([v.detach().double() for v in values if v is not None])


def joint_groups(state) -> list[dict]:
    """Parameter groups of the joint phases: the surrogate, and ξ with the network."""
    net = state.net
    return [
        {"params": list(state.surrogate.parameters()), "lr": LR_JOINT_SURROGATE},
        {"params": [state.xi, *net.weights, *net.biases], "lr": LR_NETWORK},
    ]


def train_phase(state, phase: str, epochs: int, groups: list[dict], l1: bool, progress: bool):
    """Train ``groups`` for ``epochs`` epochs; records the phase in the history. The weak
    loss trains the surrogate as well as the network (the paper's coupling)."""
    opt = adam(groups, capturable=cuda_graphs(state.device))

    def body():
        l_data, l_weak, _, _, held = state.losses(held=True)
        loss = l_data + LAMBDA_W * l_weak.float()
        if l1:
            loss = loss + LAMBDA_R * (state.xi.abs().sum() + state.net.l1()).float()
        loss.backward()
        opt.step()
        return _read(l_data, l_weak, held)

    once = Step(body, opt, state.device)

    def step(epoch: int) -> tuple[float, float]:
        l_data, l_weak, *held = once().tolist()  # one read from the device per step
        state.offer(held[0] if held else None, phase, epoch)
        return l_data, l_weak

    run = train_loop(
        epochs,
        step,
        desc=phase,
        progress=progress,
        postfix=lambda epoch, r: {"data": f"{r[0]:.2e}", "weak": f"{r[1]:.2e}"},
    )
    state.interrupted |= run.interrupted
    record = run.records
    if record:
        log.info(
            "%s: %d epochs, data loss %.3e -> %.3e, weak loss %.3e -> %.3e",
            phase,
            len(record),
            record[0][0],
            record[-1][0],
            record[0][1],
            record[-1][1],
        )
    state.history.phases[phase] = PhaseRecord(
        seconds=run.seconds,
        epochs=len(record),
        data_loss=[r[0] for r in _subsample(record)],
        weak_loss=[r[1] for r in _subsample(record)],
    )

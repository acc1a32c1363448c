"""Phase 1: the architecture search (DARTS-style masks α, β trained with everything else),
then the architecture is fixed and ξ re-solved by least squares for the fixed network."""

from __future__ import annotations

import torch

from .._settings import LR_NETWORK
from ._joint import joint_groups, train_phase

__all__ = ["run"]


def _resolve_xi(state) -> None:
    """Fixing the architecture changes the network's outputs, so ξ no longer fits them and
    the weak loss jumps; its gradient would then drag the surrogate away from the data.
    Re-solve ξ by least squares for the fixed network first."""
    xi = state.xi
    with torch.no_grad():
        _, _, G, b = state.losses()
        flat = G.reshape(G.shape[0], -1).double()
        scale = flat.norm(dim=0).clamp_min(1e-12)
        scaled = flat / scale
        gram = scaled.T @ scaled
        # a small ridge: many columns are zero or collinear; Cholesky keeps runs repeatable
        gram = gram + 1e-8 * torch.eye(gram.shape[0], dtype=gram.dtype, device=gram.device)
        chol = torch.linalg.cholesky(gram)
        for e in range(xi.shape[0]):
            rhs = (scaled.T @ b[:, e].double())[:, None]
            sol = torch.cholesky_solve(rhs, chol)[:, 0] / scale
            xi[e] = sol.reshape(xi.shape[1:]).to(xi.dtype)
        state.scale = None  # ξ holds plain coefficients now; rescaled for pruning
        state.set_scale(G)


def run(state, progress: bool) -> None:
    cfg, net = state.config, state.net
    if cfg.training.search and not state.interrupted:
        with torch.no_grad():
            state.set_scale(state.losses()[2])
        groups = [
            *joint_groups(state),
            {"params": [net.alpha, net.beta], "lr": LR_NETWORK},
        ]
        train_phase(state, "search", cfg.training.search_epochs, groups, False, progress)
    if net.fixed is None:
        net.fix_architecture()
    state.history.architecture = net.describe()
    _resolve_xi(state)

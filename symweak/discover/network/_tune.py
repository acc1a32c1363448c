"""Phase 4: tuning — ξ by least squares every step on the candidate library, while the
surrogate keeps training on ℒ_data + λ_w ℒ_weak."""

from __future__ import annotations

import torch

from ..._trainer import Step, adam, cuda_graphs, train_loop
from .._history import TuneRecord, _subsample
from .._settings import LAMBDA_W, LR_JOINT_SURROGATE

__all__ = ["run"]


def _lstsq(G: torch.Tensor, b: torch.Tensor, host_free: bool = False) -> torch.Tensor:
    """Column-scaled least squares, without gradient (ξ is re-solved every step).

    ``host_free`` (a step replayed as a CUDA graph, :func:`_host_free`): by a QR
    factorisation and a triangular solve, which read nothing on the host —
    ``torch.linalg.lstsq`` checks its LAPACK status there. Both assume full column rank
    (on CUDA lstsq's only driver, ``gels``, is a QR as well); elsewhere lstsq's pivoted QR
    (``gelsy``) as before."""
    with torch.no_grad():
        scale = G.norm(dim=0).clamp_min(1e-300)
        A = G / scale
        if host_free:
            Q, R = torch.linalg.qr(A)
            x = torch.linalg.solve_triangular(R, Q.mT @ b[:, None], upper=True)
            return x[:, 0] / scale
        return torch.linalg.lstsq(A, b[:, None]).solution[:, 0] / scale


def _host_free(device) -> bool:
    """Whether the tuning step's solve must read nothing on the host: where the step is
    captured as a CUDA graph (:func:`~symweak._trainer.cuda_graphs`)."""
    return cuda_graphs(device)


def _leading(cands, Gl, coefs) -> str:
    """The three largest contributions per equation, for the progress bar."""
    lead = []
    for e, c in enumerate(cands.cols):
        size = Gl[:, c].norm(dim=0) * coefs[e].abs()
        top = torch.argsort(size.detach(), descending=True)[:3].tolist()
        lead.append(
            " ".join(f"{coefs[e][i].item():+.3g}*{cands.library[c[i]].short()}" for i in top)
        )
    return " | ".join(lead)


def run(state, cands, progress: bool) -> None:
    t = state.config.training
    epochs = t.tune_epochs if not state.interrupted else 0
    opt = adam(
        state.surrogate.parameters(), lr=LR_JOINT_SURROGATE, capturable=cuda_graphs(state.device)
    )
    every = max(1, t.tune_epochs // 50)
    trajectories: dict = {}
    lhs_names = [lhs.short() for lhs in state.problem.lhs]
    last: dict = {}
    # the columns of each equation as index tensors, made once (see Step)
    cols = [torch.as_tensor(c, dtype=torch.long, device=state.device) for c in cands.cols]
    sizes = [len(c) for c in cands.cols]
    host_free = _host_free(state.device)

    def body() -> torch.Tensor:
        _, Gs, bs, _ = cands.system(state, state.quad.axes, [state.asm64])
        Gl, b = Gs[0], bs[0]
        coefs = [_lstsq(Gl[:, c], b[:, e], host_free) for e, c in enumerate(cols)]
        resid = torch.stack([Gl[:, c] @ coefs[e] - b[:, e] for e, c in enumerate(cols)], 1)
        l_weak = ((resid**2).sum(0) / state.b_norm.double()).mean()
        loss, held = state.data_losses()
        loss = loss + LAMBDA_W * l_weak.float()
        loss.backward()
        opt.step()
        last.update(Gl=Gl.detach(), coefs=coefs)  # no step's graph kept alive (see Step)
        read = [l_weak.detach()[None], *(c.detach().double() for c in coefs)]
        if held is not None:
            read.append(held.double()[None])
        return torch.cat(read)

    once = Step(body, opt, state.device)

    def step(epoch: int) -> float:
        values = once().tolist()  # one read from the device per step
        weak, start = values[0], 1
        if epoch % every == 0:
            for e, name in enumerate(lhs_names):
                per = trajectories.setdefault(name, {})
                for j, value in zip(cands.cols[e], values[start : start + sizes[e]]):
                    per.setdefault(cands.library[j].short(), []).append(value)
                start += sizes[e]
        state.offer(values[-1] if state.check is not None else None, "tune", epoch)
        return weak

    def postfix(epoch: int, weak: float) -> dict:  # the loss and the leading candidate terms
        return {"weak": f"{weak:.2e}", "candidates": _leading(cands, last["Gl"], last["coefs"])}

    run = train_loop(epochs, step, desc="tune", progress=progress, postfix=postfix)
    state.interrupted |= run.interrupted
    state.history.phases["tune"] = TuneRecord(
        seconds=run.seconds,
        epochs=len(run.records),
        weak_loss=_subsample(run.records),
        coefficients=trajectories,
    )

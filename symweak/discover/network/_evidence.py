"""Phase 6 (noisy 1-D data): the supports the final fit's variants select, judged by what
each costs the fit to the data.

Every selection before this one compares weak-form residuals, and on noisy data those hold
the surrogate's own error: on one test-function scale a wrong support can explain the
surrogate's weak form better than the truth. Advection–diffusion with decay (u_t = −0.8 u_x +
0.05 u_xx − 0.3 u, 10 % of the grid as point columns, σ = 0.2): the "cap" scale selects the
truth, the "axis" scale and the stack −0.93 u² − 0.81 u_x (residual 0.068 against the
truth's 0.084 on "axis"), and the stack's pick was kept. The data themselves can tell them
apart: trained further under each support S (ℒ_data + ``evidence_weight`` × the weak residual
of S, ξ re-solved by least squares every step, ``evidence_epochs`` epochs from the kept
surrogate), the surrogate keeps the data loss L_S it can still reach; a support the data
contradict costs more of it. Supports are compared by n·L_S/L₀ + log n × complexity (a BIC
in units of the kept surrogate's data loss L₀, the noise's estimate): there the truth scores
2350, −0.93 u² − 0.81 u_x 2477.

**Off by default** (``evidence_epochs=0``): on the units benchmark at σ = 0.2 it turned two
heat-equation rows and one Airy row that were right into wrong ones (time in hundredths:
u_xx scored 3830 against 2947 for u + u² — forcing the weak residual of a support towards
zero with a fixed weight costs the data fit 64 % where the weak form itself is poor, 49–61 %
residual on every scale there). A fair comparison would have to weigh the weak residual by
its own noise; until then it is an option.

Candidates are the kept support and the supports each variant (scale, stack, +data) selects
from the library without fitted constants; another candidate replaces the kept one only when
it scores more than log n (one term's worth) lower. Only for one equation in one space
dimension, on data whose estimated noise is at least ``evidence_noise`` (on clean data the
weak form is not the weak spot), and only where the kept equation is readable.
"""

from __future__ import annotations

import copy
import logging
import math
import time

import numpy as np
import torch

from ..._trainer import train_loop
from ...regress import Fit, refit_support, term_complexity
from ._tune import _lstsq

__all__ = ["run"]

log = logging.getLogger("symweak")


def _applies(state, cands, results) -> bool:
    cfg = state.config.final
    if not cfg.evidence_epochs or state.interrupted or cands.ties:
        return False
    if len(state.problem.lhs) != 1 or len(state.problem.obs.coord_names) != 2:
        return False
    noise = state.history.phases.get("warmup")
    noise = getattr(noise, "noise", None) or {}
    worst = max((v for v in noise.values() if v == v), default=0.0)
    if worst < cfg.evidence_noise:
        return False
    readable = {cands.library[j] for j in cands.readable_cols[0]}
    rhs = results[state.problem.lhs[0]][0]
    return bool(rhs) and all(t in readable for t in rhs)


def _data_cost(state, cands, columns: list[int]) -> float:
    """The mean training data loss over the last 100 of ``evidence_epochs`` epochs of
    ℒ_data + λ × (the weak residual of ``columns``), from the kept surrogate (restored
    afterwards)."""
    cfg = state.config
    epochs = cfg.final.evidence_epochs
    saved = copy.deepcopy(state.surrogate.state_dict())
    opt = torch.optim.Adam(state.surrogate.parameters(), lr=cfg.training.lr_joint_surrogate)
    lam = cfg.final.evidence_weight
    tail = max(1, min(100, epochs // 4))
    norm = state.b_norm[0].double()

    def step(epoch: int) -> float:
        opt.zero_grad(set_to_none=True)
        # the run's own surrogate: it is the one trained here
        _, Gs, bs, _ = cands.system(state, state.quad.axes, [state.asm64], members=False)
        b = bs[0][:, 0]
        G = Gs[0][:, columns]
        resid = G @ _lstsq(G, b) - b
        l_data = state.data.loss()
        (l_data + lam * ((resid**2).sum() / norm).float()).backward()
        opt.step()
        return float(l_data.detach())

    run = train_loop(epochs, step, desc="evidence", progress=False)
    state.surrogate.load_state_dict(saved)
    state.interrupted |= run.interrupted
    if not run.records:
        return math.nan
    return float(np.mean(run.records[-tail:]))


def run(state, cands, tried: dict, results: dict, select, system) -> tuple[dict, dict]:
    """``(results, record)``: the kept equation's fit replaced where another variant's
    support has clearly more evidence (see the module notes); ``record`` maps each candidate
    (its terms) to its score and says which was kept (empty where the check does not
    apply). ``select(G, b, readable)`` is the final fit's selection; ``system`` the one that
    gives the coefficients."""
    if not _applies(state, cands, results):
        return results, {}
    start = time.perf_counter()
    lhs = state.problem.lhs[0]
    cols = list(cands.readable_cols[0])
    lib = [cands.library[j] for j in cols]
    kept = tuple(sorted(lib.index(t) for t in results[lhs][0]))
    candidates = {kept: "kept"}
    for name, entry in tried.items():
        found, _ = select(*entry[2], readable=())
        support = tuple(sorted(lib.index(t) for t in found[lhs][0] if t in lib))
        if support and len(support) == len(found[lhs][0]):
            candidates.setdefault(support, name)
    if len(candidates) == 1:
        return results, {}
    weights = term_complexity(lib, state.config.selection.complexity)
    weights = np.ones(len(lib)) if weights is None else np.asarray(weights)
    with torch.no_grad():
        base = float(state.data.loss())
    n = len(state.data.target)
    scores = {}
    for support in candidates:
        cost = _data_cost(state, cands, [cols[i] for i in support])
        if state.interrupted or not math.isfinite(cost):
            return results, {}
        scores[support] = n * cost / base + math.log(n) * float(weights[list(support)].sum())
    best = min(scores, key=scores.get)
    switch = best != kept and scores[best] < scores[kept] - math.log(n)
    names = {s: " + ".join(lib[i].short() for i in s) for s in candidates}
    record = {
        "scores": {names[s]: round(v, 1) for s, v in scores.items()},
        "from": {names[s]: where for s, where in candidates.items()},
        "kept": names[best if switch else kept],
        "switched": switch,
        "seconds": time.perf_counter() - start,
    }
    log.info(
        "final fit: data-fit evidence %s; keeping %s",
        ", ".join(f"{k}: {v}" for k, v in record["scores"].items()),
        record["kept"],
    )
    if not switch:
        return results, record
    G = system[0].cpu().numpy()[:, cols]
    b = system[1].cpu().numpy()[:, 0]
    support = np.asarray(best, dtype=int)
    tls = state.config.final.final_estimator == "tls"
    coef = refit_support(G, b, support, tls)
    residual = float(np.linalg.norm(G @ coef - b) / (np.linalg.norm(b) or 1.0))
    fit = Fit(coef, residual, None, "evidence" + ("+tls" if tls else ""))
    return {lhs: ({lib[i]: float(coef[i]) for i in best}, fit)}, record

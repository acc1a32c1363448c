"""One refit of the check on the data (:mod:`._refit`): the surrogate trained on from the
final fit's checkpoint on the data and one equation's weak form, its coefficients by least
squares every step."""

from __future__ import annotations

import torch

from ..._trainer import adam
from ...compile import compile_expressions
from .._library import distinct_functions
from .._settings import LR_JOINT_SURROGATE, REFIT_LAMBDA
from ._tune import _lstsq

#: epochs of each refit (from the final fit's checkpoint)
REFIT_EPOCHS = 50


class _Columns:
    """Candidate terms alone (library terms or the neighbouring powers of :func:`_swaps`):
    their distinct functions compiled on their own (the library's module evaluates every F
    of the library, a refit needs a few), each term's function and multi-index."""

    def __init__(self, state, cands, terms: list) -> None:
        funcs, index = distinct_functions(terms)
        inputs = cands.functions.inputs
        self.functions = compile_expressions(funcs, inputs, trainable=False).to(state.device)
        self.index = [index[t.F] for t in terms]
        self.alphas = [t.orders(state.problem.obs.coord_names) for t in terms]


def _weak(state, cands, e: int, columns: _Columns):
    """(residual of equation ``e`` on ``columns`` relative to ‖b‖², coefficients, G, b) on
    this run's own surrogate, only those columns integrated; the coefficients by the
    tuning phase's column-scaled least squares."""
    axes = state.quad.axes
    U64 = state.mean_grid(axes, members=False).double()
    J = cands.jet_values(state, axes, False)
    inputs = [*U64.unbind(-1), *(J.unbind(-1) if J is not None else ())]
    values = torch.movedim(columns.functions(*inputs), -1, 0)
    G = state.asm64.integrate(values[columns.index], columns.alphas)
    i = state.field_index[e]
    b = state.asm64.integrate(U64[..., i][None], [state.lhs_alphas[e]])[:, 0]
    coefs = _lstsq(G, b)
    return ((G @ coefs - b) ** 2).sum() / state.b_norm[e].double(), coefs, G, b


def _refit(
    state, cands, e: int, terms: list, start: dict, weight=REFIT_LAMBDA, epochs=REFIT_EPOCHS,
    marks: dict | None = None,
):  # fmt: skip
    """Train the surrogate from ``start`` for ``epochs`` on the data and equation ``e``'s
    weak form on ``terms`` (its loss times ``weight``): (data loss on every training point,
    coefficients at the end, and that weak form's G and b). ``marks``: ``{epochs: None}``
    of shorter lengths, each filled with what a refit of that length returns (the same
    steps, read on the way: one run in place of two)."""
    data = state.data
    columns = _Columns(state, cands, terms)
    state.surrogate.load_state_dict(start)
    state.surrogate.train()
    opt = adam(state.surrogate.parameters(), lr=LR_JOINT_SURROGATE)
    done = 0
    shorter = {m for m in marks or () if m < epochs}
    for length in sorted({*shorter, epochs}):  # in segments, read at each mark
        for _ in range(length - done):
            opt.zero_grad(set_to_none=True)
            weak = _weak(state, cands, e, columns)[0]
            loss = data.loss() + weight * weak.float()
            loss.backward()
            opt.step()
        done = length
        if length != epochs:
            marks[length] = _read(state, cands, e, columns)
    return _read(state, cands, e, columns)


def _read(state, cands, e: int, columns: _Columns) -> tuple:
    """What :func:`_refit` returns, read from the surrogate as it is."""
    data = state.data
    with torch.no_grad():
        diff = (data.predictions(None, None) - data.target) / data.scale
        _, coefs, G, b = _weak(state, cands, e, columns)
    return float((diff * diff).mean()), coefs.tolist(), (G.cpu().numpy(), b.cpu().numpy())

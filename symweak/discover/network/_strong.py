"""Candidate terms in strong form on a surrogate at given points, by automatic
differentiation: D^α F(U) of the surrogate's fields U, for the data's own time series to
judge an equation that couples points (:func:`symweak.discover._pointwise.time_series_check`
with ``coupled``)."""

from __future__ import annotations

import numpy as np
import sympy
import torch

from ...compile import compile_expressions

__all__ = ["CHUNK", "evaluator", "readable"]

#: points per automatic-differentiation pass
CHUNK = 8_192


def readable(terms) -> bool:
    """Whether every term's function is one of the fields alone (no derivative inside:
    u_x² is not read here)."""
    return not any(term.F.has(sympy.Derivative) for term in terms)


def evaluator(surrogate, fields: list):
    """``values(terms, coords) -> {term: array}``: each term of ``terms`` (readable) on
    ``surrogate`` (whose outputs are ``fields``, applied functions, in order) at ``coords``
    (``{coordinate name: array}``)."""
    names = list(surrogate.coord_names)

    def values(terms: list, coords: dict) -> dict:
        exprs = [term.F for term in terms]
        functions = compile_expressions(exprs, fields, trainable=False).to(surrogate.device)
        X = np.stack([np.asarray(coords[n], dtype=np.float64) for n in names], axis=1)
        X = torch.as_tensor(X, dtype=surrogate.lo.dtype, device=surrogate.device)
        out: dict = {term: [] for term in terms}
        for lo in range(0, len(X), CHUNK):
            x = X[lo : lo + CHUNK].clone().requires_grad_(True)
            F = functions(*surrogate(x).unbind(-1))
            for k, term in enumerate(terms):
                v = F[..., k]
                for axis, n in enumerate(term.orders(names)):
                    for _ in range(n):
                        (g,) = torch.autograd.grad(v.sum(), x, create_graph=True)
                        v = g[:, axis]
                out[term].append(v.detach().double().cpu().numpy())
        return {term: np.concatenate(parts) for term, parts in out.items()}

    return values

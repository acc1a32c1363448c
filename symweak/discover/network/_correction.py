"""The observations' own deviation from the surrogate, in weak form (the final fit's
``+data`` variants)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ..._errors import SymweakError
from ...weak import WeakAssembler

__all__ = ["residual_correction", "smooth"]


def smooth(X: torch.Tensor, width: float) -> torch.Tensor:
    """Gaussian smoothing (σ = ``width`` grid cells) along every grid axis of X (m, *grid),
    zero outside the grid."""
    half = max(1, math.ceil(3 * width))
    k = torch.arange(-half, half + 1, dtype=X.dtype, device=X.device)
    k = torch.exp(-0.5 * (k / width) ** 2)
    k = (k / k.sum()).reshape(1, 1, -1)
    for axis in range(1, X.dim()):
        Y = torch.movedim(X, axis, -1)
        shp = Y.shape
        Y = torch.nn.functional.conv1d(Y.reshape(-1, 1, shp[-1]), k, padding=half)
        X = torch.movedim(Y.reshape(shp), -1, axis)
    return X


def residual_correction(
    obs,
    U: torch.Tensor,
    assemblers: Sequence[WeakAssembler],
    functions,
    lib_index: Sequence[int],
    lib_alphas: Sequence[tuple[int, ...]],
    field_index: Sequence[int],
    lhs_alphas: Sequence[tuple[int, ...]],
    width: float = 0.33,
    chunk: int | None = None,
    jets: torch.Tensor | None = None,
):
    """The observations' own deviation from the surrogate, in weak form.

    For every library column (function ``functions(...)[lib_index[j]]`` with multi-index
    ``lib_alphas[j]``) and every left-hand side: ∫ D^αΦ_k·(m(u_data) − m(Û)), where the
    residual m(u_data) − m(Û), known at the observed grid points, is spread over the grid by
    normalised Gaussian smoothing (Nadaraya–Watson, σ = ``width`` × the mean distance between
    observations, in cells). Added to the surrogate's columns this is a control-variate
    estimate of the data's own weak form: the surrogate's systematic error (a smoothed peak,
    a missed small scale) cancels, and only the interpolation error of a residual remains.
    The weak form puts every derivative on Φ, so nothing of the data is differentiated.

    ``U`` holds the surrogate on the assemblers' grid (*grid, fields); the spread residual of
    each chunk of columns is integrated against every assembler (test-function set). Returns
    one ``(G_correction (K, columns), b_correction (K, equations))`` per assembler, or
    ``None`` when the observations do not lie on that grid (no grid, or another one).

    ``jets`` (*grid, m): Û's derivatives that product terms take after the fields; data
    carry no derivatives, so both sides of the residual use Û's there (only the fields'
    factor of such a term is corrected)."""
    shape = tuple(U.shape[:-1])
    if obs.grid is None or tuple(obs.grid.shape) != shape or not len(obs):
        return None
    if not width > 0:
        raise SymweakError(f"width must be > 0, got {width!r}.")
    n = int(np.prod(shape))
    flat = torch.as_tensor(obs.grid_index, device=U.device)
    observed = np.stack([obs.field(f) for f in obs.field_names], axis=-1)
    D = torch.as_tensor(observed, dtype=U.dtype, device=U.device)
    S = U.reshape(n, -1)[flat]
    sigma = width * (n / len(flat)) ** (1.0 / len(shape))
    mask = torch.zeros(n, dtype=U.dtype, device=U.device)
    mask[flat] = 1.0
    weight = smooth(mask.reshape(1, *shape), sigma).clamp_min(1e-300)

    def spread(values):  # (m, observations) -> (m, *grid)
        out = torch.zeros((values.shape[0], n), dtype=U.dtype, device=U.device)
        out[:, flat] = values
        return smooth(out.reshape(values.shape[0], *shape), sigma) / weight

    extra = () if jets is None else jets.reshape(n, -1)[flat].unbind(-1)
    R = (functions(*D.unbind(-1), *extra) - functions(*S.unbind(-1), *extra)).T
    step = chunk or len(lib_index)
    parts: list[list[torch.Tensor]] = [[] for _ in assemblers]
    for i in range(0, len(lib_index), step):
        spread_R = spread(R[list(lib_index[i : i + step])])
        for part, assembler in zip(parts, assemblers):
            part.append(assembler.integrate(spread_R, list(lib_alphas[i : i + step])))
    spread_b = spread((D - S)[:, list(field_index)].T)
    return [
        (torch.cat(part, dim=1), assembler.integrate(spread_b, list(lhs_alphas)))
        for part, assembler in zip(parts, assemblers)
    ]

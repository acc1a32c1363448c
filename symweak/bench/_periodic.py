"""Fields integrated on a periodic 1-D domain (the zoo's and its variants' solver)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import _solvers as S

__all__ = ["periodic_1d"]

Nonlinear = Callable[[dict, Callable], dict]


def periodic_1d(
    x0: float,
    x1: float,
    nx: int,
    T: float,
    nt: int,
    u0: dict,
    linear: dict,
    nonlinear: Nonlinear | None,
    substeps: int,
) -> dict:
    """Integrate fields ``u0`` ({name: x -> values}) on [x0, x1) periodic:
    u_t = linear[f](k) û + nonlinear(fields, D)[f], with D(array, order) the spectral
    derivative (dealiased ETDRK4)."""
    x = S.periodic_grid(x0, x1, nx)
    t = np.linspace(0.0, T, nt)
    k = S.wavenumbers(nx, x1 - x0, real=True)
    names = list(u0)
    L = np.stack([np.broadcast_to(linear[f](k), k.shape).astype(complex) for f in names])
    if np.allclose(L.imag, 0):
        L = L.real

    def D(u, order: int):
        return np.fft.irfft((1j * k) ** order * np.fft.rfft(u), nx)

    def N(v):
        if nonlinear is None:
            return np.zeros_like(v)
        u = np.fft.irfft(v, nx)
        out = nonlinear(dict(zip(names, u)), D)
        return np.fft.rfft(np.stack([out.get(f, np.zeros(nx)) for f in names]))

    start = np.stack([np.asarray(u0[f](x), dtype=float) for f in names])
    sol = S.etdrk4_1d(start, L, N, t, substeps)
    return {"t": t, "x": x, "fields": {f: sol[:, i] for i, f in enumerate(names)}}

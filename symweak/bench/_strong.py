"""Strong-form checks on gridded data: spectral or finite-difference derivatives, then a
least-squares fit of the true terms. Used to verify the generators (and by exporters)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from ..ir import Equation

__all__ = ["evaluate_strong", "fd_weights", "grid_derivative", "strong_form_fit"]


def fd_weights(order: int, offsets: Sequence[float]) -> np.ndarray:
    """Finite-difference weights for the ``order``-th derivative at 0 (Fornberg's algorithm)."""
    z = np.asarray(offsets, dtype=float)
    n = z.size
    c = np.zeros((n, order + 1))
    c1, c4 = 1.0, z[0]
    c[0, 0] = 1.0
    for i in range(1, n):
        mn = min(i, order)
        c2, c5, c4 = 1.0, c4, z[i]
        for j in range(i):
            c3 = z[i] - z[j]
            c2 *= c3
            if j == i - 1:
                for k in range(mn, 0, -1):
                    c[i, k] = c1 * (k * c[i - 1, k - 1] - c5 * c[i - 1, k]) / c2
                c[i, 0] = -c1 * c5 * c[i - 1, 0] / c2
            for k in range(mn, 0, -1):
                c[j, k] = (c4 * c[j, k] - k * c[j, k - 1]) / c3
            c[j, 0] = c4 * c[j, 0] / c3
        c1 = c2
    return c[:, order]


def grid_derivative(
    values: np.ndarray, axis: int, order: int, spacing: float, periodic: bool, accuracy: int = 6
) -> np.ndarray:
    """d^order/dx^order along ``axis`` of a uniform grid.

    Periodic axes use the FFT (spectral accuracy); others a centred stencil of the given
    accuracy, with NaN where the stencil would leave the grid (no one-sided guesses).
    """
    if order == 0:
        return values
    if periodic:
        n = values.shape[axis]
        k = 2.0 * np.pi * np.fft.fftfreq(n, spacing)
        shape = [1] * values.ndim
        shape[axis] = n
        factor = (1j * k.reshape(shape)) ** order
        if order % 2 == 1 and n % 2 == 0:
            nyq = [slice(None)] * values.ndim
            factor = factor.copy()
            nyq[axis] = n // 2
            factor[tuple(nyq)] = 0.0
        out = np.fft.ifft(np.fft.fft(values, axis=axis) * factor, axis=axis)
        return out.real if np.isrealobj(values) else out
    half = (order + 1) // 2 + accuracy // 2 - 1
    offsets = np.arange(-half, half + 1)
    w = fd_weights(order, offsets) / spacing**order
    moved = np.moveaxis(values, axis, 0)
    out = np.full(moved.shape, np.nan, dtype=np.result_type(values, float))
    n = moved.shape[0]
    acc = np.zeros_like(moved[half : n - half], dtype=out.dtype)
    for off, wk in zip(offsets, w):
        acc = acc + wk * moved[half + off : n - half + off]
    out[half : n - half] = acc
    return np.moveaxis(out, 0, axis)


def evaluate_strong(
    expr: sympy.Expr,
    grids: Mapping[str, np.ndarray],
    spacing: Mapping[str, float],
    periodic: Mapping[str, bool],
    coord_order: Sequence[str],
) -> np.ndarray:
    """Evaluate a strong-form expression (fields and their derivatives) on a grid."""
    replacements = {}
    arrays = {}
    for atom in sorted(expr.atoms(sympy.Derivative), key=str):
        if not isinstance(atom.expr, AppliedUndef):
            raise ValueError(f"{atom} is not a derivative of a field; expand the expression first.")
        arr = grids[atom.expr.func.__name__]
        for var, n in atom.variable_count:
            name = str(var)
            arr = grid_derivative(
                arr, coord_order.index(name), int(n), spacing[name], periodic.get(name, False)
            )
        sym = sympy.Dummy()
        replacements[atom] = sym
        arrays[sym] = arr
    for f in expr.atoms(AppliedUndef):
        sym = sympy.Dummy()
        replacements[f] = sym
        arrays[sym] = grids[f.func.__name__]
    plain = expr.xreplace(replacements)
    syms = list(arrays)
    fn = sympy.lambdify(syms, plain, modules="numpy")
    return np.broadcast_to(fn(*[arrays[s] for s in syms]), next(iter(grids.values())).shape)


def strong_form_fit(obs, equation: Equation, periodic: Mapping[str, bool]) -> dict:
    """Least-squares coefficients of the equation's own terms (``{Term: value}``) on ``obs``.

    Each term's strong form is one column (so d_x(u*omega) stays one unknown even where its
    expanded monomials are collinear, as for incompressible flow).

    Derivatives are spectral along periodic axes and 6th-order finite differences
    otherwise (time included); points where a stencil does not fit are left out.
    """
    names = obs.grid.names
    grids = {f: obs.to_grid(f) for f in obs.field_names}
    spacing = {n: obs.grid.spacing(n) for n in names}
    lhs = evaluate_strong(equation.lhs.strong(), grids, spacing, periodic, names)
    terms = list(equation.terms)
    columns = [evaluate_strong(t.strong(), grids, spacing, periodic, names) for t in terms]
    A = np.stack([c.ravel() for c in columns], axis=1)
    b = lhs.ravel()
    ok = np.isfinite(b) & np.all(np.isfinite(A), axis=1)
    coef, *_ = np.linalg.lstsq(A[ok], b[ok], rcond=None)
    return dict(zip(terms, coef.tolist()))

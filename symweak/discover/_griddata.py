"""The data's own values on a full grid: each distinct F evaluated with the bias noise
puts into nonlinear terms removed, derivatives inside F by Savitzky–Golay filters, and the
noise level those filters leave."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .._errors import DataError
from ..ir import short

__all__ = ["data_jets", "estimate_noise", "evaluate_functions", "jet_noise"]


def estimate_noise(values: np.ndarray, order: int = 6) -> float:
    """Standard deviation of white noise on smooth gridded data.

    Along every axis, the order-``order`` finite difference of a smooth signal is tiny while
    that of white noise has variance C(2k, k)·σ²; a robust (median absolute deviation)
    estimate is taken per axis and the smallest is returned.
    """
    best = np.inf
    for axis in range(values.ndim):
        if values.shape[axis] <= 2 * order:
            continue
        d = np.diff(values, n=order, axis=axis).ravel() / math.sqrt(math.comb(2 * order, order))
        best = min(best, 1.4826 * float(np.median(np.abs(d - np.median(d)))))
    return 0.0 if not np.isfinite(best) else best


def _hermite_power(values: np.ndarray, n: int, sigma: float) -> np.ndarray:
    """Unbiased estimate of u^n from ũ = u + σ·N(0, 1): σ^n He_n(ũ/σ) (probabilists' Hermite)."""
    from numpy.polynomial.hermite_e import hermeval

    if sigma <= 0 or n <= 1:
        return values**n
    coef = np.zeros(n + 1)
    coef[n] = 1.0
    return sigma**n * hermeval(values / sigma, coef)


def _debiased(F: sympy.Expr, grids: Mapping[str, np.ndarray], sigma: Mapping[str, float]):
    """F evaluated with the noise-induced bias removed, or None when no rule applies.

    Products of field powers use Hermite polynomials (independent noise per field);
    sin(u) and cos(u) are scaled by exp(σ²/2) (E[sin(u + ε)] = e^{-σ²/2} sin u), exp(u) by
    exp(-σ²/2).
    """
    out = 1.0
    factors = sympy.Mul.make_args(F)
    if not _independent_noise(factors, sigma):
        return None
    for factor in factors:
        base, exp = factor.as_base_exp()
        if isinstance(factor, sympy.exp) and isinstance(factor.args[0], AppliedUndef):
            # E[exp(u + ε)] = e^{σ²/2} exp u
            name = factor.args[0].func.__name__
            out = out * np.exp(grids[name]) * np.exp(-(sigma.get(name, 0.0) ** 2) / 2)
        elif isinstance(base, AppliedUndef) and exp.is_Integer and exp > 0:
            name = base.func.__name__
            out = out * _hermite_power(grids[name], int(exp), sigma.get(name, 0.0))
        elif isinstance(base, sympy.Derivative) and exp.is_Integer and exp > 0:
            # a derivative taken of the data (data_jets): its noise is the field's through
            # the filter, of standard deviation ``sigma[short(base)]`` (jet_noise)
            name = short(base)
            if name not in sigma:
                return None
            out = out * _hermite_power(grids[name], int(exp), sigma[name])
        elif isinstance(factor, (sympy.sin, sympy.cos)) and isinstance(
            factor.args[0], AppliedUndef
        ):
            name = factor.args[0].func.__name__
            fn = np.sin if isinstance(factor, sympy.sin) else np.cos
            out = out * fn(grids[name]) * np.exp(sigma.get(name, 0.0) ** 2 / 2)
        elif factor.is_number:
            out = out * float(factor)
        else:
            return None
    return out


def _independent_noise(factors, sigma) -> bool:
    """Whether the noises of the distinct factors of a product are independent, so that
    the product of their Hermite estimates is unbiased: a field and its derivatives taken
    by symmetric filters (data_jets) are uncorrelated at a point when their orders differ
    in parity along some axis (u and u_x: the derivative filter is odd, the field's value
    its centre); u and u_xx, or u_x and u_xxx, are correlated and are not debiased."""
    seen: dict[str, list[tuple[int, ...]]] = {}
    for factor in factors:
        base, _ = factor.as_base_exp()
        if isinstance(base, sympy.Derivative) and isinstance(base.expr, AppliedUndef):
            field = base.expr.func.__name__
            orders = {str(s): int(n) for s, n in base.variable_count}
        elif isinstance(base, AppliedUndef):
            field, orders = base.func.__name__, {}
        else:
            continue
        if not sigma.get(field, 0.0):
            continue
        axes = sorted(set(orders) | {a for o in seen.get(field, []) for a, _ in o})
        mine = tuple((a, orders.get(a, 0)) for a in axes)
        for other in seen.get(field, []):
            theirs = dict(other)
            if all((n - theirs.get(a, 0)) % 2 == 0 for a, n in mine):
                return False
        seen.setdefault(field, []).append(tuple(sorted(orders.items())))
    return True


def evaluate_functions(
    funcs: Sequence[sympy.Expr],
    grids: Mapping[str, np.ndarray],
    sigma: Mapping[str, float] | None = None,
) -> np.ndarray:
    """Values of each F(U) on the grid, shape (len(funcs), *grid).

    With ``sigma`` (noise level per field), polynomial and sin/cos terms are debiased
    (see :func:`_debiased`); other functions are evaluated as they are.
    """
    shape = next(iter(grids.values())).shape
    out = np.empty((len(funcs), *shape))
    for i, F in enumerate(funcs):
        if sigma:
            val = _debiased(F, grids, sigma)
            if val is not None:
                out[i] = np.broadcast_to(val, shape)
                continue
        derivs = sorted(F.atoms(sympy.Derivative), key=sympy.default_sort_key)
        dsyms = [sympy.Dummy() for _ in derivs]
        G = F.xreplace(dict(zip(derivs, dsyms)))
        fields = sorted(G.atoms(AppliedUndef), key=str)
        syms = [sympy.Dummy(f.func.__name__) for f in fields]
        fn = sympy.lambdify([*syms, *dsyms], G.xreplace(dict(zip(fields, syms))), modules="numpy")
        with np.errstate(all="ignore"):
            val = fn(*[grids[f.func.__name__] for f in fields], *[grids[short(d)] for d in derivs])
        out[i] = np.broadcast_to(np.asarray(val, dtype=np.float64), shape)
    return out


#: Savitzky–Golay window (points) and polynomial order for derivatives of the data that
#: product terms (u_x², ``inputs:``) need on the full-grid path
SAVGOL_WINDOW = 11


SAVGOL_ORDER = 4


def _savgol_shape(points: int, deriv: int) -> tuple[int, int]:
    """(window, polynomial order) of the Savitzky–Golay filter for an ``deriv``-th
    derivative along an axis of ``points`` points: ``SAVGOL_WINDOW`` points (odd, at most
    the axis) and order ``SAVGOL_ORDER``, at least deriv + 1, below the window."""
    window = min(SAVGOL_WINDOW, points - (1 - points % 2))
    return window, min(max(SAVGOL_ORDER, deriv + 1), window - 1)


def data_jets(grids: Mapping[str, np.ndarray], axes: Mapping[str, np.ndarray], derivs) -> dict:
    """``{"u_x": values, …}``: derivatives of the gridded data that product terms take, by
    Savitzky–Golay filters (local polynomial fits of ``SAVGOL_ORDER`` over
    ``SAVGOL_WINDOW`` points along each differentiated axis; scipy). Unlike the weak
    form's terms, these derivatives are taken of the data: noise is amplified by about
    1/h^n for an n-th derivative, so product terms are less accurate on noisy data."""
    from scipy.signal import savgol_filter

    names = list(axes)
    out = {}
    for d in derivs:
        values = grids[d.expr.func.__name__]
        for sym, n in d.variable_count:
            axis = names.index(str(sym))
            a = np.asarray(axes[str(sym)], dtype=float)
            step = np.diff(a)
            if not np.allclose(step, step[0], rtol=1e-6, atol=0):
                raise DataError(
                    f"{short(d)} is taken of the data on the full-grid path, which needs an "
                    f"evenly spaced {sym} axis; resample the data or drop `inputs:`."
                )
            window, order = _savgol_shape(len(a), int(n))
            values = savgol_filter(
                values, window, order, deriv=int(n), delta=float(step[0]), axis=axis, mode="interp"
            )
        out[short(d)] = values
    return out


def jet_noise(axes: Mapping[str, np.ndarray], derivs, sigma: Mapping[str, float]) -> dict:
    """``{"u_x": s, …}``: the standard deviation of white noise of level ``sigma[u]`` after
    the Savitzky–Golay filters of :func:`data_jets` (away from the grid's ends), the norm of
    the filters' coefficients (one per differentiated axis) times the field's. Squares of
    such derivatives carry this variance as a bias (E[(u_x + e)²] = u_x² + s²), which
    :func:`evaluate_functions` removes."""
    from scipy.signal import savgol_coeffs

    out = {}
    for d in derivs:
        level = sigma.get(d.expr.func.__name__, 0.0)
        for sym, n in d.variable_count:
            a = np.asarray(axes[str(sym)], dtype=float)
            window, order = _savgol_shape(len(a), int(n))
            coeffs = savgol_coeffs(window, order, deriv=int(n), delta=float(a[1] - a[0]))
            level *= float(np.linalg.norm(coeffs))
        out[short(d)] = level
    return out

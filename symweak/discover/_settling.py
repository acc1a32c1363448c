"""Which left-out terms settle an equation's short waves, for the verdicts' rule on terms
the data could hold unseen (:func:`symweak.regress.judge`'s ``diffusion`` and ``carried``;
docs/verdicts.md): a diffusion beside terms that damp nothing, a dispersion beside a flux
alone, and the next even order beside an equation whose highest one amplifies."""

from __future__ import annotations

import numpy as np
import sympy

__all__ = ["diffusion_columns", "dispersion_columns", "regularising_columns"]


def _inside(term, axis) -> bool:
    """Whether ``term`` differentiates along ``axis`` inside F (u_x², u·u_xx)."""
    return any(axis in d.variables for d in term.F.atoms(sympy.Derivative))


def _own_terms(lhs, lib, n: int):
    """``(j, axis)`` for each term of ``lib`` that is the left-hand side's own field
    differentiated ``n`` times along one space axis (u_xx, u_yy for n = 2)."""
    time = set(lhs.order)
    for j, term in enumerate(lib):
        order = term.order
        if len(order) == 1 and term.F == lhs.F:
            ((axis, k),) = order.items()
            if k == n and axis not in time:
                yield j, axis


def diffusion_columns(lhs, lib) -> dict:
    """``{j: columns}`` for each diffusion term of the left-hand side's own field in ``lib``
    (u_xx, u_yy for u_t): ``columns`` are the terms of that field that damp along its axis
    — a derivative along it of even total order (u_xx, d_xx(u²), d_xx(u·v), u_xy, u_xxxx)
    or one inside F (u_x²) — as :func:`symweak.regress.judge` takes ``diffusion``. Odd
    orders (u_x, d_x(u²), u_xxx) only carry and disperse: an equation of them alone claims
    that nothing is damped, which noisy data cannot settle when a weak diffusion could hide
    in them (KdV–Burgers at σ = 0.2 returned as −0.80 d_x(u²) − 0.15 u_xxx). v_xx damps v,
    not u (FitzHugh–Nagumo built for tuning, σ 0.1: 3.4 v_xx for 0.8 u_xx, u_xx excluded)."""
    own = set(lhs.fields)

    def damps(term, axis) -> bool:
        order = term.order
        even = order.get(axis, 0) > 0 and sum(order.values()) % 2 == 0
        return bool(own & set(term.fields)) and (_inside(term, axis) or even)

    return {
        j: [k for k, t in enumerate(lib) if damps(t, axis)] for j, axis in _own_terms(lhs, lib, 2)
    }


def dispersion_columns(lhs, lib) -> tuple[dict, dict]:
    """``({j: settling}, {j: carrying})`` for each third-order term of the left-hand side's
    own field in ``lib`` (u_xxx for u_t): ``settling`` are the terms of order 2 or more
    along its axis (or a derivative along it inside F), ``carrying`` the first-order ones
    (u_x, d_x(u²), v_x). An equation that carries along an axis and holds nothing of higher
    order along it leaves its dispersion unsettled (KdV–Burgers with a weak dispersion at
    σ = 0.2 returned as the flux alone), as :func:`symweak.regress.judge` takes
    ``diffusion`` and ``carried``. Only for a left-hand side of first order in time (u_t)."""
    settle, carry = {}, {}
    if sum(lhs.order.values()) != 1:
        return settle, carry
    for j, axis in _own_terms(lhs, lib, 3):
        settle[j] = [k for k, t in enumerate(lib) if _inside(t, axis) or t.order.get(axis, 0) >= 2]
        carry[j] = [
            k for k, t in enumerate(lib) if not _inside(t, axis) and dict(t.order) == {axis: 1}
        ]
    return settle, carry


def regularising_columns(lhs, lib, coef) -> dict:
    """``{j: columns}`` for the left-hand side's own term of order 2m + 2 along an axis
    (u_xxxx) where the equation ``coef`` (over ``lib``) holds its own linear term of order
    2m along that axis with the sign that amplifies short waves (u_t = c u_xx with c < 0,
    c u_xxxx with c > 0) and nothing of higher order along it: such an equation cannot be
    integrated forward, and the term that would damp its short waves is what the data lose
    (Swift–Hohenberg, clean, 10 %: −1.67 u_xx returned, u_xxxx at −1 left out). ``columns``
    are the own terms of even order 2m + 2 or more along the axis. Only for a left-hand side
    of first order in time (u_t)."""
    out: dict = {}
    if sum(lhs.order.values()) != 1:
        return out
    coef = np.asarray(coef, dtype=float)
    own = set(lhs.fields)
    for n in (2, 4):
        higher = dict(_own_terms(lhs, lib, n + 2))
        for j, axis in _own_terms(lhs, lib, n):
            amplifies = coef[j] * (-1) ** (n // 2) > 0
            beyond = [
                k
                for k, t in enumerate(lib)
                if own & set(t.fields)
                and t.order.get(axis, 0) > n
                and sum(t.order.values()) % 2 == 0
                and coef[k] != 0
            ]
            if not amplifies or beyond:
                continue
            for h, a in higher.items():
                if a == axis:
                    out[h] = [
                        k
                        for k, t in enumerate(lib)
                        if own & set(t.fields)
                        and t.order.get(axis, 0) >= n + 2
                        and sum(t.order.values()) % 2 == 0
                    ]
    return out

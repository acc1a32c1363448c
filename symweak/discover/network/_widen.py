"""Products of derivatives by default: when the final fit from D^α F(U) terms leaves a clear
part of the left-hand side unexplained and no ``inputs:`` line chose the product terms, the
final fit is made again with the products of each field and its first derivatives (u_x²,
u·u_x², d_x(u_x²) = 2 u_x u_xx, …) offered, and that fit is kept when it explains clearly
more (the KPZ equation u_t = 0.08 u_xx + 0.5 u_x² at σ = 5 %: without them the best fit was
−0.30 d_x(sin(1.18 u)), 14 % of u_t unexplained; with them 0.50 u_x² + 0.078 u_xx, 1.8 %).
The log and ``res.history.widened`` say when the library was widened and what it gave.
"""

from __future__ import annotations

import logging

import sympy

from ...ir import product_library
from .._settings import WIDEN_DEGREE, WIDEN_FLOOR, WIDEN_GAIN, WIDEN_MAX_TERMS
from . import _extract, _final

log = logging.getLogger("symweak")

__all__ = ["default_inputs", "products_by_default"]


def default_inputs(problem) -> tuple[list, int] | None:
    """The inputs offered by default (each field and its first derivative along every
    space coordinate) and the products' degree (``WIDEN_DEGREE``: cubic for one field in
    one space dimension, quadratic otherwise); None where the constraints name ``inputs:``
    or the products would be more than ``WIDEN_MAX_TERMS`` terms."""
    cons = problem.constraints
    if cons is not None and cons.inputs:
        return None
    space = [c for c in problem.coords if str(c) != "t"]
    if not space:
        return None
    fields = list(problem.fields)
    inputs = [*fields, *(sympy.Derivative(f, c) for f in fields for c in space)]
    degree = WIDEN_DEGREE[0] if len(fields) == 1 and len(space) == 1 else WIDEN_DEGREE[1]
    if len(product_library(inputs, degree)) > WIDEN_MAX_TERMS:
        return None
    return inputs, degree


def products_by_default(state, cands, equations: list) -> list:
    """``equations`` (the final fit from ``cands``), or the final fit made again with product
    terms offered, where the first leaves at least ``WIDEN_FLOOR`` of the weak form
    unexplained on every test-function variant and the second at most ``WIDEN_GAIN`` of
    that on every variant (each compared with the same variant: their residuals are not
    comparable across variants), holding a product term. ``res.history.widened`` records
    the comparison whenever it was made."""
    history = state.history
    first = history.phases.get("final")
    narrow = dict(getattr(first, "residuals", None) or {})
    offer = default_inputs(state.problem)
    if offer is None or not narrow or min(narrow.values()) < WIDEN_FLOOR or state.interrupted:
        return equations
    inputs, degree = offer
    kept = (first, history.fits, history.products)
    wide = _extract.widened(state, cands, inputs, degree)
    products = list(history.products)
    if not products:
        history.products = kept[2]
        return equations
    # one selection on the scale that gave the coefficients first: the whole final fit
    # (every variant, stability selection, records) is made again only where that gains
    scale = first.coefficients.split("+")[0]
    if scale in narrow and _final.probe(state, wide, scale) > WIDEN_GAIN * narrow[scale]:
        history.products = kept[2]
        history.widened = {"offered": products, "residuals": narrow, "kept": "first"}
        log.info(
            "final fit: %d products of derivatives offered explain no more of the weak form "
            "(on the %s test functions): keeping the first fit",
            len(products),
            scale,
        )
        return equations
    found = _final.run(state, wide)
    widened = history.phases["final"].residuals
    ratio = max(widened[k] / max(v, 1e-300) for k, v in narrow.items() if k in widened)
    used = sorted({t.short() for e in found for t in e.terms if t.short() in products})
    better = bool(used) and ratio <= WIDEN_GAIN
    log.info(
        "final fit: %s left %.1f %% or more of the weak form unexplained; with %d products "
        "of derivatives offered (%s) at most %.0f %% of that is left%s: keeping the %s fit",
        "; ".join(e.short() for e in equations),
        100 * min(narrow.values()),
        len(products),
        ", ".join(used) or "none used",
        100 * ratio,
        "" if better else f" (kept only at {100 * WIDEN_GAIN:.0f} % or less, using one)",
        "widened" if better else "first",
    )
    history.widened = {
        "offered": products,
        "residuals": narrow,
        "widened_residuals": dict(widened),
        "used": used,
        "kept": "widened" if better else "first",
    }
    if not better:
        history.phases["final"], history.fits, history.products = kept
        return equations
    return found

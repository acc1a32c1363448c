"""Products of derivatives by default: when the final fit from D^α F(U) terms leaves a clear
part of the left-hand side unexplained and no ``inputs:`` line chose the product terms, the
final fit is made again with the products of each field and its first derivatives (u_x²,
u·u_x², d_x(u_x²) = 2 u_x u_xx, …) offered, and that fit is kept when it explains clearly
more (the KPZ equation u_t = 0.08 u_xx + 0.5 u_x² at σ = 5 %: without them the best fit was
−0.30 d_x(sin(1.18 u)), 14 % of u_t unexplained; with them 0.50 u_x² + 0.078 u_xx, 1.8 %).
The log and ``res.history.widened`` say when the library was widened and what it gave.

Before them, the library's monomial neighbours (D^α(u³) beside D^α(u²), u²·v beside u·v, the
constant beside u) are offered under the same rule (``res.history.neighbours``).
"""

from __future__ import annotations

import logging

import sympy

from ...ir import product_library
from .._settings import (
    NEIGHBOURS_FLOOR,
    NEIGHBOURS_GAIN,
    WIDEN_DEGREE,
    WIDEN_FLOOR,
    WIDEN_GAIN,
    WIDEN_MAX_TERMS,
)
from . import _extract, _final

log = logging.getLogger("symweak")

__all__ = ["default_inputs", "neighbours_by_default", "products_by_default"]


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


def _first_residuals(state, floor: float = WIDEN_FLOOR) -> dict:
    """The first final fit's residual per test-function variant, or ``{}`` when that fit
    explains the weak form to within ``floor`` on some variant (or the run was
    interrupted): nothing is offered then."""
    first = state.history.phases.get("final")
    narrow = dict(getattr(first, "residuals", None) or {})
    if not narrow or min(narrow.values()) < floor or state.interrupted:
        return {}
    return narrow


def _wider_fit(state, equations, narrow, wide, offered, gain, what) -> tuple[list | None, dict]:
    """The final fit made again from the candidates ``wide`` (the ``offered`` terms, short
    text, joined the library), and the record of the comparison: the fit when it leaves at
    most ``gain`` of the first fit's residual on every variant (each compared with the same
    variant: their residuals are not comparable across variants) and uses an offered term,
    else None with the first fit's records restored. One selection on the scale that gave
    the coefficients first: the whole final fit (every variant, stability selection,
    records) is made only where that gains."""
    history = state.history
    first = history.phases["final"]
    record = {"offered": offered, "residuals": narrow, "kept": "first"}
    kept = (first, history.fits, history.products)
    scale = first.coefficients.split("+")[0]
    if scale in narrow and _final.probe(state, wide, scale) > gain * narrow[scale]:
        log.info(
            "final fit: %d %s offered explain no more of the weak form (on the %s test "
            "functions): keeping the first fit",
            len(offered),
            what,
            scale,
        )
        return None, record
    found = _final.run(state, wide)
    widened = history.phases["final"].residuals
    ratio = max(widened[k] / max(v, 1e-300) for k, v in narrow.items() if k in widened)
    used = sorted({t.short() for e in found for t in e.terms if t.short() in offered})
    better = bool(used) and ratio <= gain
    log.info(
        "final fit: %s left %.1f %% or more of the weak form unexplained; with %d %s "
        "offered (%s) at most %.0f %% of that is left%s: keeping the %s fit",
        "; ".join(e.short() for e in equations),
        100 * min(narrow.values()),
        len(offered),
        what,
        ", ".join(used) or "none used",
        100 * ratio,
        "" if better else f" (kept only at {100 * gain:.0f} % or less, using one)",
        "widened" if better else "first",
    )
    record.update(widened_residuals=dict(widened), used=used)
    if not better:
        history.phases["final"], history.fits, history.products = kept
        return None, record
    record["kept"] = "widened"
    return found, record


def neighbours_by_default(state, cands, equations: list) -> tuple[list, object]:
    """``(equations, cands)``, or the final fit made again with the library's monomial
    neighbours offered (D^α(u³) beside D^α(u²), u²·v beside u·v, u_xxxx beside
    d_xxxx(u²); :func:`~._extract.with_neighbours`) and those candidates, where the first
    fit leaves at least ``NEIGHBOURS_FLOOR`` of the weak form unexplained on every variant and
    the second at most ``NEIGHBOURS_GAIN`` of that on every variant, holding a neighbour.
    The network's read-back offers the powers its outputs hold: a Zeldovich front
    u_t = 0.05 u_xx + u² − u³ read u and u² and came back as 0.61 u − 0.61 u² with 19 % of
    u_t unexplained. ``res.history.neighbours`` records the comparison."""
    narrow = _first_residuals(state, NEIGHBOURS_FLOOR)
    if not narrow:
        return equations, cands
    wide, near = _extract.with_neighbours(state, cands)
    if not near:
        return equations, cands
    offered = [t.short() for t in near]
    found, state.history.neighbours = _wider_fit(
        state, equations, narrow, wide, offered, NEIGHBOURS_GAIN, "neighbouring monomials"
    )
    return (equations, cands) if found is None else (found, wide)


def products_by_default(state, cands, equations: list) -> list:
    """``equations`` (the final fit from ``cands``), or the final fit made again with product
    terms offered, where the first leaves at least ``WIDEN_FLOOR`` of the weak form
    unexplained on every test-function variant and the second at most ``WIDEN_GAIN`` of
    that on every variant, holding a product term. ``res.history.widened`` records the
    comparison whenever it was made."""
    history = state.history
    narrow = _first_residuals(state)
    offer = default_inputs(state.problem)
    if offer is None or not narrow:
        return equations
    before = history.products
    wide = _extract.widened(state, cands, *offer)
    products = list(history.products)
    history.products = before
    if not products:
        return equations
    found, history.widened = _wider_fit(
        state, equations, narrow, wide, products, WIDEN_GAIN, "products of derivatives"
    )
    if found is None:
        return equations
    history.products = products
    return found

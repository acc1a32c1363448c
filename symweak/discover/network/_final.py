"""Phase 5: the final sparse fit on the trained surrogate.

The final fit is tried with all test-function scales of ``scales`` stacked (see
:func:`_stacked`) and with each scale alone; the first
candidate whose relative weak-form residual is within ``scale_switch`` times the smallest is
kept (with two candidates: the first unless the other is that much better). Radii read off
the surrogate's spectrum suit fronts and cells (Burgers, KS), but on smooth data they come
out small and magnify the surrogate's error in the derivative columns (Chafee–Infante: 12 %
residual with them, 0.04 % with radii η·L_i). Larger supports also average noise a little
better without being more accurate (advection-diffusion at 5 % noise: 1.2× smaller
residual, u_xx 13 % off instead of 2 %), hence a factor rather than the smallest residual.

Readable terms and the selection itself: :mod:`._selection`; the records: :mod:`._records`.

Each scale is also tried on the surrogate's columns plus the
observations' own deviation from it (named "<scale>+data"): on clean data this removes the
surrogate's bias (sparse Navier–Stokes: the true model's residual 13 % -> 0.7 %, ν recovered
on both axes); on noisy data it brings the noise back and leaves a larger residual, so the
same rule keeps the surrogate alone there. Order: cap, cap+data, axis, axis+data (NS:
cap+data 0.007 and axis+data 0.004, the surrogate alone >= 0.05; cap+data is kept, with E∞
0.013 rather than 0.07).
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import torch

from ...ir import Equation
from ...weak import WeakAssembler
from .._history import FinalRecord
from .._scales import first_within
from .._settings import (
    CORRECTION_WIDTH,
    FINAL_TEST_BUDGET,
    FINAL_TEST_RATIO,
)
from ._correction import residual_correction
from ._functions import adopt_preferred
from ._records import fit_records
from ._selection import open_terms, prefer_readable, select
from ._untuned import recheck

__all__ = ["run"]

log = logging.getLogger("symweak")


def _n_final(state, cands) -> int:
    """At least ``FINAL_TEST_RATIO`` test functions per candidate term of the largest
    equation library (more than n_tests where the library is large): with about as many
    test functions as terms a 120-term library nearly spans any left-hand side. Extra test
    functions are only added while test functions × grid points × columns stays below
    ``FINAL_TEST_BUDGET`` (the assembly's work; large 2-D libraries on millions of points
    gain time and keep their equation)."""
    widest = max(len(c) for c in cands.cols)
    points = math.prod(len(a) for a in state.quad.full_axes.values())
    affordable = FINAL_TEST_BUDGET / (points * cands.n_fit)
    n_tests = state.config.tests.n_tests
    return max(n_tests, min(math.ceil(FINAL_TEST_RATIO * widest), int(affordable)))


def _systems(state, cands, scales, n_final, members: bool = True):
    """``{scale: (G, b, correction, test functions)}``: the library's weak columns for the
    final fit with test functions of each radii ``scale``, on the data's own grid when the
    network phases used a coarser one. The coarse grid is enough to steer training
    but not for second derivatives of fine structure: on sparse sine-Gordon the u_xx
    coefficient came out 0.56 on an 8 000-point grid, 0.84 on 27 000 points, with a
    surrogate of MSE 7e-5. Û, the library's values and the spread data residual are computed
    once for all scales."""
    cfg, quad, names = state.config, state.quad, state.problem.obs.coord_names
    sets = [
        state.tests
        if scale == cfg.tests.scales[0] and n_final == cfg.tests.n_tests
        else state.make_tests(scale, n_final)
        for scale in scales
    ]
    chunk = None
    if all(st == 1 for st in quad.strides):
        grid = quad.axes
        assemblers = [
            state.asm_final
            if ts is state.tests
            else WeakAssembler(quad.axes_np, ts, state.orders, device=state.device)
            for ts in sets
        ]
    else:
        fine_np = {n: np.asarray(quad.full_axes[n], dtype=np.float64) for n in names}
        assemblers = [WeakAssembler(fine_np, ts, state.orders, device=state.device) for ts in sets]
        dtype = state.surrogate.lo.dtype
        grid = [torch.as_tensor(fine_np[n], dtype=dtype, device=state.device) for n in names]
        chunk = 8
    Ug, Gs, bs, J = cands.system(
        state, grid, assemblers, chunk=chunk, members=members, verdicts=True
    )
    corrections = residual_correction(
        state.problem.obs,
        Ug.double(),
        assemblers,
        cands.functions,
        cands.lib_index,
        cands.lib_alphas,
        state.field_index,
        state.lhs_alphas,
        width=CORRECTION_WIDTH,
        chunk=chunk,
        jets=J,
    )
    if corrections is None:
        corrections = [None] * len(sets)
    return dict(zip(scales, zip(Gs, bs, corrections, sets)))


def run(state, cands) -> list[Equation]:
    """Phase 5: every variant's weak system, the kept variant's support by stability
    selection (readable terms preferred), its coefficients by total least squares, and
    the fit records (:func:`._records.fit_records`). Returns the equations."""
    cfg, history = state.config, state.history
    if state.check is not None:
        state.best.restore()
        history.surrogate = _surrogate_choice(state)
    start = time.perf_counter()
    n_final = _n_final(state, cands)
    tried, tests = _try_variants(state, cands, n_final)
    chosen = _rule([(k, v[0]) for k, v in tried.items()], cfg)
    residual, results, system, made = tried[chosen]
    used = open_terms(results)
    readable = prefer_readable(state, cands, system, residual, results)
    only_readable = used if readable.get("kept") == "readable" else None
    if only_readable is not None:
        results, made = readable["fit"]
    readable.pop("fit", None)
    # the variants are compared by one selection each (above); the kept one's support is
    # chosen again by stability selection (20 re-selections cost 4× less this way), and its
    # function terms are checked against their polynomial expansions.
    # Open forms are offered to it only where the kept fit needs one: otherwise their
    # near-copies of readable terms split the votes (u_xx was lost that way)
    if cfg.selection.stability_resamples and only_readable is None and not open_terms(results):
        only_readable = ()
    results, made = select(state, cands, *system, readable=only_readable, stable=True)
    # the candidates are compared by their least-squares residuals (above); the kept one's
    # supports are then refitted by total least squares, on one scale's system when the
    # support came from the scales stacked
    source = chosen
    if "&" in chosen:
        source = _rule([(k, v[0]) for k, v in tried.items() if "&" not in k], cfg)
        system = tried[source][2]
    overlap = None
    if cfg.reporting.uncertainty:
        overlap = tests[source.removesuffix("+data")].overlap
    results, _ = select(state, cands, *system, refit=made, readable=only_readable)
    results, cands = adopt_preferred(state, cands, system, results, only_readable)
    history.phases["final"] = FinalRecord(
        seconds=time.perf_counter() - start,
        tests=chosen,
        n_tests=n_final,
        residuals={k: v[0] for k, v in tried.items()},
        readable=readable,
        coefficients=source,
    )
    others = [v[2] for v in tried.values() if v[2] is not system]
    history.fits = fit_records(state, cands, system, others, results, only_readable, overlap)
    if cfg.reporting.uncertainty:
        untuned = lambda: _variant(state, cands, source, n_final, members=False)  # noqa: E731
        recheck(state, cands, untuned, results, only_readable, history.fits)
    return [Equation(lhs, results[lhs][0]) for lhs in state.problem.lhs]


def probe(state, cands, scale: str) -> float:
    """The mean weak-form residual of one selection on ``scale``'s system alone (no data
    correction, no stability selection, no records): a cheap look at what a library
    explains before the whole final fit is made with it."""
    with torch.no_grad():
        G, b, *_ = _systems(state, cands, [scale], _n_final(state, cands))[scale]
    found, _ = select(state, cands, G, b)
    return float(np.mean([fit.residual for _, fit in found.values()]))


def _variant(state, cands, name: str, n_final: int, members: bool = True):
    """``(G, b)`` of one variant of :func:`_try_variants` (a scale, "+data" with the
    correction) on the surrogate as it is now."""
    scale = name.removesuffix("+data")
    with torch.no_grad():
        G, b, correction, _ = _systems(state, cands, [scale], n_final, members)[scale]
    if name.endswith("+data") and correction is not None:
        return G + correction[0], b + correction[1]
    return G, b


def _try_variants(state, cands, n_final) -> tuple[dict, dict]:
    """``{variant: (mean residual, results, (G, b), fits made)}``: one selection on each
    scale's system, each scale plus the data correction ("+data") and the scales stacked
    ("cap&axis"), in the order the rule reads them; and ``{scale: its test functions}``."""
    with torch.no_grad():
        scales = list(dict.fromkeys(state.config.tests.scales))
        systems = _systems(state, cands, scales, n_final)
    variants = {}
    for scale, (G, b, correction, _) in systems.items():
        variants[scale] = (G, b)
        if correction is not None:
            variants[scale + "+data"] = (G + correction[0], b + correction[1])
    if len(systems) > 1:
        variants = {**_stacked(variants, list(systems)), **variants}
    tried = {}
    for name, system in variants.items():
        found, made = select(state, cands, *system)
        residual = float(np.mean([fit.residual for _, fit in found.values()]))
        tried[name] = (residual, found, system, made)
    return tried, {scale: v[3] for scale, v in systems.items()}


def _rule(residuals: list[tuple[str, float]], cfg) -> str:
    """The first variant whose residual is within ``scale_switch`` times the smallest."""
    return first_within(residuals, cfg.tests.scale_switch)


def _stacked(variants: dict, scales: list) -> dict:
    """The scales' test functions as one system ("cap&axis", and "cap&axis+data" with the
    data correction), each scale's rows divided by the norm of its left-hand side so that
    each counts alike. The equation must hold against every test function; a term that
    matters at one scale only (u_xx under the small "cap" supports of a reaction–diffusion
    front, < 1 % of b under the "axis" ones) is then kept only if it earns its place in
    both together, and the residuals of different scales, which are not comparable, no
    longer decide alone (tuning half and paper rows, replayed final fits: 22/29 recovered
    against 20/29; KdV at σ = 1 and Nagumo at σ = 0 gained, none lost). The coefficients
    are refitted on one scale (on the stack, Burgers at σ = 0.2 came out twice as far
    off)."""
    out = {}
    for suffix in ("", "+data"):
        parts = [variants.get(s + suffix) for s in scales]
        if any(p is None for p in parts):
            continue
        norms = [torch.linalg.norm(b).clamp_min(1e-300) for _, b in parts]
        out["&".join(scales) + suffix] = (
            torch.cat([G / n for (G, _), n in zip(parts, norms)]),
            torch.cat([b / n for (_, b), n in zip(parts, norms)]),
        )
    return out


def _surrogate_choice(state):
    from .._history import SurrogateChoice

    best = state.best
    log.info(
        "final fit on the surrogate of %s epoch %d (held-out loss %.3e)",
        best.phase,
        best.epoch,
        best.loss,
    )
    return SurrogateChoice(phase=best.phase, epoch=best.epoch, loss=best.loss)

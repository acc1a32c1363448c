"""The full-grid method: data that fill a grid need no surrogate, just a fixed library, the
weak form and sparse regression (the paper's r = 100 % rows).

Steps: build the library (fields' monomials × derivative multi-indices, filtered by the
constraints and rules), evaluate each distinct F on the grid (noise-debiased), integrate
against the test functions (float64), and choose a sparse model without the truth (MSTLS).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

import numpy as np
import sympy

from .._errors import DataError, SymweakError
from .._seeds import child_seed
from ..ir import Equation, polynomial_library, product_library
from ..regress import (
    drop_minor_terms,
    fit_equations,
    mstls,
    prefer_neighbours,
    refit_support,
    stlsq,
    term_complexity,
)
from ..weak import WeakAssembler
from ._griddata import data_jets, estimate_noise, evaluate_functions, jet_noise
from ._history import FitRecord, GridRecord, History
from ._library import (
    distinct_functions,
    equation_libraries,
    filter_library,
    kept_indices,
    power_neighbours,
    prefer_expansions,
    term_families,
    time_terms,
    union,
)
from ._posed import ill_test, observed_values, replaced
from ._scales import choose_scale
from ._settings import GRID_CONSTANT_FLOOR, NEIGHBOURS_GAIN, NOISE_THRESHOLD
from ._testfunctions import bump_for_orders, make_tests, spectral_radius, support_floor
from ._verdicts import agree_ties, judge_equation, record_uncertainty

__all__ = ["build_library", "estimate_noise", "evaluate_functions", "run"]

log = logging.getLogger("symweak")

#: highest derivative order per space axis of the fixed library (and total order in 2-D)
DEFAULT_ORDER = 4


def _unary(problem, config) -> tuple:
    """The operator set's functions of one argument (sin, tanh, exp, …) that the library
    applies to each field (``library.unary``)."""
    if not config.library.unary or problem.ops is None:
        return ()
    return tuple(op for op in problem.ops.unary if op.function)


def build_library(problem, config) -> list:
    """The fixed library (monomials of the fields and the operator set's functions of each
    field, under every derivative multi-index), filtered by the constraints.

    A function of a field is nearly collinear with low-degree monomials over a small range
    (u and sin u together write u − u³/6): the selection therefore weighs it more
    (``complexity``) and keeps it only where it explains the weak form clearly better than
    its polynomial expansion (:func:`_fit_fn`). Functions of several fields enter through
    ``add:`` in the constraints."""
    lib_cfg = config.library
    space = [c for c in problem.coords if str(c) != "t"]
    max_order = {str(c): DEFAULT_ORDER for c in space}
    max_order["t"] = 0
    max_order.update(problem.max_order(lib_cfg.max_order))
    max_total = DEFAULT_ORDER if len(space) > 1 else None
    library = polynomial_library(
        problem.fields,
        problem.coords,
        lib_cfg.degree,
        max_order,
        max_total,
        _unary(problem, config),
        lib_cfg.include_constant,
    )
    library = library + time_terms(problem.lhs, library)
    library = filter_library(library, problem.lhs, problem.constraints)
    constraints = problem.constraints
    if constraints is not None and constraints.inputs:
        present = set(library) | set(problem.lhs) | set(constraints.forbid)
        library += [
            t for t in product_library(constraints.inputs, lib_cfg.degree) if t not in present
        ]
    return library


def _test_functions(problem, config, axes, grids, orders, scale):
    tcfg = config.tests
    bump = bump_for_orders(tcfg.test_function, orders)
    bounds = {n: (float(a[0]), float(a[-1])) for n, a in axes.items()}
    radius = None
    if scale in ("cap", "spectrum"):
        radius = spectral_radius(axes, [grids[f] for f in problem.obs.field_names], bump)
    return make_tests(
        bounds,
        tcfg.n_tests,
        tcfg.eta,
        problem.seed,
        bump,
        scale,
        radius,
        domain=problem.obs.domain,
        floor=support_floor(axes),
    )


def _fit_fn(config, constraints, values=None):
    sel = config.selection

    def fit_fn(Ge, b, lib):
        keep = kept_indices(lib, constraints)
        if sel.threshold is not None:
            return stlsq(Ge, b, sel.threshold, keep=keep)
        complexity = term_complexity(lib, sel.complexity)
        families = term_families(lib)
        fit = mstls(
            Ge,
            b,
            keep=keep,
            criterion=sel.criterion,
            complexity=complexity,
            families=families,
        )
        # a function of a field must explain the weak form clearly better than its
        # polynomial expansion: with sin u offered, full-grid Chafee–Infante at σ = 0.01
        # read 5.32 u − 6.35 sin u + 0.99 u_xx (u − u³/6 in disguise), and Nagumo −7.1 u +
        # 1.36 u² + 6.87 sin u + …; as in the network method's final fit
        fit = prefer_expansions(
            Ge,
            b,
            fit,
            lib,
            keep,
            sel.criterion,
            complexity,
            families,
            values=values,
        )
        fit = prefer_neighbours(Ge, b, fit, power_neighbours(lib), complexity)
        # as in the network method's final fit: a term that explains less than a part of
        # what the fit leaves unexplained is dropped (full-grid sine-Gordon at σ = 0.2 kept
        # 0.013 u_xxyy beside the three true terms)
        return drop_minor_terms(Ge, b, fit, sel.minor_ratio, keep)

    return fit_fn


def _designs(problem, libraries, library, values, index, tests, orders) -> dict:
    """``{lhs: (terms, G, b)}``: every equation's weak system against ``tests``."""
    names = problem.obs.coord_names
    assembler = WeakAssembler(problem.obs.grid.axes, tests, orders)
    G = assembler.integrate(
        values[[index[t.F] for t in library]], [t.orders(names) for t in library]
    ).numpy()
    position = {t: i for i, t in enumerate(library)}
    designs = {}
    for lhs in problem.lhs:
        lib = [t for t in libraries[lhs] if t in position]
        b = assembler.integrate(values[[index[lhs.F]]], [lhs.orders(names)]).numpy()[:, 0]
        designs[lhs] = (lib, G[:, [position[t] for t in lib]], b)
    return designs


def run(problem, config) -> tuple[list[Equation], History]:
    """Run the full-grid method; returns (equations, history). Two fields with an equation
    each and no rule are fitted again under U(1) phase symmetry, and that fit is kept where
    it explains clearly more, and merged into the verdicts where it explains as much
    (:mod:`.network._symmetry`, as on the network path)."""
    from .network._symmetry import as_good, judged, merge_tied, symmetric_problem, worth_testing

    equations, history = _with_constant(problem, config, *_run(problem, config))
    offered = symmetric_problem(problem)
    if offered is None or not worth_testing(history.grid.residuals):
        return equations, history
    symmetric, rule = offered
    found, tied = _run(symmetric, config)
    narrow, residuals = history.grid.residuals, tied.grid.residuals
    record = judged(rule, narrow, residuals, equations, found)
    kept = (found, tied) if record["kept"] == "symmetric" else (equations, history)
    if record["kept"] == "first" and as_good(narrow, residuals, [history.grid.scale]):
        merge_tied(history.fits, tied.fits, record)
    kept[1].symmetry = record
    return kept


def _with_constant(problem, config, equations, history) -> tuple[list[Equation], History]:
    """``(equations, history)``, or the fit made again with the constant F = 1 offered (a
    feed term: the Brusselator's u_t = 0.05 u_xx + 1 − 3u + u²v came back from the full
    grid as 0.86 u²v − 2.46 u + 0.59 v − 0.11 v², 1.4 % unexplained), where an equation of
    the first fit leaves at least ``GRID_CONSTANT_FLOOR`` of its weak form unexplained and
    each equation that uses the constant in the second at most ``NEIGHBOURS_GAIN`` of what
    it left. Only on data whose estimated noise is below ``NOISE_THRESHOLD`` of each field's
    spread: on noisy data every fit leaves that much, and the second fit would double the
    run (two-dimensional grids: minutes). ``res.history.neighbours`` records the comparison,
    as on the network path."""
    narrow = {f.lhs: f.residual for f in history.fits}
    if config.library.include_constant or max(narrow.values(), default=0.0) < GRID_CONSTANT_FLOOR:
        return equations, history
    grids = [np.asarray(problem.obs.to_grid(f), dtype=float) for f in problem.obs.field_names]
    if any(estimate_noise(g) >= NOISE_THRESHOLD * (np.std(g) or 1.0) for g in grids):
        return equations, history
    found, wide = _run(problem, config.with_overrides({"include_constant": True}))
    residuals = {f.lhs: f.residual for f in wide.fits}
    users = [e.lhs.short() for e in found if any(t.F == 1 and not t.alpha for t in e.terms)]
    ratio = max((residuals[k] / max(narrow[k], 1e-300) for k in users), default=1.0)
    better = bool(users) and ratio <= NEIGHBOURS_GAIN
    log.info(
        "grid fit: %s left %.1f %% of the weak form unexplained; with the constant offered "
        "(used in %s) at most %.0f %% of that is left: keeping the %s fit",
        "; ".join(e.short() for e in equations),
        100 * max(narrow.values()),
        ", ".join(users) or "none",
        100 * ratio,
        "widened" if better else "first",
    )
    record = {
        "offered": ["1"],
        "residuals": narrow,
        "widened_residuals": residuals,
        "used": ["1"] if users else [],
        "kept": "widened" if better else "first",
    }
    kept = (found, wide) if better else (equations, history)
    kept[1].neighbours = record
    return kept


def _run(problem, config) -> tuple[list[Equation], History]:
    """One full-grid fit of ``problem`` as it is (its own rules only)."""
    obs = problem.obs
    if not obs.is_full_grid:
        why = (
            "these hold replicates (several points per coordinate), which are never put on a grid"
            if obs.replicates is not None
            else "these are scattered or leave grid points empty"
        )
        raise DataError(
            f"method='grid' needs observations that fill their grid, and {why}; use "
            "method='network' (or 'auto', which picks it)."
        )
    start = time.perf_counter()
    libraries, reports, ties = equation_libraries(problem, build_library(problem, config))
    library = union(libraries)
    if not library or not all(libraries.values()):
        raise SymweakError("The candidate library is empty; relax the constraints or rules.")
    axes = obs.grid.axes
    grids = {f: obs.to_grid(f) for f in obs.field_names}
    names = obs.coord_names
    orders = {
        n: max(t.orders(names)[i] for t in [*library, *problem.lhs]) for i, n in enumerate(names)
    }
    funcs, index = distinct_functions([*library, *problem.lhs])
    sigma = {f: estimate_noise(g) for f, g in grids.items()} if config.selection.debias else None
    derivs = sorted(
        {d for F in funcs for d in F.atoms(sympy.Derivative)}, key=sympy.default_sort_key
    )
    jets = data_jets(grids, axes, derivs)
    if sigma is not None and derivs:
        sigma = {**sigma, **jet_noise(axes, derivs, sigma)}
    values = evaluate_functions(funcs, {**grids, **jets}, sigma)
    bad = [str(funcs[i]) for i in range(len(funcs)) if not np.all(np.isfinite(values[i]))]
    if bad:  # e.g. log(u) where u <= 0: such candidates cannot be integrated; say so
        library = [t for t in library if np.all(np.isfinite(values[index[t.F]]))]
        log.warning("dropped candidate terms with non-finite values on the data: %s", bad)
    tcfg = config.tests
    scales = list(dict.fromkeys(tcfg.scales))
    tried = {}
    for scale in scales:
        tests = _test_functions(problem, config, axes, grids, orders, scale)
        designs = _designs(problem, libraries, library, values, index, tests, orders)
        fits = fit_equations(
            designs, ties, _fit_fn(config, problem.constraints, problem.obs.fields)
        )
        residual = float(np.mean([fit.residual for _, fit in fits.values()]))
        tried[scale] = (residual, tests, designs, fits)
    chosen = choose_scale(tried, config)
    _, tests, designs, fits = tried[chosen]
    if len(tried) > 1:
        log.info(
            "grid fit: residuals %s; keeping the %s radii",
            ", ".join(f"{k} {v[0]:.4g}" for k, v in tried.items()),
            chosen,
        )
    posed: dict = {}
    observed = observed_values(problem.obs, noise=sigma)
    fits = _preferred(problem, config, designs, fits, ties, observed, posed)
    equations = [Equation(lhs, fits[lhs][0]) for lhs in problem.lhs]
    record = GridRecord(
        seconds=time.perf_counter() - start,
        library=[t.short() for t in library],
        n_tests=len(tests),
        test_function=repr(tests.bump),
        radii={
            n: [float(tests.radii[:, i].min()), float(tests.radii[:, i].max())]
            for i, n in enumerate(names)
        },
        rules=[r.as_dict() for r in reports],
        non_finite_functions=bad,
        noise_estimate=sigma,
        scale=chosen,
        residuals={k: v[0] for k, v in tried.items()},
    )
    others = [v[2] for k, v in tried.items() if k != chosen]
    records = _records(problem, config, designs, fits, others, tests, ties)
    history = History(grid=record, fits=records, posed=posed, observed=observed)
    return equations, history


def _preferred(problem, config, designs, fits, ties, observed=None, posed=None) -> dict:
    """``fits`` with each equation whose support the verdicts put out of reach of their
    best (or that is ill-posed at the ``observed`` values beside a well-posed one within
    reach, recorded in ``posed`` as ``History.posed``) refitted on that best (as on the
    network path, :func:`.network._functions.adopt_preferred`); equations tied by ``pair``
    rules and runs without verdicts (``uncertainty=False``) are left as they are."""
    from .network._functions import preferred_support

    posed = {} if posed is None else posed
    if not config.reporting.uncertainty:
        return fits
    tied = {x for a, b_, _ in ties for x in (a, b_)}
    fits = dict(fits)
    for e, lhs in enumerate(problem.lhs):
        lib, G, b = designs[lhs]
        fit = fits[lhs][1]
        if lhs in tied or len(fit.coef) != len(lib):
            continue
        support = preferred_support(
            lib,
            G,
            b,
            fit.coef,
            how=config.selection.complexity,
            constraints=problem.constraints,
            seed=child_seed(problem.seed, "verdicts") + e,
            ill=(ill := ill_test(lhs, lib, observed)),
        )
        if support is None:
            continue
        if ill is not None and ill(fit.coef):
            posed[lhs.short()] = replaced(lhs, fits[lhs][0], observed)
        coef = refit_support(G, b, support, "+tls" in fit.method)
        residual = float(np.linalg.norm(G @ coef - b) / (np.linalg.norm(b) or 1.0))
        log.info(
            "grid fit: %s returned as the data prefer it (%s instead of %s)",
            lhs.short(),
            ", ".join(lib[j].short() for j in support),
            ", ".join(t.short() for t in fits[lhs][0]),
        )
        selected = tuple(int(j) for j in np.flatnonzero(fit.coef))
        fits[lhs] = (
            {lib[j]: float(coef[j]) for j in support},
            replace(fit, coef=coef, residual=residual, selected=selected),
        )
    return fits


def _records(problem, config, designs, fits, others, tests, ties=()) -> list[FitRecord]:
    """One :class:`FitRecord` per equation, with intervals, prices, the Pareto front
    (:func:`._verdicts.record_uncertainty`, the other scales' designs and the overlap of
    ``tests`` widening the intervals) and what the data determine
    (:func:`._verdicts.judge_equation`) unless ``uncertainty=False``. Equations tied by a
    ``pair`` rule share one joint fit: each is judged on its own design with its own part of
    the coefficients, and their verdicts then agree (:func:`._verdicts.agree_ties`)."""
    from .network._functions import apart

    tied = {x for a, b_, _ in ties if a != b_ for x in (a, b_)}
    records = []
    for e, lhs in enumerate(problem.lhs):
        fit = fits[lhs][1]
        lib, G, b = designs[lhs]
        coef = fit.coef
        if lhs in tied:  # the joint fit's coefficients are in the joint design's order
            coef = np.array([float(fits[lhs][0].get(t, 0.0)) for t in lib])
        record = FitRecord(
            lhs=lhs.short(),
            residual=fit.residual,
            method=fit.method,
            threshold=fit.threshold,
            library_size=len(lib),
        )
        if config.reporting.uncertainty and len(coef) == len(lib):
            record_uncertainty(
                record,
                lhs,
                lib,
                G,
                b,
                coef,
                how=config.selection.complexity,
                constraints=problem.constraints,
                seed=child_seed(problem.seed, "stability") + 1 + e,
                method=fit.method,
                others=[(o[lhs][1], o[lhs][2]) for o in others],
                overlap=tests.overlap,
            )
            judge_equation(
                lhs,
                lib,
                G,
                b,
                coef,
                record,
                how=config.selection.complexity,
                constraints=problem.constraints,
                seed=child_seed(problem.seed, "verdicts") + e,
                rhs=fits[lhs][0],
                apart=apart(lib),
                start=[fit.selected] if fit.selected and lhs not in tied else (),
            )
        records.append(record)
    if config.reporting.uncertainty and tied:
        agree_ties(dict(zip(problem.lhs, records)), ties)
    return records

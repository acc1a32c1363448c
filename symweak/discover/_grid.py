"""The full-grid method: data that fill a grid need no surrogate, just a fixed library, the
weak form and sparse regression (the paper's r = 100 % rows).

Steps: build the library (fields' monomials × derivative multi-indices, filtered by the
constraints and rules), evaluate each distinct F on the grid (noise-debiased), integrate
against the test functions (float64), and choose a sparse model without the truth (MSTLS).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .._errors import DataError, SymweakError
from ..ir import Equation, polynomial_library, product_library, short
from ..regress import (
    LOG_PENALTY,
    drop_minor_terms,
    fit_equations,
    mstls,
    refit_support,
    stlsq,
    term_complexity,
)
from ..weak import WeakAssembler
from ._history import FitRecord, GridRecord, History
from ._library import (
    distinct_functions,
    equation_libraries,
    filter_library,
    kept_indices,
    prefer_expansions,
    term_families,
    union,
)
from ._testfunctions import bump_for_orders, make_tests, spectral_radius, support_floor

__all__ = ["build_library", "estimate_noise", "evaluate_functions", "run"]

log = logging.getLogger("symweak")

#: highest derivative order per space axis of the fixed library (and total order in 2-D)
DEFAULT_ORDER = 4


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


def _fit_fn(config, constraints):
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
        )
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


def _scale_choice(tried: dict, config) -> str:
    """The scale whose fit is kept, from ``tried`` (``{scale: (residual, tests, designs,
    fits)}``, in the order tried).

    Each scale's selected supports
    are refitted on every scale's test functions, and the supports kept are those of least
    Σ_equations [max over scales of log(r_s(S) / min_S' r_s(S')) + penalty × complexity(S)]
    — the `log` criterion's price per term against the worst scale's misfit: an equation
    must hold against every scale's test functions, and a term is kept when some scale
    needs it. Among the scales that selected those supports, the residual rule picks the
    one whose coefficients are kept (the first within ``scale_switch`` of the least).
    Residuals of different scales are not comparable:
    PDE-FIND's Kuramoto–Sivashinsky file (domain 32π, many cells) has a 1.5× smaller
    residual under the large "axis" supports, where u_xxxx's column vanishes, and the
    residual rule kept −0.499 d_x(u²) − 0.938 u_xx at σ = 0.1; the support rule keeps
    u_xxxx (the "cap" fit) at σ 0.1–1, and changes no outcome of the 54 tuning and paper
    runs (docs/benchmarks.md)."""
    tcfg = config.tests

    def by_residual(names):
        least = min(tried[k][0] for k in names)
        return next(k for k in names if tried[k][0] <= tcfg.scale_switch * least)

    names = list(tried)
    if len(names) == 1:
        return names[0]
    supports = {
        k: {lhs: tuple(int(j) for j in fit.support) for lhs, (_, fit) in tried[k][3].items()}
        for k in names
    }
    score = dict.fromkeys(names, 0.0)
    for lhs in supports[names[0]]:
        lib = tried[names[0]][2][lhs][0]
        weights = term_complexity(lib, config.selection.complexity)
        misfit = {}
        for k in names:
            for s in names:
                _, G, b = tried[s][2][lhs]
                sup = list(supports[k][lhs])
                coef = refit_support(G, b, sup, False) if sup else np.zeros(G.shape[1])
                misfit[k, s] = float(np.linalg.norm(G @ coef - b) / (np.linalg.norm(b) or 1.0))
        for k in names:
            worst = max(
                np.log(max(misfit[k, s], 1e-300) / max(min(misfit[q, s] for q in names), 1e-300))
                for s in names
            )
            sup = list(supports[k][lhs])
            size = len(sup) if weights is None else float(weights[sup].sum())
            score[k] += worst + LOG_PENALTY * size
    best = min(names, key=lambda k: score[k])
    return by_residual([k for k in names if supports[k] == supports[best]])


def run(problem, config) -> tuple[list[Equation], History]:
    """Run the full-grid method; returns (equations, history)."""
    obs = problem.obs
    if not obs.is_full_grid:
        raise DataError("The grid fast path needs observations that fill their grid.")
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
        fits = fit_equations(designs, ties, _fit_fn(config, problem.constraints))
        residual = float(np.mean([fit.residual for _, fit in fits.values()]))
        tried[scale] = (residual, tests, designs, fits)
    chosen = _scale_choice(tried, config)
    _, tests, designs, fits = tried[chosen]
    if len(tried) > 1:
        log.info(
            "grid fit: residuals %s; keeping the %s radii",
            ", ".join(f"{k} {v[0]:.4g}" for k, v in tried.items()),
            chosen,
        )
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
    history = History(
        grid=record,
        fits=[
            FitRecord(
                lhs=lhs.short(),
                residual=fits[lhs][1].residual,
                method=fits[lhs][1].method,
                threshold=fits[lhs][1].threshold,
                library_size=len(designs[lhs][0]),
            )
            for lhs in problem.lhs
        ],
    )
    return equations, history

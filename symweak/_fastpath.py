"""Discovery on data that fill a grid: no surrogate, just a fixed library, the weak form and
sparse regression (the paper's r = 100 % rows).

Steps: build the library (fields' monomials and unary operators × derivative multi-indices,
filtered by the constraints), evaluate each distinct F on the grid, integrate against the
test functions (float64), and choose a sparse model without the truth (MSTLS).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from ._errors import DataError, SymweakError
from .ir import Equation, Term, polynomial_library
from .regress import mstls, stlsq
from .weak import TestFunctionSet, WeakAssembler

__all__ = ["GridSettings", "evaluate_functions", "fit_grid"]

log = logging.getLogger("symweak")


@dataclass
class GridSettings:
    degree: int = 3
    max_order: dict | None = None
    max_total: int | None = None
    n_tests: int = 1000
    test_function: str = "poly"
    eta: tuple[float, float] = (0.2, 0.4)
    scale: str = "hybrid"
    criterion: str = "wsindy"
    threshold: float | None = None
    include_constant: bool = False
    complexity: str = "terms"
    debias: bool = True


def estimate_noise(values: np.ndarray, order: int = 6) -> float:
    """Standard deviation of white noise on smooth gridded data.

    Along every axis, the order-``order`` finite difference of a smooth signal is tiny while
    that of white noise has variance C(2k, k)·σ²; a robust (median absolute deviation)
    estimate is taken per axis and the smallest is returned.
    """
    import math

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
    sin(u) and cos(u) are scaled by exp(σ²/2) (E[sin(u + ε)] = e^{-σ²/2} sin u).
    """
    factors = sympy.Mul.make_args(F)
    out = 1.0
    for factor in factors:
        base, exp = factor.as_base_exp()
        if isinstance(base, AppliedUndef) and exp.is_Integer and exp > 0:
            name = base.func.__name__
            out = out * _hermite_power(grids[name], int(exp), sigma.get(name, 0.0))
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
        fields = sorted(F.atoms(AppliedUndef), key=str)
        syms = [sympy.Dummy(f.func.__name__) for f in fields]
        fn = sympy.lambdify(syms, F.xreplace(dict(zip(fields, syms))), modules="numpy")
        with np.errstate(all="ignore"):
            val = fn(*[grids[f.func.__name__] for f in fields])
        out[i] = np.broadcast_to(np.asarray(val, dtype=np.float64), shape)
    return out


def _degree(expr, fields) -> int:
    """Polynomial degree in ``fields``; a function factor counts as its argument's degree."""
    if not fields:
        return 0
    if expr.is_polynomial(*fields):
        return int(sympy.Poly(expr, *fields).total_degree())
    if expr.is_Add:
        return max(_degree(a, fields) for a in expr.args)
    if expr.is_Mul:
        return sum(_degree(a, fields) for a in expr.args)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp > 0:
        return int(expr.exp) * _degree(expr.base, fields)
    if isinstance(expr, sympy.Function) and expr.args:
        return max(1, max(_degree(a, fields) for a in expr.args))
    return 2  # anything else (u**0.5, ...): as before


def term_complexity(library: Sequence[Term], how: str) -> np.ndarray | None:
    """Per-term weights for the sparsity penalty: ``"terms"`` (all 1), ``"degree"`` (the
    polynomial degree of F, at least 1), ``"degree:w"`` (1 + w·(degree − 1): each degree
    above the first adds w of a term), ``"degree+order"`` (degree + derivative order / 2).
    A function of the fields counts as its argument's degree (sin u: 1, v·sin u: 2): one
    operator applied to a field is as simple as the field itself, and a flat 2 kept
    sine-Gordon's sin u out of the model at σ = 0.2 (it lowers the residual 1.6×)."""
    per_degree = None
    if isinstance(how, str) and how.startswith("degree:"):
        try:
            per_degree = float(how[len("degree:") :])
        except ValueError:
            per_degree = None
        if per_degree is None or not (np.isfinite(per_degree) and per_degree >= 0):
            raise SymweakError(
                f"complexity 'degree:w' needs a number w >= 0 (e.g. 'degree:0.25'), got {how!r}."
            )
    elif how not in ("terms", "degree", "degree+order"):
        raise SymweakError(
            f"complexity must be 'terms', 'degree', 'degree:w' or 'degree+order', got {how!r}."
        )
    if how == "terms":
        return None
    out = []
    for term in library:
        degree = max(int(_degree(term.F, term.fields)), 1)
        if per_degree is not None:
            w = 1.0 + per_degree * (degree - 1)
        elif how == "degree+order":
            w = degree + 0.5 * term.total_order
        else:
            w = degree
        out.append(float(w))
    return np.array(out)


def build_library(obs, lhs_terms, ops, settings: GridSettings, constraints=None) -> list[Term]:
    coords = [sympy.Symbol(n) for n in obs.coord_names]
    fields = [sympy.Function(f)(*coords) for f in obs.field_names]
    space = [c for c in coords if str(c) != "t"]
    default_order = 4
    max_order = {str(c): default_order for c in space}
    max_order["t"] = 0
    if settings.max_order:
        max_order.update({str(k): int(v) for k, v in settings.max_order.items()})
    if constraints is not None and constraints.max_order:
        max_order.update(constraints.max_order)
    max_total = settings.max_total
    if max_total is None and len(space) > 1:
        max_total = default_order
    # The fixed library is polynomial: unary operators (sin, ...) applied to fields are
    # nearly collinear with low-degree monomials for small amplitudes and wreck the sparse
    # fit on noisy data. They enter as candidates through `add:` in the constraints.
    library = polynomial_library(
        fields,
        coords,
        settings.degree,
        max_order,
        max_total,
        (),
        settings.include_constant,
    )
    lhs_set = set(lhs_terms)
    library = [t for t in library if t not in lhs_set]
    if constraints is not None:
        forbid = set(constraints.forbid)
        library = [t for t in library if t not in forbid]
        for term in [*constraints.add, *constraints.keep]:
            if term not in library and term not in lhs_set:
                library.append(term)
    return library


def equation_libraries(obs, lhs_terms, library, constraints=None, rules=()):
    """Per-equation libraries ``{lhs: [terms]}`` after the rules (constraint rules first,
    then ``rules``), the rule reports, and the ties of ``pair`` rules (see
    :func:`fit_equations`). Kept terms (``keep:``) survive every rule."""
    from .rules import apply_rules

    specs = [*(constraints.rules if constraints is not None else ()), *rules]
    libs = {lhs: list(library) for lhs in lhs_terms}
    if not specs:
        return libs, [], []
    coords = [sympy.Symbol(n) for n in obs.coord_names]
    fields = [sympy.Function(f)(*coords) for f in obs.field_names]
    libs, reports = apply_rules(libs, specs, coords, fields)
    from .rules import rule_from_spec

    rule_objs = [r if hasattr(r, "ties") else rule_from_spec(r) for r in specs]
    ties = [tie for r in rule_objs for tie in r.ties(libs, coords, fields)]
    for report in reports:
        report.ties = [
            [a.short(), b.short(), [[t.short(), p.short(), k] for t, p, k in pairs]]
            for a, b, pairs in ties
        ]
    if constraints is not None and constraints.keep:
        for lhs, lib in libs.items():
            lib.extend(t for t in constraints.keep if t not in lib and t != lhs)
    for report in reports:
        log.info("%s", report)
    return libs, reports, ties


def fit_equations(designs, ties, fit_fn):
    """Sparse fits per equation, with the equations tied by ``pair`` rules fitted jointly.

    designs: ``{lhs: (terms, G, b)}``; ties: ``[(lhs A, lhs B, [(T, T', k), ...])]`` meaning
    B's coefficient of T' is k times A's coefficient of T; fit_fn(G, b, terms) -> Fit.
    Returns ``{lhs: (rhs dict, fit)}``.
    """
    out = {}
    tied = {a: (b, pairs) for a, b, pairs in ties if a in designs and b in designs}
    partners = {b for b, _ in tied.values()}
    for lhs, (lib, G, b) in designs.items():
        if lhs in partners and lhs not in tied:
            continue
        if lhs not in tied:
            fit = fit_fn(G, b, lib)
            out[lhs] = ({lib[j]: float(fit.coef[j]) for j in fit.support}, fit)
            continue
        other, pairs = tied[lhs]
        lib_b, G_b, b_b = designs[other]
        pos_a = {t: i for i, t in enumerate(lib)}
        pos_b = {t: i for i, t in enumerate(lib_b)}
        partner = {t: (p, k) for t, p, k in pairs if t in pos_a and p in pos_b}
        used = {p for p, _ in partner.values()}
        cols, names = [], []
        zeros_a, zeros_b = np.zeros(G.shape[0]), np.zeros(G_b.shape[0])
        for t in lib:
            if t in partner:
                p, k = partner[t]
                cols.append(np.concatenate([G[:, pos_a[t]], k * G_b[:, pos_b[p]]]))
            else:
                cols.append(np.concatenate([G[:, pos_a[t]], zeros_b]))
            names.append(("a", t))
        for p in lib_b:
            if p not in used:
                cols.append(np.concatenate([zeros_a, G_b[:, pos_b[p]]]))
                names.append(("b", p))
        joint = np.stack(cols, axis=1)
        fit = fit_fn(joint, np.concatenate([b, b_b]), [t for _, t in names])
        rhs_a, rhs_b = {}, {}
        for j in fit.support:
            side, t = names[j]
            c = float(fit.coef[j])
            if side == "a":
                rhs_a[t] = c
                if t in partner:
                    p, k = partner[t]
                    rhs_b[p] = k * c
            else:
                rhs_b[t] = c
        out[lhs] = (rhs_a, fit)
        out[other] = (rhs_b, fit)
    return out


def union(libraries: Mapping) -> list[Term]:
    out, seen = [], set()
    for lib in libraries.values():
        for t in lib:
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def fit_grid(
    obs,
    lhs_terms: Sequence[Term],
    ops,
    settings: GridSettings,
    seed: int,
    constraints=None,
    rules=(),
):
    """Run the fast path; returns (equations, info) with per-equation regression details."""
    if not obs.is_full_grid:
        raise DataError("The grid fast path needs observations that fill their grid.")
    if obs.is_complex:
        raise DataError(
            "Complex fields must be split into real and imaginary parts first: "
            "obs.split_complex({'psi': ('u', 'v')}), then lhs='u_t, v_t'."
        )
    start = time.perf_counter()
    library = build_library(obs, lhs_terms, ops, settings, constraints)
    libraries, reports, ties = equation_libraries(obs, lhs_terms, library, constraints, rules)
    library = union(libraries)
    if not library or not all(libraries.values()):
        raise SymweakError("The candidate library is empty; relax the constraints or rules.")
    axes = obs.grid.axes
    grids = {f: obs.to_grid(f) for f in obs.field_names}
    names = obs.coord_names
    bounds = {n: (float(a[0]), float(a[-1])) for n, a in axes.items()}
    orders = {n: 0 for n in names}
    for term in [*library, *lhs_terms]:
        for n, k in zip(names, term.orders(names)):
            orders[n] = max(orders[n], k)
    bump = settings.test_function
    if bump == "poly":  # smooth enough for every order used, and well resolved by quadrature
        bump = f"poly:{max(8, max(orders.values()) + 4)}"
    if settings.scale in ("auto", "hybrid"):
        radius = {}
        for f in obs.field_names:
            r = TestFunctionSet.auto_radius(axes, grids[f], bump)
            radius = {n: max(radius.get(n, 0.0), v) for n, v in r.items()}
        tests = TestFunctionSet.random(
            bounds,
            settings.n_tests,
            settings.eta,
            seed,
            bump,
            scale="cap" if settings.scale == "hybrid" else "paper",
            radius=radius,
        )
    else:
        tests = TestFunctionSet.random(
            bounds, settings.n_tests, settings.eta, seed, bump, settings.scale
        )
    assembler = WeakAssembler(axes, tests, orders)
    funcs = []
    index = {}
    for term in [*library, *lhs_terms]:
        if term.F not in index:
            index[term.F] = len(funcs)
            funcs.append(term.F)
    sigma = {f: estimate_noise(g) for f, g in grids.items()} if settings.debias else None
    values = evaluate_functions(funcs, grids, sigma)
    bad = [str(funcs[i]) for i in range(len(funcs)) if not np.all(np.isfinite(values[i]))]
    if bad:  # e.g. log(u) where u <= 0: such candidates cannot be integrated; say so
        library = [t for t in library if np.all(np.isfinite(values[index[t.F]]))]
        log.warning("dropped candidate terms with non-finite values on the data: %s", bad)
    G = assembler.integrate(
        values[[index[t.F] for t in library]], [t.orders(names) for t in library]
    ).numpy()
    equations = []
    info = []
    keep_set = set(constraints.keep) if constraints is not None else set()
    position = {t: i for i, t in enumerate(library)}
    designs = {}
    for lhs in lhs_terms:
        lib = [t for t in libraries[lhs] if t in position]
        b = assembler.integrate(values[[index[lhs.F]]], [lhs.orders(names)]).numpy()[:, 0]
        designs[lhs] = (lib, G[:, [position[t] for t in lib]], b)

    def fit_fn(Ge, b, lib):
        keep_idx = [i for i, t in enumerate(lib) if t in keep_set]
        if settings.threshold is not None:
            return stlsq(Ge, b, settings.threshold, keep=keep_idx)
        return mstls(
            Ge,
            b,
            keep=keep_idx,
            criterion=settings.criterion,
            complexity=term_complexity(lib, settings.complexity),
        )

    fits = fit_equations(designs, ties, fit_fn)
    for lhs in lhs_terms:
        rhs, fit = fits[lhs]
        equations.append(Equation(lhs, rhs))
        info.append(
            {
                "lhs": lhs.short(),
                "residual": fit.residual,
                "threshold": fit.threshold,
                "method": fit.method,
                "library_size": len(designs[lhs][0]),
            }
        )
    summary = {
        "seconds": time.perf_counter() - start,
        "library": [t.short() for t in library],
        "n_tests": len(tests),
        "test_function": repr(tests.bump),
        "radii": {
            n: [float(tests.radii[:, i].min()), float(tests.radii[:, i].max())]
            for i, n in enumerate(names)
        },
        "fits": info,
        "rules": [r.as_dict() for r in reports],
        "non_finite_functions": bad,
        "noise_estimate": sigma,
    }
    return equations, summary

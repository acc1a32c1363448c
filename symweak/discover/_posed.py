"""Is the returned equation well posed over the values the data hold?

A term of even order 2m along a spatial axis, c·∂^{2m}F(u), acts on a short wave of u like
(−1)^m c F'(u) k^{2m}: the highest such order decides whether short waves decay (a well-posed
evolution equation) or grow without bound (backward diffusion, u_t = −0.5 u_xx; a positive
u_xxxx). A nonlinear diffusion is judged at each observed value of u: u_t = −44.2 u_xx +
4.6e4 d_xx(u²) has D(u) = −44.2 + 9.2e4 u, negative where u < 4.8e-4. Such an equation is no
model of data that exist (it cannot be integrated forward), so where it comes back the
terms that make it so are rarely determined by the data; :func:`ill_posed` says it in words
for ``Discovery.warnings``. Judged for equations u_t = … or u_tt = … of a field u (a wave
equation with a negative c² has no real wave speed), along each spatial axis
whose highest even-order terms are pure derivatives of functions of u alone (cross-diffusion,
mixed derivatives of that order and terms with time derivatives are not judged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import sympy

__all__ = [
    "NOISE_MARGIN",
    "QUANTILES",
    "ill_posed",
    "ill_test",
    "observed_values",
    "replaced",
    "replaced_said",
    "well_posed_instead",
]

#: the observed values of each field are kept as this many quantiles (0 %, 1 %, …, 100 %)
QUANTILES = 101
#: a value counts as ill-posed only where the sign stays wrong this many noise standard
#: deviations either side of it: noise around u = 0 puts a porous medium's 0.5 d_xx(u²)
#: (D = u) in backward diffusion at the negative readings, which the data do not show
NOISE_MARGIN = 3.0


def observed_values(obs, history=None, noise=None) -> dict[str, dict]:
    """``{field: {"quantiles": its finite values' quantiles 0 %, 1 %, …, 100 %, "noise": the
    run's noise estimate in the field's units (0 where there is none)}}`` (real fields); the
    noise from ``history`` (the warm-up's noise / std, or the full grid's estimate) or
    ``noise`` (``{field: standard deviation}``)."""
    warm = getattr(history.phases.get("warmup"), "noise", None) or {} if history else {}
    grid = (getattr(history.grid, "noise_estimate", None) if history else noise) or {}
    out = {}
    for name in obs.field_names:
        values = np.asarray(obs.fields[name])
        if np.iscomplexobj(values):
            continue
        values = values[np.isfinite(values)]
        if not values.size:
            continue
        if name in warm:  # noise / std
            noise = float(warm[name]) * float(np.std(values))
        else:
            noise = float(grid.get(name, 0.0) or 0.0)
        out[name] = {
            "quantiles": np.quantile(values, np.linspace(0.0, 1.0, QUANTILES)).tolist(),
            "noise": noise if math.isfinite(noise) else 0.0,
        }
    return out


def observed_once(problem, history) -> dict[str, dict]:
    """:func:`observed_values` of ``problem``'s data, read once per run: kept on
    ``history`` (its ``observed``) and taken from there after (empty without data)."""
    observed = getattr(history, "observed", None)
    obs = getattr(problem, "obs", None)
    if not observed and obs is not None:
        observed = observed_values(obs, history)
        if history is not None:
            history.observed = observed
    return observed or {}


def _axes(rhs, time, order: int = 1) -> dict:
    """``{axis: [(order, term, coefficient), ...]}`` of the pure spatial derivatives of even
    order, and None for an axis a mixed derivative reaches (or the whole mapping empty where a
    term holds a time derivative other than a lower one beside a left-hand side of
    ``order`` 2: u_tt = u_xx − 0.3 u_t)."""
    pure: dict = {}
    mixed: dict = {}
    for term, c in rhs.items():
        orders = dict(term.alpha)
        if time in orders:
            if len(orders) == 1 and orders[time] < order:
                continue
            return {}
        if len(orders) == 1:
            [(axis, n)] = orders.items()
            if n % 2 == 0 and float(c) != 0.0:
                pure.setdefault(axis, []).append((n, term, float(c)))
        elif len(orders) > 1:
            total = sum(orders.values())
            for axis in orders:
                mixed[axis] = max(mixed.get(axis, 0), total)
    return {a: (v if max(n for n, _, _ in v) > mixed.get(a, 0) else None) for a, v in pure.items()}


def _growth(terms, field):
    """(D(u) as SymPy in the symbol of ``field``, the order M) for the terms of the highest
    even order M, or None where one of them is not a function of ``field`` alone."""
    top = max(n for n, _, _ in terms)
    u = sympy.Symbol(str(field.func))
    D = sympy.Integer(0)
    for n, term, c in terms:
        if n != top:
            continue
        if set(term.fields) != {field} or term.F.atoms(sympy.Derivative):
            return None
        D += c * sympy.diff(term.F.subs(field, u), u)
    return sympy.expand(D), top, u


def _where(values: np.ndarray, bad: np.ndarray, grow: np.ndarray, name: str) -> str:
    """Where the sign is wrong: a tail ``u < X`` / ``u > X`` (X where the growth changes sign,
    by linear interpolation between the quantiles) or everywhere, with the share of the
    observed values that are wrong beyond the noise (``bad``)."""
    share = f"about {100 * bad.mean():.0f} % of the observed values, beyond the noise"
    wrong = grow > 0
    if wrong.all():
        return "at every observed value"
    edges = np.flatnonzero(np.diff(wrong.astype(int)))
    if len(edges) == 1:
        i = int(edges[0])
        g0, g1 = grow[i], grow[i + 1]
        x = values[i] + (values[i + 1] - values[i]) * g0 / (g0 - g1) if g0 != g1 else values[i]
        side = "<" if wrong[0] else ">"
        return f"where {name} {side} {_num(x)} ({share})"
    return f"for {share}"


def _num(x: float) -> str:
    """Three significant digits (two in powers of ten: 9.2e4, 0.00048 → 4.8e-4)."""
    text = f"{x:.1e}" if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e4) else f"{x:.3g}"
    return text.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def _reason(equation, observed: Mapping[str, Mapping] | None) -> str | None:
    """What makes an equation u_t = … or u_tt = … ill-posed: its highest even-order terms along
    an axis make short waves grow at observed values of u (``observed``:
    :func:`observed_values`; a value counts where the sign stays wrong ``NOISE_MARGIN`` noise
    deviations either side of it), else None. The first such axis."""
    lhs = equation.lhs
    if not observed or len(lhs.alpha) != 1 or lhs.alpha[0][1] > 2 or len(lhs.fields) != 1:
        return None
    order = lhs.alpha[0][1]
    field = lhs.fields[0]
    if field != lhs.F or str(field.func) not in observed:
        return None
    record = observed[str(field.func)]
    values = np.asarray(record["quantiles"], dtype=float)
    margin = NOISE_MARGIN * float(record.get("noise", 0.0))
    for axis, terms in _axes(equation.rhs, lhs.alpha[0][0], order).items():
        found = _growth(terms, field) if terms else None
        if found is None:
            continue
        D, M, u = found
        f = sympy.lambdify(u, D, "numpy")

        def growth(at, f=f, M=M):
            return (-1) ** (M // 2) * np.broadcast_to(np.asarray(f(at), dtype=float), at.shape)

        grow = growth(values)
        bad = (grow > 0) & (growth(values - margin) > 0) & (growth(values + margin) > 0)
        if not bad.any() or not np.all(np.isfinite(grow)):
            continue
        name = str(u)
        if M == 2 and order == 1:
            what = f"its diffusion along {axis}, D({name}) = {_expr(D)}, is negative"
        elif M == 2:
            what = f"its wave term along {axis}, c²({name}) = {_expr(D)}, is negative"
        else:
            what = (
                f"its order-{M} term along {axis}, D({name}) ∂{axis}^{M} with D({name}) = "
                f"{_expr(D)}, has the sign that amplifies short waves"
            )
        return f"{what} {_where(values, bad, grow, name)}"
    return None


def ill_posed(equation, observed: Mapping[str, Mapping] | None) -> str | None:
    """The warning for an ill-posed equation (:func:`_reason`), else None."""
    why = _reason(equation, observed)
    if why is None:
        return None
    return (
        f"{equation.lhs.short()}: the equation is ill-posed: {why}, so short waves grow "
        "without bound there and it cannot be integrated forward. The data rarely determine "
        "the terms that do this; read res.verdicts and res.alternatives before using it."
    )


def _expr(D) -> str:
    """D(u) with coefficients to three significant digits, the constant first."""
    if D.is_number:
        return _num(float(D))
    parts = []
    for term in sympy.Add.make_args(D):
        c, rest = term.as_coeff_Mul()
        size = _num(abs(float(c)))
        if rest == 1:
            body = size
        else:
            body = str(rest) if math.isclose(abs(float(c)), 1.0) else f"{size}*{rest}"
        parts.append((rest != 1, "-" if float(c) < 0 else "+", body))
    parts.sort(key=lambda p: p[0])
    _, sign, first = parts[0]
    return ("-" if sign == "-" else "") + first + "".join(f" {s} {b}" for _, s, b in parts[1:])


def well_posed_instead(equation, observed, alternatives) -> str:
    """For an ill-posed ``equation``: a sentence naming the closest of ``alternatives``
    (:class:`~._readings.Alternative`, closest first: the equations the data cannot tell
    apart from it) that is not ill-posed, else "" (where one is within reach of the best,
    the run returns it instead: :func:`.network._functions.preferred_support`)."""
    for alt in alternatives or ():
        other = alt.equation
        if other.rhs != equation.rhs and ill_posed(other, observed) is None:
            return (
                " Of the equations these data cannot tell apart from it, "
                f"{other.short(4)} is not ill-posed (res.alternatives)."
            )
    return ""


def ill_test(lhs, lib, observed):
    """``coef -> bool``: whether coefficients over the terms ``lib`` make ``lhs = …`` an
    ill-posed equation at the ``observed`` values (:func:`ill_posed`), for the choice among
    the equations the data cannot tell apart (:func:`.network._functions.preferred_support`);
    None without observed values."""
    from ..ir import Equation

    if not observed:
        return None

    def ill(coef) -> bool:
        rhs = {lib[j]: float(coef[j]) for j in np.flatnonzero(coef) if j < len(lib)}
        return bool(rhs) and ill_posed(Equation(lhs, rhs), observed) is not None

    return ill


def replaced(lhs, old: dict, observed) -> dict:
    """The record of an ill-posed equation ``lhs = old`` (``{term: coefficient}``) that was
    replaced by a well-posed one the data cannot tell apart from it (``History.posed``)."""
    from ..ir import Equation

    eq = Equation(lhs, old)
    return {"replaced": eq.short(4), "why": _reason(eq, observed) or ""}


def replaced_said(lhs: str, record: Mapping) -> str:
    """The warning for an equation returned in place of an ill-posed one (:func:`replaced`)."""
    return (
        f"{lhs}: the selection's equation, {record['replaced']}, is ill-posed ({record['why']}); "
        "the equation returned is the best-scoring of those these data cannot tell apart from "
        "it that is well posed."
    )

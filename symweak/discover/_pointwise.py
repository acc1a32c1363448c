"""An equation that couples no neighbouring points (u_t = f(u, v, ...)) checked against the
data themselves, without the surrogate: where the data follow each observed place through
time (point columns, lattices, grids), the left-hand side's time derivative is read from
each place's own time series (local quadratics over ``WINDOW`` times) and compared with the
right-hand side evaluated on the same smoothed values. The weak form sees the data only
through the surrogate; when the surrogate cannot follow the field between the observed
places (a pattern whose wavelength is about three column spacings), the selection may keep
a few reaction terms the surrogate's field supports and call them determined, while the
data's own time series contradict them. Then the data determine none of its terms.
"""

from __future__ import annotations

import numpy as np
import sympy

from ..ir import Term, fields_in

__all__ = ["check_pointwise", "contradicted", "said", "time_series_check"]

#: observations per local quadratic along a place's time series (odd)
WINDOW = 7
#: places followed at most (every k-th beyond it)
MAX_PLACES = 2_000
#: the equation is contradicted when it leaves more than this part of the time derivative
#: unexplained and more than twice what the reading's error accounts for (its noise and its
#: disagreement with a 5-time reading)
CONTRADICTED = 0.3
#: ... or when it leaves more unexplained than u_t = 0 does, by this factor: the reading's
#: noise adds as much to both (the slope of a symmetric local quadratic is independent of
#: its value), so an equation worse than none is contradicted at any noise
WORSE_THAN_NONE = 1.1


def _couples(term) -> bool:
    return bool(term.order) or term.F.has(sympy.Derivative)


def _places(obs, time: str) -> list[np.ndarray]:
    """Indices of the observations at each place observed at ``WINDOW`` or more distinct
    times, sorted by time (at most ``MAX_PLACES`` places, evenly taken)."""
    others = [n for n in obs.coord_names if n != time]
    if not others or time not in obs.coord_names:
        return []
    X = np.stack([np.asarray(obs.coords[n], dtype=np.float64) for n in others], axis=1)
    _, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    t = np.asarray(obs.coords[time], dtype=np.float64)
    places = []
    for idx in np.split(order, bounds):
        idx = idx[np.argsort(t[idx], kind="stable")]
        if len(idx) >= WINDOW and np.all(np.diff(t[idx]) > 0):
            places.append(idx)
    if len(places) > MAX_PLACES:
        places = places[:: int(np.ceil(len(places) / MAX_PLACES))]
    return places


def _quadratics(t: np.ndarray, centres: np.ndarray, h: int):
    """The local quadratics' design (m, 2h + 1, 3), pseudo-inverse and rows."""
    idx = centres[:, None] + np.arange(-h, h + 1)[None, :]
    dt = t[idx] - t[centres][:, None]
    A = np.stack([np.ones_like(dt), dt, dt * dt], axis=-1)
    return A, np.linalg.pinv(A), idx


def _local_fits(t: np.ndarray, values: dict) -> tuple[dict, dict, np.ndarray, dict, dict]:
    """Per window centre: each field's smoothed value and time derivative, the squared
    norm of the derivative's weights (its noise variance per unit noise variance), each
    field's summed squared misfit of the local quadratics, and each field's derivative
    from the narrower window of ``WINDOW - 2`` times (the two disagree where the series
    is too sparse in time for a quadratic: a reading error no misfit shows)."""
    h = WINDOW // 2
    centres = np.arange(h, len(t) - h)
    A, P, idx = _quadratics(t, centres, h)
    _, P2, idx2 = _quadratics(t, centres, h - 1)
    smooth, slope, misfit, narrow = {}, {}, {}, {}
    for name, u in values.items():
        c = np.einsum("mkw,mw->mk", P, u[idx])
        smooth[name], slope[name] = c[:, 0], c[:, 1]
        misfit[name] = float(np.sum((u[idx] - np.einsum("mwk,mk->mw", A, c)) ** 2))
        narrow[name] = np.einsum("mw,mw->m", P2[:, 1, :], u[idx2])
    return smooth, slope, np.sum(P[:, 1, :] ** 2, axis=1), misfit, narrow


def time_series_check(obs, lhs, rhs, coupled=None) -> dict | None:
    """``{"places", "unexplained", "noise"}`` of the equation ``lhs = Σ c·F`` (``rhs``:
    ``{term: coefficient}``) on the data's own time series: the part of the time
    derivative it leaves unexplained, and the part the reading's error accounts for (the
    noise through the local quadratics' misfit, plus the disagreement with a narrower
    window's reading; both relative to the derivative's norm). Terms that couple points
    are read from ``coupled(terms, coords)`` (``{term: values}`` at ``coords``, ``{name:
    array}``: a surrogate's derivatives) at the windows' centres, and the reading's error
    then holds its error on that field too (:func:`_truncation`). None where it cannot be
    read (a term that couples points and no ``coupled``, no place followed through time, a
    field not observed)."""
    if len(lhs.order) != 1 or (coupled is None and any(_couples(term) for term in rhs)):
        return None
    ((axis, n),) = lhs.order.items()
    field = lhs.F
    if n != 1 or not fields_in(field) or field.func.__name__ not in obs.fields:
        return None
    local = [term for term in rhs if not _couples(term)]
    names = {f: f.func.__name__ for term in local for f in fields_in(term.F)}
    if any(name not in obs.fields for name in names.values()):
        return None
    places = _places(obs, str(axis))
    if not places:
        return None
    symbols = {f: sympy.Symbol(f"_{name}") for f, name in names.items()}
    parts = [
        (
            float(rhs[term]),
            sympy.lambdify(list(symbols.values()), term.F.xreplace(symbols), "numpy"),
        )
        for term in local
    ]
    strong = _strong(obs, places, rhs, coupled)
    lhs_name = field.func.__name__
    wanted = {lhs_name, *names.values()}
    t_all = np.asarray(obs.coords[str(axis)], dtype=np.float64)
    res2 = norm2 = noise2 = misfit = spread2 = 0.0
    count = 0
    for k, idx in enumerate(places):
        values = {name: np.asarray(obs.fields[name], dtype=np.float64)[idx] for name in wanted}
        smooth, slope, weight, miss, narrow = _local_fits(t_all[idx], values)
        spread2 += float(np.sum((slope[lhs_name] - narrow[lhs_name]) ** 2))
        args = [smooth[name] for name in names.values()]
        fitted = sum(c * np.broadcast_to(f(*args), slope[lhs_name].shape) for c, f in parts)
        r = slope[lhs_name] - fitted - strong[k]
        res2 += float(r @ r)
        norm2 += float(slope[lhs_name] @ slope[lhs_name])
        noise2 += float(weight.sum())
        misfit += miss[lhs_name]
        count += len(weight)
    if norm2 <= 0 or count == 0:
        return None
    variance = misfit / max(count * (WINDOW - 3), 1)  # the local fits' misfit per point
    truncation2, apart2 = _truncation(obs, places, lhs, coupled, t_all)
    found = {
        "places": len(places),
        "unexplained": float(np.sqrt(res2 / norm2)),
        "noise": float(np.sqrt((variance * noise2 + spread2 + truncation2) / norm2)),
    }
    if coupled is not None:
        found["truncation"] = float(np.sqrt(truncation2 / norm2))
        points = sum(len(idx) for idx in places)
        found["follows"] = float(np.sqrt(apart2 / points / max(variance, 1e-300)))
    return found


def _truncation(obs, places: list, lhs, coupled, t_all: np.ndarray) -> tuple[float, float]:
    """The reading's own error on ``coupled``'s field (a surrogate's), summed squared over
    the windows' centres: its values at the places' times read as the data's are, against
    its own time derivative there. Few or uneven times per place read a fast field badly
    (FitzHugh–Nagumo's 13 times per place over 30 time units: the truth leaves 170 % of the
    reading unexplained), which neither the local fits' misfit nor the narrower window
    shows. With it, the field's squared misfit to the data at every place's times. (0, 0)
    without ``coupled``."""
    if coupled is None:
        return 0.0, 0.0
    field = Term(lhs.F)
    every = np.concatenate(places)
    series = coupled([field], _at(obs, every))[field]
    data = np.asarray(obs.fields[lhs.F.func.__name__], dtype=np.float64)[every]
    apart2 = float(np.sum((series - data) ** 2))
    series = np.split(series, np.cumsum([len(idx) for idx in places])[:-1])
    truth = coupled([lhs], _at(obs, np.concatenate(_centres(places))))[lhs]
    read = [_local_fits(t_all[idx], {"f": f})[1]["f"] for idx, f in zip(places, series)]
    return float(np.sum((np.concatenate(read) - truth) ** 2)), apart2


def _centres(places: list) -> list:
    """Per place, the observations at its windows' centres (:func:`_local_fits`)."""
    h = WINDOW // 2
    return [idx[h : len(idx) - h] for idx in places]


def _at(obs, where) -> dict:
    """The coordinates of the observations ``where``: ``{name: array}``."""
    return {n: np.asarray(obs.coords[n], dtype=np.float64)[where] for n in obs.coord_names}


def _strong(obs, places: list, rhs: dict, coupled) -> list:
    """Per place, the sum of ``rhs``'s terms that couple points at its windows' centres
    (read from ``coupled``; zeros without such terms)."""
    centres = _centres(places)
    terms = [term for term in rhs if _couples(term)]
    if not terms:
        return [np.zeros(len(c)) for c in centres]
    values = coupled(terms, _at(obs, np.concatenate(centres)))
    total = sum(float(rhs[term]) * np.asarray(values[term], dtype=np.float64) for term in terms)
    return np.split(total, np.cumsum([len(c) for c in centres])[:-1])


def contradicted(found: dict | None) -> bool:
    """Whether a :func:`time_series_check` reading contradicts its equation: it leaves more
    than ``CONTRADICTED`` of the time derivative unexplained and more than twice what the
    reading's error accounts for, or more than the equation u_t = 0 leaves (by
    ``WORSE_THAN_NONE``, plus twice the reading's truncation error where it was measured)
    whatever the noise (Swift–Hohenberg's −0.48 u at σ = 0.1 leaves 136 %, the reading's
    noise 120 %)."""
    if not found:
        return False
    # a reading biased by too few times (its truncation, where measured) is no reading of
    # noise: a right equation may leave more than none there
    worse = found["unexplained"] > WORSE_THAN_NONE + 2 * found.get("truncation", 0.0)
    return worse or found["unexplained"] > max(CONTRADICTED, 2 * found["noise"])


def said(lhs: str, found: dict, units: str | None = None) -> str:
    """The warning for a contradicted equation; ``units``: the clause naming lopsided units
    (:func:`._units.lopsided`), where they are."""
    return (
        f"{lhs}: the equation couples no neighbouring points, and at the {found['places']} "
        f"places the data follow through time it leaves {100 * found['unexplained']:.0f} % of "
        f"{lhs} unexplained (the reading's own error accounts for {100 * found['noise']:.0f} "
        "%): the data need terms this run did not resolve (the surrogate may not follow the "
        f"field between those places{', ' + units if units else ''}), so they determine none "
        "of its terms."
    )


def check_pointwise(obs, equations, fits) -> None:
    """For each equation that couples no points, record :func:`time_series_check` on its
    fit record (``record.time_series``); when the data contradict it (more than
    :data:`CONTRADICTED` of the time derivative unexplained and more than twice the part
    the reading's error accounts for: :func:`contradicted`), every term it was judged on
    becomes uncertain: the data determine none."""
    by_lhs = {fit.lhs: fit for fit in fits}
    for eq in equations:
        record = by_lhs.get(eq.lhs.short())
        if record is None:
            continue
        found = time_series_check(obs, eq.lhs, eq.coefficients)
        if found is None:
            continue
        record.time_series = found
        if contradicted(found):
            terms = [*record.verdicts, *(t for t in record.excluded if t not in record.verdicts)]
            record.verdicts = {t: "uncertain" for t in terms}
            record.excluded = {}

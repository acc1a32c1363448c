"""How noisy are the observations? A model-free estimate from each point's neighbours.

Developer notes: for each point, a quadratic in the coordinates is fitted by least squares to
its ``k`` nearest neighbours (coordinates scaled to [-1, 1], the point itself left out) and
evaluated at the point; the leave-one-out residuals of a smooth field are then mostly noise.
Their robust scale (median of r², divided by the median of χ²₁ = 0.4549, square-rooted),
relative to the field's standard deviation, is the estimate. It reads high where the field
varies on scales finer than the neighbourhood, which is why it only separates "clean" from
"noisy" and is not a noise measurement to quote: on the paper's rows (sampled as the paper
does) it gives ≤ 0.03 on every clean row (2-D wave at 5 %: 0.027; the 1-D rows ≤ 0.0004) and
0.12–0.47 on every noisy one (σ = 0.1 and 0.2).

A round neighbourhood misreads a field that varies much faster along one axis than along
the others (ten wavelengths in x over a slow transient in t) as noise, so the fit is also
made with each axis in turn stretched by ``STRETCHES`` (the neighbourhood shrinks along it)
and the estimate is the lowest of these readings: noise reads the same in every shape,
a misfit does not. Clean Swift–Hohenberg at 10 % of its grid read 0.156 round (noisy, so
the surrogate got a quarter of the Gaussians) and 0.020 with x stretched four times; every
other zoo case moves by at most 0.012 at σ ≥ 0.05.
"""

from __future__ import annotations

import numpy as np

__all__ = ["axis_lengths", "estimate_noise", "neighbour_correlation", "noise_readings"]

#: factors each coordinate axis is stretched by, one axis at a time, besides the round
#: neighbourhood (see the module notes)
STRETCHES = (2.0, 4.0)


def _design(offsets: np.ndarray) -> np.ndarray:
    """[1, d_a, d_a d_b (a ≤ b)] for offsets (n, k, D) -> (n, k, m)."""
    n, k, D = offsets.shape
    cols = [np.ones((n, k))] + [offsets[..., a] for a in range(D)]
    cols += [offsets[..., a] * offsets[..., b] for a in range(D) for b in range(a, D)]
    return np.stack(cols, axis=-1)


def estimate_noise(
    obs, k: int | None = None, max_points: int = 20_000, seed: int = 0, stretches=STRETCHES
) -> dict:
    """``{field: noise / std}`` estimated from the data alone (see the module notes).

    ``k`` neighbours (default: three times the quadratic's coefficients); at most
    ``max_points`` points are evaluated (a seeded subset; their neighbours come from all
    points). Fields that are constant give 0. ``stretches``: the factors each axis is
    stretched by in turn (``()``: the round neighbourhood only).

    Observations with replicates (points that share coordinates) give the replicates'
    pooled spread instead (``obs.replicate_noise()``): a measurement of the noise, where
    the neighbour fit is only an estimate."""
    return noise_readings(obs, k, max_points, seed, stretches)[0]


def noise_readings(
    obs, k: int | None = None, max_points: int = 20_000, seed: int = 0, stretches=STRETCHES
) -> tuple[dict, dict]:
    """``(lowest, round)``: :func:`estimate_noise` and the round neighbourhood's reading of
    each field alone (as the estimate where replicates measure the noise, or one axis)."""
    reps = getattr(obs, "replicate_noise", None)
    measured = reps() if reps is not None else {}
    if measured and all(v == v for v in measured.values()):
        return measured, dict(measured)
    names = obs.coord_names
    X = np.stack([np.asarray(obs.coords[n], dtype=np.float64) for n in names], axis=1)
    D = X.shape[1]
    m = 1 + D + D * (D + 1) // 2
    k = k or 3 * m
    n = X.shape[0]
    if n <= k + 1:
        nan = {f: float("nan") for f in obs.field_names}
        return nan, dict(nan)
    lo, hi = X.min(0), X.max(0)
    Z = 2.0 * (X - lo) / np.where(hi > lo, hi - lo, 1.0) - 1.0
    at = np.arange(n)
    if n > max_points:
        at = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
    fields = {}
    for f in obs.field_names:
        u = np.asarray(obs.fields[f], dtype=np.float64)
        scale = float(np.std(u))
        fields[f] = (u - u.mean()) / scale if scale > 0 else None
    shapes = [np.ones(D)]
    if D > 1:
        for axis in range(D):
            for factor in stretches:
                shapes.append(np.where(np.arange(D) == axis, factor, 1.0))
    readings: dict = {f: [] for f, u in fields.items() if u is not None}
    for shape in shapes:
        for f, value in _readings(Z * shape, at, k, fields).items():
            readings[f].append(value)
    # the lowest reading (NaN stays NaN); a constant field reads 0
    lowest = {f: float(np.min(readings[f])) if f in readings else 0.0 for f in fields}
    round_ = {f: float(readings[f][0]) if f in readings else 0.0 for f in fields}
    return lowest, round_


def _local_fits(Z: np.ndarray, at: np.ndarray, k: int, fields: dict) -> dict:
    """``{field: coefficients (p, m)}`` of the quadratic fitted to each point of ``at``'s
    ``k`` nearest neighbours in the coordinates ``Z`` (the point itself left out), for
    each standardised field (None: constant, skipped)."""
    from scipy.spatial import cKDTree

    m = 1 + Z.shape[1] + Z.shape[1] * (Z.shape[1] + 1) // 2
    _, nb = cKDTree(Z).query(Z[at], k + 1)
    nb = nb[:, 1:]  # leave the point itself out
    A = _design(Z[nb] - Z[at][:, None, :])  # (p, k, m)
    AtA = np.einsum("pki,pkj->pij", A, A) + 1e-12 * np.eye(m)
    out = {}
    for f, u in fields.items():
        if u is None:
            continue
        rhs = np.einsum("pki,pk->pi", A, u[nb])
        try:
            out[f] = np.linalg.solve(AtA, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:
            out[f] = np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(A, u[nb])])
    return out


def _readings(Z: np.ndarray, at: np.ndarray, k: int, fields: dict) -> dict:
    """The estimate of each standardised field (None: constant, skipped) with the
    neighbourhoods of the points ``at`` taken in the coordinates ``Z``."""
    out = {}
    for f, coef in _local_fits(Z, at, k, fields).items():
        r = fields[f][at] - coef[:, 0]
        out[f] = float(np.sqrt(np.median(r * r) / 0.4549))
    return out


def axis_lengths(obs, k: int | None = None, max_points: int = 20_000, seed: int = 0) -> np.ndarray:
    """The field's length scale along each coordinate axis relative to the others (geometric
    mean 1), on coordinates scaled to [-1, 1]: the inverse of the RMS gradient along the
    axis of local quadratics fitted to each point's ``k`` nearest neighbours (standardised
    fields pooled), the neighbourhood shaped as the one of :data:`STRETCHES` whose fits
    miss the points least (as :func:`estimate_noise` picks it). Ones where it cannot be
    read (one axis, too few points, a constant field)."""
    names = obs.coord_names
    X = np.stack([np.asarray(obs.coords[n], dtype=np.float64) for n in names], axis=1)
    n, D = X.shape
    m = 1 + D + D * (D + 1) // 2
    k = k or 3 * m
    if D < 2 or n <= k + 1:
        return np.ones(D)
    lo, hi = X.min(0), X.max(0)
    Z = 2.0 * (X - lo) / np.where(hi > lo, hi - lo, 1.0) - 1.0
    at = np.arange(n)
    if n > max_points:
        at = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
    fields = []
    for f in obs.field_names:
        u = np.asarray(obs.fields[f], dtype=np.float64)
        if np.std(u) > 0:
            fields.append((u - u.mean()) / np.std(u))
    if not fields:
        return np.ones(D)
    best = None
    shapes = [np.ones(D)] + [
        np.where(np.arange(D) == axis, factor, 1.0) for axis in range(D) for factor in STRETCHES
    ]
    for shape in shapes:
        miss, grad = _gradients(Z * shape, at, k, fields)
        grad = grad * shape  # d/dz of the unstretched coordinates
        if best is None or miss < best[0]:
            best = (miss, grad)
    g = best[1]
    if not np.all(np.isfinite(g)) or np.any(g <= 0):
        return np.ones(D)
    length = 1.0 / g
    return length / np.exp(np.mean(np.log(length)))


def _gradients(Z: np.ndarray, at: np.ndarray, k: int, fields: list) -> tuple[float, np.ndarray]:
    """(the fits' median squared miss, pooled over the fields; the RMS gradient along each
    axis of ``Z``) of local quadratics on each point's ``k`` nearest neighbours."""
    D = Z.shape[1]
    misses, grads = [], []
    for i, coef in _local_fits(Z, at, k, dict(enumerate(fields))).items():
        misses.append(np.median((fields[i][at] - coef[:, 0]) ** 2))
        grads.append(np.mean(coef[:, 1 : 1 + D] ** 2, axis=0))
    return float(np.mean(misses)), np.sqrt(np.mean(grads, axis=0))


def neighbour_correlation(
    points: np.ndarray, residuals: np.ndarray, max_points: int = 20_000, seed: int = 0
) -> float:
    """How much a fit's residuals at neighbouring points agree: Σ r_i r_j / Σ r_i² over each
    point i and its nearest neighbour j (``points`` (n, D) in coordinates scaled alike,
    ``residuals`` (n,) or (n, fields), each column centred; pooled), in [-1, 1]. Noise
    gives about 0, a smooth misfit (a surrogate's bias on clean data) near 1. At most
    ``max_points`` seeded points are read, their neighbours taken from all points; 0 with
    fewer than 3 points or residuals all 0."""
    from scipy.spatial import cKDTree

    Z = np.asarray(points, dtype=np.float64)
    r = np.asarray(residuals, dtype=np.float64).reshape(len(Z), -1)
    if len(Z) < 3:
        return 0.0
    r = r - r.mean(axis=0)
    at = np.arange(len(Z))
    if len(Z) > max_points:
        at = np.sort(np.random.default_rng(seed).choice(len(Z), size=max_points, replace=False))
    near = cKDTree(Z).query(Z[at], 2)[1]
    nb = np.where(near[:, 0] == at, near[:, 1], near[:, 0])  # a replicate may come first
    total = float(np.sum(r[at] * r[at]))
    return float(np.sum(r[at] * r[nb]) / total) if total > 0 else 0.0

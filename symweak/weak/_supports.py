"""Where test functions sit: centres and radii (paper section 4.2), a lattice, or a scale
chosen from the data's spectrum (as WSINDy does, per axis)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._errors import SymweakError
from ._testfunctions import Bump, make_bump

__all__ = ["TestFunctionSet", "corner_wavenumber"]

Bounds = Mapping[str, tuple[float, float]]

#: the paper's radius η·L_min is the same on every axis, which presumes axes of comparable
#: length in their units (every benchmark row has L_max/L_min <= 6). An axis more than this
#: many times longer than the shortest gets η·L_i/ISOTROPY_ASPECT instead: with time in
#: hundredths of the unit (a heat equation on x in [0, 100), t in [0, 0.2)) η·L_min made the
#: x supports 0.04–0.08 wide on a 100-long axis, fewer than 3 quadrature points, and
#: discover stopped with an error.
ISOTROPY_ASPECT = 8.0

#: nodes per axis on which :meth:`TestFunctionSet.overlap` integrates products of bumps
#: (the smallest support of a zoo run spans > 40 of them; the overlaps move < 1e-10 at 4×)
OVERLAP_POINTS = 400


def isotropic_base(lengths: np.ndarray) -> np.ndarray:
    """Per axis, the length the paper's η multiplies: L_min, or L_i/ISOTROPY_ASPECT on an axis
    more than ISOTROPY_ASPECT times longer than the shortest."""
    lengths = np.asarray(lengths, dtype=float)
    return np.maximum(lengths.min(), lengths / ISOTROPY_ASPECT)


def _bounds(bounds: Bounds) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    names = tuple(bounds)
    lo = np.array([float(bounds[n][0]) for n in names])
    hi = np.array([float(bounds[n][1]) for n in names])
    if np.any(hi <= lo):
        bad = [n for n, a, b in zip(names, lo, hi) if b <= a]
        raise SymweakError(f"Domain has zero extent along {bad}.")
    return names, lo, hi


@dataclass(frozen=True)
class TestFunctionSet:
    """K tensor-product test functions Φ_k(t, X) = Π_i φ((x_i - c_{k,i}) / r_{k,i}).

    ``centers`` and ``radii`` have shape (K, D) in physical units, columns in ``names`` order
    (t first). Every support lies inside the domain.
    """

    __test__ = False  # not a pytest test class

    names: tuple[str, ...]
    centers: np.ndarray
    radii: np.ndarray
    bump: Bump
    how: str = ""

    def __post_init__(self) -> None:
        if self.centers.shape != self.radii.shape or self.centers.ndim != 2:
            raise SymweakError("centers and radii must both have shape (K, D).")
        if self.centers.shape[1] != len(self.names):
            raise SymweakError("centers need one column per coordinate.")
        if np.any(self.radii <= 0):
            raise SymweakError("Test-function radii must be positive.")

    def __len__(self) -> int:
        return self.centers.shape[0]

    def overlap(self, rows=None, points: int = OVERLAP_POINTS) -> np.ndarray:
        """The test functions' correlation ⟨Φ_i, Φ_j⟩/(‖Φ_i‖‖Φ_j‖): (K, K), or only
        ``rows`` of it (len(rows), K) so that many test functions can be taken a block at a
        time. 1 on the diagonal, 0 for disjoint supports, positive semi-definite. Two rows of
        a weak system integrate the same data where their supports overlap, so their errors
        correlate about this much (exactly for white noise in the data). A product over
        axes of each axis' Gram matrix, computed on ``points`` nodes spanning the supports."""
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=int)
        out = np.ones((rows.size, len(self)))
        for i in range(len(self.names)):
            c, r = self.centers[:, i], self.radii[:, i]
            x = np.linspace(float((c - r).min()), float((c + r).max()), points)
            phi = self.bump((x[None, :] - c[:, None]) / r[:, None])
            norm = np.sqrt(np.clip(np.einsum("kn,kn->k", phi, phi), 1e-300, None))
            out *= (phi[rows] @ phi.T) / np.outer(norm[rows], norm)
        return out

    # ------------------------------------------------------------------ constructors
    @classmethod
    def random(
        cls,
        bounds: Bounds,
        n: int = 1000,
        eta: tuple[float, float] = (0.2, 0.4),
        seed: int = 0,
        bump: Bump | str = "exp",
        scale: str = "paper",
        radius: Mapping[str, float] | None = None,
        spread: tuple[float, float] = (0.8, 1.25),
        floor: Mapping[str, float] | None = None,
    ) -> TestFunctionSet:
        """Random supports, seeded.

        ``scale="paper"``: r_k ~ U(η_min, η_max)·L_min, the same radius on every axis, and
        c_k ~ U(Ω_r) so the support stays inside the domain (the paper's rule); an axis
        more than :data:`ISOTROPY_ASPECT` times longer than the shortest gets
        r_k·L_i/(ISOTROPY_ASPECT·L_min) (:func:`isotropic_base`).
        ``scale="axis"``: r_{k,i} = η_k·L_i, one η_k per test function, scaled per axis.
        ``radius={...}`` (e.g. from :func:`TestFunctionSet.auto_radius`): r_{k,i} = ρ_k·radius_i
        with ρ_k ~ U(spread); with ``scale="cap"`` as well, the paper's radius capped per axis
        by ρ_k·radius_i. ``floor={...}``: no radius below floor_i on axis i (e.g. a few
        quadrature spacings, so that every support holds enough grid points).
        """
        names, lo, hi = _bounds(bounds)
        if not (isinstance(n, int) and n >= 1):
            raise SymweakError(f"Number of test functions must be a positive integer, got {n!r}.")
        emin, emax = eta
        if not 0.0 < emin <= emax < 0.5:
            raise SymweakError(f"eta = {eta} must satisfy 0 < eta_min <= eta_max < 0.5.")
        rng = np.random.default_rng(seed)
        lengths = hi - lo
        if radius is not None and scale == "cap":
            # the paper's radii, capped per axis by a data-driven radius
            base = np.array([float(radius[nm]) for nm in names])
            r = rng.uniform(emin, emax, size=n)[:, None] * isotropic_base(lengths)[None, :]
            rho = rng.uniform(spread[0], spread[1], size=(n, 1))
            radii = np.minimum(r, rho * base[None, :])
            radii = np.minimum(radii, 0.499 * lengths[None, :])
            how = "paper capped by spectrum"
        elif radius is not None:
            base = np.array([float(radius[nm]) for nm in names])
            rho = rng.uniform(spread[0], spread[1], size=(n, 1))
            radii = np.minimum(rho * base[None, :], 0.499 * lengths[None, :])
            how = "auto"
        elif scale == "paper":
            r = rng.uniform(emin, emax, size=n)
            radii = r[:, None] * isotropic_base(lengths)[None, :]
            how = "paper"
        elif scale == "axis":
            e = rng.uniform(emin, emax, size=(n, 1))
            radii = e * lengths[None, :]
            how = "axis"
        else:
            raise SymweakError(f"scale must be 'paper' or 'axis', got {scale!r}.")
        if floor is not None:
            low = np.array([float(floor.get(nm, 0.0)) for nm in names])
            if np.any(radii < low[None, :]):
                radii = np.minimum(np.maximum(radii, low[None, :]), 0.499 * lengths[None, :])
                how += ", floored"
        u = rng.uniform(0.0, 1.0, size=(n, len(names)))
        centers = lo + radii + u * (lengths - 2 * radii)
        return cls(names, centers, radii, make_bump(bump), how)

    @classmethod
    def lattice(
        cls,
        bounds: Bounds,
        radius: Mapping[str, float],
        overlap: float = 0.5,
        bump: Bump | str = "exp",
    ) -> TestFunctionSet:
        """A regular lattice of centres with one radius per axis; neighbours overlap by
        ``overlap`` of a support."""
        names, lo, hi = _bounds(bounds)
        grids = []
        radii = []
        for name, a, b in zip(names, lo, hi):
            r = float(radius[name])
            if not 0 < 2 * r <= b - a:
                raise SymweakError(f"Radius {r} along {name} does not fit in [{a}, {b}].")
            step = max(2 * r * (1.0 - overlap), 1e-12)
            count = int(np.floor((b - a - 2 * r) / step + 1e-9)) + 1
            first = a + r + 0.5 * ((b - a - 2 * r) - (count - 1) * step)
            grids.append(first + step * np.arange(count))
            radii.append(r)
        mesh = np.meshgrid(*grids, indexing="ij")
        centers = np.stack([m.ravel() for m in mesh], axis=1)
        radii_arr = np.tile(np.array(radii)[None, :], (centers.shape[0], 1))
        return cls(names, centers, radii_arr, make_bump(bump), "lattice")

    @staticmethod
    def auto_radius(
        axes: Mapping[str, np.ndarray],
        values: np.ndarray,
        bump: Bump | str = "exp",
        tau: float = 1e-3,
        min_points: int = 4,
        max_fraction: float = 0.4,
    ) -> dict[str, float]:
        """Per-axis radius from the data's spectrum (WSINDy's idea, for any grid).

        Along each axis, the corner wavenumber k_c separates signal from the noise floor
        (:func:`corner_wavenumber`); the radius is chosen so that the bump's Fourier transform
        has decayed to ``tau`` at k_c, so the test functions integrate the signal and filter
        the noise. Clipped to [min_points·h, max_fraction·L].
        """
        bump = make_bump(bump)
        kappa = bump.spectrum_cutoff(tau)
        out = {}
        for i, (name, axis) in enumerate(axes.items()):
            h = float(axis[1] - axis[0])
            length = float(axis[-1] - axis[0])
            kc = corner_wavenumber(np.moveaxis(values, i, -1), h)
            r = kappa / kc if kc > 0 else max_fraction * length
            out[name] = float(np.clip(r, min_points * h, max_fraction * length))
        return out


def corner_wavenumber(values: np.ndarray, spacing: float) -> float:
    """Wavenumber where the (averaged) spectrum along the last axis meets its noise floor.

    The log-spectrum's cumulative sum is fitted by two straight lines; the break point is
    the corner (WSINDy's changepoint rule). Returns 0 when the axis is too short.
    """
    n = values.shape[-1]
    if n < 8:
        return 0.0
    data = values.reshape(-1, n)
    data = data - data.mean(axis=1, keepdims=True)
    window = np.hanning(n)
    spec = np.mean(np.abs(np.fft.rfft(data * window, axis=1)), axis=0)
    k = 2 * np.pi * np.fft.rfftfreq(n, spacing)
    logs = np.log(spec[1:] + 1e-300)
    cum = np.cumsum(logs - logs.min())
    m = cum.size
    if m < 4:
        return 0.0
    idx = np.arange(m, dtype=float)
    best, best_j = np.inf, m - 1
    for j in range(2, m - 2):
        err = 0.0
        for seg in (slice(0, j + 1), slice(j, m)):
            xs, ys = idx[seg], cum[seg]
            A = np.stack([xs, np.ones_like(xs)], axis=1)
            coef, res, *_ = np.linalg.lstsq(A, ys, rcond=None)
            err += float(res[0]) if res.size else float(np.sum((A @ coef - ys) ** 2))
        if err < best:
            best, best_j = err, j
    return float(k[1:][best_j])

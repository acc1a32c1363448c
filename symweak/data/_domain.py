"""Where the equation holds in space: intervals (1-D), polygons with holes (2-D), a mask on
a grid, or the region the data cover.

Test functions of the weak form are placed only where their whole support (in space) lies
inside the domain (:meth:`Domain.box_inside`); the time axis is never restricted. A domain
knows nothing of torch or SymPy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._errors import DataError

__all__ = ["Domain"]

#: sample points per axis when checking that a support box lies inside a polygon
BOX_SAMPLES = 17


def _ring(vertices, what: str) -> np.ndarray:
    arr = np.asarray(vertices, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 3:
        raise DataError(
            f"{what} needs at least 3 vertices as an (n, 2) array of (x, y), got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{what} holds NaN or infinite vertices.")
    if np.allclose(arr[0], arr[-1]):
        arr = arr[:-1]
    x, y = arr[:, 0], arr[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    if not area > 0:
        raise DataError(f"{what} encloses no area (its vertices are on one line).")
    return arr


def _in_ring(px: np.ndarray, py: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Even–odd ray casting: which points lie inside the closed ring."""
    inside = np.zeros(px.shape, dtype=bool)
    xs, ys = ring[:, 0], ring[:, 1]
    for i in range(len(ring)):
        x1, y1, x2, y2 = xs[i - 1], ys[i - 1], xs[i], ys[i]
        crosses = (y1 > py) != (y2 > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = x1 + (py - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (px < at)
    return inside


@dataclass(frozen=True)
class Domain:
    """A region of space. Build one with :meth:`intervals`, :meth:`polygon`, :meth:`mask`
    or :meth:`covered`; ``names`` are its space coordinates (``("x",)``, ``("x", "y")``)."""

    kind: str
    names: tuple[str, ...]
    parts: tuple = ()
    holes: tuple = ()
    axes: dict = field(default_factory=dict)
    grid: np.ndarray | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def intervals(cls, spans: Sequence[tuple[float, float]], name: str = "x") -> Domain:
        """A union of intervals of one space coordinate: ``Domain.intervals([(0, 3), (5, 9)])``."""
        out = []
        for span in spans:
            try:
                a, b = (float(v) for v in span)
            except (TypeError, ValueError):
                raise DataError(
                    f"Each interval is a pair (start, end) of numbers, got {span!r}."
                ) from None
            if not (np.isfinite(a) and np.isfinite(b)) or not b > a:
                raise DataError(f"Interval ({a}, {b}) is empty or not finite; give start < end.")
            out.append((a, b))
        if not out:
            raise DataError("The domain is empty: give at least one interval.")
        return cls("intervals", (name,), parts=tuple(sorted(out)))

    @classmethod
    def polygon(cls, vertices, holes=(), names: tuple[str, str] = ("x", "y")) -> Domain:
        """A 2-D polygon (vertices in order, (n, 2)) less the polygons ``holes``."""
        outer = _ring(vertices, "The domain's polygon")
        inner = tuple(_ring(h, f"Hole {i}") for i, h in enumerate(holes))
        return cls("polygon", tuple(names), parts=(outer,), holes=inner)

    @classmethod
    def mask(cls, mask, **axes) -> Domain:
        """A boolean mask on a grid of space: ``Domain.mask(m, x=x, y=y)``, ``m.shape ==
        (len(x), len(y))``; True where the equation holds."""
        arr = np.asarray(mask)
        if arr.dtype != bool:
            raise DataError(f"A domain mask must be boolean (True inside), got dtype {arr.dtype}.")
        if not axes:
            raise DataError("Domain.mask needs the grid's axes, e.g. Domain.mask(m, x=x, y=y).")
        shape = tuple(len(np.asarray(a)) for a in axes.values())
        if arr.shape != shape:
            raise DataError(
                f"The mask has shape {arr.shape} but the axes {tuple(axes)} give {shape}."
            )
        clean = {}
        for name, a in axes.items():
            a = np.asarray(a, dtype=float)
            if a.ndim != 1 or a.size < 2 or not np.all(np.diff(a) > 0):
                raise DataError(f"Mask axis {name!r} must be a strictly increasing 1-D array.")
            clean[name] = a
        if not arr.any():
            raise DataError("The domain mask is all False: the domain is empty.")
        return cls("mask", tuple(axes), axes=clean, grid=arr.copy())

    @classmethod
    def covered(cls, obs, cells: int | None = None, min_points: int = 3) -> Domain:
        """The region the data cover: cells of a grid over space (``cells`` per axis; by
        default about one cell per 8 distinct space positions) holding at least
        ``min_points`` observations (all times together)."""
        names = tuple(n for n in obs.coord_names if n != "t")
        if not names:
            raise DataError("The observations have no space coordinate to take a domain of.")
        pts = np.stack([obs.coords[n] for n in names], axis=1)
        distinct = len(np.unique(pts, axis=0))
        if cells is None:
            cells = max(4, round((distinct / 8) ** (1.0 / len(names))))
        if not (isinstance(cells, int) and cells >= 2):
            raise DataError(f"cells must be an integer >= 2, got {cells!r}.")
        lo, hi = pts.min(0), pts.max(0)
        edges = [np.linspace(a, b, cells + 1) for a, b in zip(lo, hi)]
        counts, _ = np.histogramdd(pts, bins=edges)
        centres = {n: 0.5 * (e[1:] + e[:-1]) for n, e in zip(names, edges)}
        mask = counts >= min_points
        if not mask.any():
            raise DataError("No cell holds enough observations: use fewer cells.")
        dom = cls("mask", names, axes=centres, grid=mask)
        return dom

    # ------------------------------------------------------------------ files
    def to_json(self) -> str:
        """The domain as JSON text (saved with the observations by ``Observations.save``)."""
        import json

        out: dict = {"kind": self.kind, "names": list(self.names)}
        if self.kind == "intervals":
            out["intervals"] = [list(p) for p in self.parts]
        elif self.kind == "polygon":
            out["vertices"] = np.asarray(self.parts[0]).tolist()
            out["holes"] = [np.asarray(h).tolist() for h in self.holes]
        else:
            out["axes"] = {n: np.asarray(a).tolist() for n, a in self.axes.items()}
            out["mask"] = np.asarray(self.grid).astype(int).tolist()
        return json.dumps(out)

    @classmethod
    def from_json(cls, text: str, source: str = "the file") -> Domain:
        """The domain :meth:`to_json` wrote, rebuilt through the checking constructors."""
        import json

        try:
            d = json.loads(text)
            kind, names = d["kind"], tuple(d["names"])
            if kind == "intervals":
                return cls.intervals([tuple(p) for p in d["intervals"]], name=names[0])
            if kind == "polygon":
                return cls.polygon(d["vertices"], holes=d["holes"], names=names)
            if kind == "mask":
                return cls.mask(np.asarray(d["mask"], dtype=int).astype(bool), **d["axes"])
        except DataError as exc:
            raise DataError(f"{source}: the stored domain is not valid: {exc}") from None
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise DataError(
                f"{source}: the stored domain cannot be read ({type(exc).__name__}: {exc})."
            ) from None
        raise DataError(f"{source}: unknown domain kind {kind!r} (intervals, polygon, mask).")

    # ------------------------------------------------------------------ queries
    def contains(self, points: Mapping[str, np.ndarray]) -> np.ndarray:
        """Which points (``{name: array}``, the domain's space coordinates) lie inside."""
        missing = [n for n in self.names if n not in points]
        if missing:
            raise DataError(f"The domain is over {self.names}; points lack {missing}.")
        arrs = [np.asarray(points[n], dtype=float) for n in self.names]
        if self.kind == "intervals":
            (p,) = arrs
            return np.any([(p >= a) & (p <= b) for a, b in self.parts], axis=0)
        if self.kind == "polygon":
            px, py = arrs
            inside = _in_ring(px, py, self.parts[0])
            for h in self.holes:
                inside &= ~_in_ring(px, py, h)
            return inside
        idx = []
        ok = np.ones(arrs[0].shape, dtype=bool)
        for a, p in zip(self.axes.values(), arrs):
            half = 0.5 * (a[1] - a[0])
            i = np.clip(np.searchsorted(0.5 * (a[1:] + a[:-1]), p), 0, len(a) - 1)
            ok &= (p >= a[0] - half) & (p <= a[-1] + half)
            idx.append(i)
        return ok & self.grid[tuple(idx)]

    def box_inside(self, centers: np.ndarray, radii: np.ndarray) -> np.ndarray:
        """Which boxes ``[c − r, c + r]`` (each (K, d) in :attr:`names` order) lie wholly
        inside: exact for intervals; masks: every mask cell the box touches is inside; polygons:
        ``BOX_SAMPLES``ᵈ points of the box are inside and no vertex of the polygon or a hole
        lies in the box (so a hole smaller than the sample spacing is not missed)."""
        c = np.atleast_2d(np.asarray(centers, dtype=float))
        r = np.atleast_2d(np.asarray(radii, dtype=float))
        lo, hi = c - r, c + r
        if self.kind == "intervals":
            return np.any([(lo[:, 0] >= a) & (hi[:, 0] <= b) for a, b in self.parts], axis=0)
        if self.kind == "mask":
            return self._mask_boxes(lo, hi)
        s = np.linspace(0.0, 1.0, BOX_SAMPLES)
        gx = lo[:, :1] + s[None, :] * (hi[:, :1] - lo[:, :1])
        gy = lo[:, 1:2] + s[None, :] * (hi[:, 1:2] - lo[:, 1:2])
        px = np.repeat(gx, BOX_SAMPLES, axis=1)
        py = np.tile(gy, (1, BOX_SAMPLES))
        ok = self.contains({self.names[0]: px, self.names[1]: py}).all(axis=1)
        for ring in (*self.parts, *self.holes):
            vx, vy = ring[:, 0][None, :], ring[:, 1][None, :]
            hit = (vx > lo[:, :1]) & (vx < hi[:, :1]) & (vy > lo[:, 1:2]) & (vy < hi[:, 1:2])
            ok &= ~hit.any(axis=1)
        return ok

    def _mask_boxes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Every mask cell a box overlaps is True, by a summed-area table of the outside."""
        outside = (~self.grid).astype(np.int64)
        table = outside
        for axis in range(outside.ndim):
            table = np.cumsum(table, axis=axis)
        table = np.pad(table, [(1, 0)] * outside.ndim)
        starts, stops = [], []
        ok = np.ones(lo.shape[0], dtype=bool)
        for i, a in enumerate(self.axes.values()):
            half = 0.5 * (a[1] - a[0])
            ok &= (lo[:, i] >= a[0] - half) & (hi[:, i] <= a[-1] + half)
            mids = 0.5 * (a[1:] + a[:-1])
            starts.append(np.searchsorted(mids, lo[:, i], side="left"))
            stops.append(np.searchsorted(mids, hi[:, i], side="right") + 1)
        total = np.zeros(lo.shape[0], dtype=np.int64)
        d = len(starts)
        for corner in range(2**d):
            idx, sign = [], 1
            for i in range(d):
                if corner >> i & 1:
                    idx.append(starts[i])
                    sign = -sign
                else:
                    idx.append(stops[i])
            total += sign * table[tuple(idx)]
        return ok & (total == 0)

    def check_data(self, obs) -> int:
        """How many observations lie inside; raises if the domain does not fit the data."""
        space = tuple(n for n in obs.coord_names if n != "t")
        if set(self.names) != set(space):
            raise DataError(
                f"The domain is over {self.names} but the data's space coordinates are "
                f"{space}; build the domain over those."
            )
        inside = int(self.contains({n: obs.coords[n] for n in self.names}).sum())
        if inside == 0:
            raise DataError(
                "No observation lies inside the domain; check its coordinates (the domain "
                f"is over {self.names}) against the data's bounds {obs.bounds}."
            )
        return inside

    def describe(self) -> str:
        if self.kind == "intervals":
            spans = " ∪ ".join(f"[{a:g}, {b:g}]" for a, b in self.parts)
            return f"{self.names[0]} in {spans}"
        if self.kind == "polygon":
            return (
                f"polygon of {len(self.parts[0])} vertices in ({', '.join(self.names)}) with "
                f"{len(self.holes)} hole(s)"
            )
        shape = " × ".join(str(len(a)) for a in self.axes.values())
        frac = float(self.grid.mean())
        return f"mask on a {shape} grid of ({', '.join(self.names)}), {100 * frac:.3g}% inside"

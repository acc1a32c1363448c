"""Finding the rectilinear lattice that scattered points lie on.

Data as users keep them are point columns (``t, x, u`` from a CSV or an HDF5 table), even
when they come from a simulation grid. When every coordinate takes few distinct values and
every point sits on their product (in any order, with or without missing points), the
points are recorded on that lattice exactly as ``from_grid(...).sample(...)`` would record
them, so that the fast grid paths apply; a complete lattice is a full grid.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["LATTICE_RTOL", "find_lattice"]

#: coordinate values closer than this fraction of the axis span are the same lattice value
LATTICE_RTOL = 1e-9
#: each lattice value is hit by at least this many points on average (random scattered
#: points hit each of their values once)
MIN_HITS = 1.5
#: the points fill at least this fraction of the lattice
MIN_FILL = 0.005
#: the largest lattice recorded (the grid paths hold arrays of its size)
MAX_SIZE = 50_000_000


def _axis(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lattice values of one coordinate, each point's position among them): values within
    ``LATTICE_RTOL`` of the span of their sorted neighbour are one value (the smallest)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    tol = LATTICE_RTOL * float(ordered[-1] - ordered[0])
    new = np.empty(ordered.size, dtype=bool)
    new[0] = True
    new[1:] = np.diff(ordered) > tol
    position = np.empty(values.size, dtype=np.int64)
    position[order] = np.cumsum(new) - 1
    return ordered[new], position


def _fill_gaps(axis: np.ndarray, position: np.ndarray):
    """A uniform axis with whole steps missing (a sample that missed every point of some
    grid line) gets its missing values back, so that the lattice is the sampled grid; the
    values present are kept exactly. Non-uniform axes are left as they are."""
    steps = np.diff(axis)
    if steps.size < 2:
        return axis, position
    step = float(steps.min())
    counts = np.rint(steps / step)
    if not np.allclose(steps, counts * step, rtol=1e-6, atol=0.0) or counts.max() == 1:
        return axis, position
    slots = np.concatenate([[0], np.cumsum(counts).astype(np.int64)])
    full = axis[0] + step * np.arange(slots[-1] + 1)
    full[slots] = axis
    return full, slots[position]


def find_lattice(coords: Mapping[str, np.ndarray]):
    """``(axes, flat index of each point)`` when the points lie on a lattice (see the module
    notes), else None. The coordinate arrays are read, never changed or reordered."""
    names = list(coords)
    n = len(next(iter(coords.values())))
    if n < 4:
        return None
    axes, positions = {}, []
    for name in names:
        axis, position = _axis(np.asarray(coords[name], dtype=np.float64))
        if axis.size < 2 or n / axis.size < MIN_HITS:
            return None
        axis, position = _fill_gaps(axis, position)
        axes[name] = axis
        positions.append(position)
    shape = tuple(a.size for a in axes.values())
    size = int(np.prod(shape, dtype=np.int64))
    if size > MAX_SIZE or n / size < MIN_FILL:
        return None
    index = np.ravel_multi_index(tuple(positions), shape)
    if np.unique(index).size != n:  # two points on one lattice node: not a lattice sample
        return None
    return axes, index

"""A rectilinear grid's axes (:class:`Grid`) and the coordinate names' order and renaming,
shared by the observations and the loaders."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import DataError

__all__ = ["Grid"]


@dataclass(frozen=True)
class Grid:
    """A rectilinear grid: named, strictly increasing axes (t first)."""

    axes: dict[str, np.ndarray]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.axes)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.axes.values())

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def is_uniform(self, name: str, rtol: float = 1e-6) -> bool:
        d = np.diff(self.axes[name])
        return bool(np.allclose(d, d[0], rtol=rtol, atol=0.0))

    def spacing(self, name: str) -> float:
        a = self.axes[name]
        return float((a[-1] - a[0]) / (a.size - 1))

    def points(self) -> dict[str, np.ndarray]:
        mesh = np.meshgrid(*self.axes.values(), indexing="ij")
        return {n: m.ravel() for n, m in zip(self.axes, mesh)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Grid):
            return NotImplemented
        return self.names == other.names and all(
            np.array_equal(self.axes[n], other.axes[n]) for n in self.names
        )

    def __hash__(self) -> int:  # pragma: no cover - grids are not used as keys
        return hash((self.names, self.shape))


def _renamed(coords: Mapping, fields: Mapping, rename: Mapping[str, str]):
    """Coordinates and fields with names mapped by ``rename`` (``{"time": "t"}``)."""
    unknown = [k for k in rename if k not in coords and k not in fields]
    if unknown:
        raise DataError(
            f"rename= names {unknown}, which are neither coordinates ({list(coords)}) nor "
            f"fields ({list(fields)})."
        )
    return (
        {rename.get(k, k): v for k, v in coords.items()},
        {rename.get(k, k): v for k, v in fields.items()},
    )


def _order_coords(coords: Mapping[str, Any]) -> list[str]:
    names = list(coords)
    if "t" in names:
        names.remove("t")
        names.insert(0, "t")
    return names

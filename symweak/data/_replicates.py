"""Repeated measurements: points that share their coordinates.

Experiments measure a place and time several times (three wells of a scratch assay, repeated
sensor readings). Such points are replicates: each is an independent sample for the
surrogate, and their spread about their own mean is a direct measurement of the noise,
free of any model of the field (:meth:`Replicates.noise`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["Replicates", "find_replicates"]


@dataclass(frozen=True)
class Replicates:
    """Which points share coordinates: ``group[i]`` numbers point i's coordinate (0 …
    ``distinct`` − 1, in order of first appearance); ``counts[g]`` is how many points group
    g holds."""

    group: np.ndarray
    counts: np.ndarray

    @property
    def distinct(self) -> int:
        return int(self.counts.size)

    def describe(self, n: int) -> str:
        """``"570 points at 190 distinct coordinates, 3 replicates each"``."""
        lo, hi = int(self.counts.min()), int(self.counts.max())
        each = f"{lo} replicates each" if lo == hi else f"{lo}–{hi} replicates each"
        return f"{n} points at {self.distinct} distinct coordinates, {each}"

    def spread(self, values: np.ndarray) -> float:
        """The pooled standard deviation of the replicates about their group means,
        sqrt(Σ_g Σ_i (v_i − mean_g)² / Σ_g (n_g − 1)) (complex values: of the modulus of
        the deviation); NaN where no coordinate is measured twice."""
        v = np.asarray(values)
        dof = float(np.sum(self.counts - 1))
        if dof <= 0:
            return float("nan")
        sums = np.zeros(self.distinct, dtype=v.dtype)
        np.add.at(sums, self.group, v)
        dev = v - (sums / self.counts)[self.group]
        return float(np.sqrt(np.sum(np.abs(dev) ** 2) / dof))

    def noise(self, fields: Mapping[str, np.ndarray]) -> dict[str, float]:
        """``{field: spread / standard deviation of the field}``: the noise level relative
        to the field, as :func:`symweak.surrogate.estimate_noise` gives it (0 for a
        constant field)."""
        out = {}
        for name, values in fields.items():
            scale = float(np.std(values))
            out[name] = self.spread(values) / scale if scale > 0 else 0.0
        return out


def find_replicates(coords: Mapping[str, np.ndarray]) -> Replicates | None:
    """The replicate groups of points with exactly equal coordinates, or None when every
    point has its own coordinates."""
    stacked = np.stack([np.asarray(a) for a in coords.values()], axis=1)
    n = stacked.shape[0]
    order = np.lexsort(stacked.T[::-1])
    s = stacked[order]
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    if new.all():
        return None
    sorted_group = np.cumsum(new) - 1
    group = np.empty(n, dtype=np.int64)
    group[order] = sorted_group
    # renumber in order of first appearance, so that the numbering follows the user's order
    _, first = np.unique(group, return_index=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    group = rank[group]
    return Replicates(group=group, counts=np.bincount(group))

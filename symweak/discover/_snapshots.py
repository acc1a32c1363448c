"""Few snapshots: data seen at a handful of times, dense in space.

Experiments often image a field a few times (a scratch assay: 5 times 12 h apart, 38
positions each). Between snapshots the surrogate only interpolates, so what the data say
about time is what their snapshots span:

* S snapshots determine at most S − 1 time derivatives, and the weak form needs a few
  snapshots beyond the left-hand side's order (:data:`~._problem.MIN_TIMES`): the largest
  time order the data permit is S − MIN_TIMES, and the log says so;
* test functions are drawn as for any data: a floor on their radius along t of 1.5 gaps
  between snapshots (so that every support holds two snapshots) was tried on the assay
  twin (:mod:`symweak.bench._assay`) and lost terms on 3 of 4 runs (docs/decisions.md).
"""

from __future__ import annotations

import logging

import numpy as np

from ..surrogate import FEW_VALUES

log = logging.getLogger("symweak")

__all__ = ["FEW_SNAPSHOTS", "say_snapshots", "snapshot_times"]

#: data with at most this many distinct times are snapshots: the surrogate's own count of
#: "a few values" (its Gaussians start at least 3/4 of a gap wide along such an axis), so
#: the log line below says what the surrogate does
FEW_SNAPSHOTS = FEW_VALUES


def snapshot_times(obs) -> np.ndarray | None:
    """The distinct times when the data are a few snapshots (at most :data:`FEW_SNAPSHOTS`
    times, each seen at several places), else None."""
    if "t" not in obs.coord_names:
        return None
    times, counts = np.unique(np.asarray(obs.coords["t"]), return_counts=True)
    if times.size > FEW_SNAPSHOTS or counts.min() < 4:
        return None
    return times


def say_snapshots(obs, lhs_terms, min_times: int) -> str | None:
    """Log (and return) what the time resolution of snapshot data permits."""
    times = snapshot_times(obs)
    if times is None:
        return None
    gaps = np.diff(times)
    every = (
        f"every {gaps[0]:.4g}"
        if np.allclose(gaps, gaps[0], rtol=1e-6)
        else f"gaps {gaps.min():.4g} to {gaps.max():.4g}"
    )
    places = len(obs) // times.size
    top = times.size - min_times
    lhs = ", ".join(t.short() for t in lhs_terms)
    text = (
        f"symweak: the data are {times.size} snapshots in t ({every}, about {places} points "
        f"each): time derivatives up to order {top} can be identified ({lhs} asked); "
        "between snapshots the network method's surrogate interpolates (its Gaussians start "
        "at least 3/4 of a gap wide along t)"
    )
    log.info("%s", text)
    return text

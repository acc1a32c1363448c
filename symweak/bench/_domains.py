"""Benchmarks on irregular domains (issue 25): data with a hole in the middle.

``holed(name, ratio, radius, seed)`` samples a 2-D system as a user would have it (point
columns, shuffled), drops every observation within ``radius`` of the centre of the (x, y)
box, and returns the observations together with the domain that says so: the box less a
disc (a 64-gon). Discovering with the domain places test functions only where their
supports avoid the hole; without it the surrogate fills the hole from the data around it.
"""

from __future__ import annotations

import numpy as np

from ..data import Domain, Observations
from ._systems import generate

__all__ = ["holed"]


def holed(
    name: str = "wave", ratio: float = 0.1, radius: float = 1.5, seed: int = 0, noise: float = 0.0
) -> tuple[Observations, Domain]:
    """(point columns outside the hole, the box-less-disc domain) of a 2-D system."""
    full = generate(name)
    obs = full.sample(ratio, seed=seed)
    if noise > 0:
        obs = obs.add_noise(noise, seed=seed)
    (x0, x1), (y0, y1) = full.bounds["x"], full.bounds["y"]
    cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    outside = (obs.coords["x"] - cx) ** 2 + (obs.coords["y"] - cy) ** 2 > radius**2
    order = np.random.default_rng(seed).permutation(int(outside.sum()))
    keep = np.flatnonzero(outside)[order]
    cols = Observations(
        coords={n: np.array(v[keep]) for n, v in obs.coords.items()},
        fields={n: np.array(v[keep]) for n, v in obs.fields.items()},
        clean=None if obs.clean is None else {n: np.array(v[keep]) for n, v in obs.clean.items()},
    )
    angle = np.linspace(0.0, 2 * np.pi, 64, endpoint=False)
    disc = np.stack([cx + radius * np.cos(angle), cy + radius * np.sin(angle)], axis=1)
    box = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return cols, Domain.polygon(box, holes=[disc])

"""A system whose equation holds only outside an obstacle: vorticity past a cylinder
(issue 25), with the domain that says where it holds."""

from __future__ import annotations

import numpy as np

from ..data import Domain
from ._system import vorticity_system

__all__ = ["CYLINDER", "OBSTACLES", "obstacle_domain"]

# ---------------------------------------------------------------------------- obstacle
#: bumped whenever the obstacle generator changes (it keys the data cache)
OBSTACLE_VERSION = 2
#: the cylinder: centre (x, y) and radius, in the [0, 4π) × [0, 2π) box
CYLINDER = (np.pi, np.pi, 0.6)


def _ns_obstacle(nt=51, nx=192, ny=96, T=10.0, Re=100.0, flow=1.0, substeps=10, seed=3):
    """Vorticity around a cylinder: a uniform flow ``flow`` along x past a disc, Brinkman
    penalised (η = 0.1, mask smoothed over three cells: a sharper one rings through the
    spectral solution, 77 % strong-form residual away from the disc instead of 3.7 %),
    periodic box, small random vortices to break the symmetry. The vorticity equation holds
    outside the disc and its smoothed edge only."""
    from . import _solvers as S

    Lx, Ly = 4 * np.pi, 2 * np.pi
    x = S.periodic_grid(0.0, Lx, nx)
    y = S.periodic_grid(0.0, Ly, ny)
    t = np.linspace(0.0, T, nt)
    X, Y = np.meshgrid(x, y, indexing="ij")
    cx, cy, r = CYLINDER
    dist = np.hypot(X - cx, Y - cy)
    cell = x[1] - x[0]
    solid = 0.5 * (1.0 - np.tanh((dist - r) / (3 * cell)))
    rng = np.random.default_rng(seed)
    w0 = np.zeros_like(X)
    for _ in range(6):
        px, py = rng.uniform(0, Lx), rng.uniform(0, Ly)
        s = rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 0.8)
        dx = (X - px + Lx / 2) % Lx - Lx / 2
        dy = (Y - py + Ly / 2) % Ly - Ly / 2
        w0 += s * np.exp(-(dx**2 + dy**2) / (2 * 0.5**2))
    w0 -= w0.mean()
    W, U, V = S.navier_stokes_2d(
        x, y, t, w0, nu=1.0 / Re, substeps=substeps, flow=flow, solid=solid, eta=0.1
    )
    return {"t": t, "x": x, "y": y, "fields": {"omega": W, "u": U, "v": V}}


def obstacle_domain(margin: float = 1.0) -> Domain:
    """The box less the cylinder grown by ``margin``: where the smoothed penalisation is
    negligible (strong-form residual of the true equation 3.7 % beyond a margin of 1.0 —
    the time-difference error of the check — and 30 % beyond 0.4)."""
    cx, cy, r = CYLINDER
    angle = np.linspace(0.0, 2 * np.pi, 64, endpoint=False)
    disc = np.stack([cx + (r + margin) * np.cos(angle), cy + (r + margin) * np.sin(angle)], axis=1)
    Lx, Ly = 4 * np.pi, 2 * np.pi
    return Domain.polygon([(0, 0), (Lx, 0), (Lx, Ly), (0, Ly)], holes=[disc])


def _systems():
    return {
        "ns_obstacle": vorticity_system(
            "ns_obstacle",
            "2-D Navier-Stokes around a cylinder (penalised)",
            _ns_obstacle,
            "periodic [0,4pi) x [0,2pi), 51 x 192 x 96, t in [0,10], Re = 100, flow 1 along x "
            "past a disc of radius 0.6 at (pi, pi), Brinkman penalisation",
            {"ratio": [0.1], "noise": [0.0], "version": OBSTACLE_VERSION},
        )
    }


#: systems whose equation holds only in part of the box
OBSTACLES = _systems()

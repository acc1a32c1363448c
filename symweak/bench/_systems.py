"""The paper's eight benchmark systems: generators, true equations, settings.

Each system is one :class:`BenchmarkSystem` in :data:`SYSTEMS`; adding a system is adding an
entry. ``generate(name)`` returns full-grid :class:`~symweak.Observations` (cached on disk).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

from .._errors import DataError
from ..data import Observations, load
from . import _solvers as S
from ._beyond import BEYOND
from ._monomials import MONOMIALS
from ._obstacle import OBSTACLES
from ._second import SECOND_ORDER
from ._system import BenchmarkSystem, vorticity_system
from ._zoo import ZOO

__all__ = ["SYSTEMS", "BenchmarkSystem", "cache_dir", "generate", "get_system"]

#: Bump when a generator changes, so stale cache files are not reused.
GENERATOR_VERSION = 1


def cache_dir() -> Path:
    """Where generated datasets are cached: $SYMWEAK_CACHE_DIR, else the user cache folder."""
    env = os.environ.get("SYMWEAK_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "symweak"


# ---------------------------------------------------------------------------- generators
def _burgers(nt=101, nx=256, T=10.0, L=8.0, nu=0.1, substeps=10):
    x = S.periodic_grid(-L, L, nx)
    t = np.linspace(0.0, T, nt)
    k = S.wavenumbers(nx, 2 * L, real=True)
    u0 = np.exp(-((x + 2.0) ** 2))
    u = S.etdrk4_1d(
        u0, -nu * k**2, lambda v: -0.5j * k * np.fft.rfft(np.fft.irfft(v, nx) ** 2), t, substeps
    )
    return {"t": t, "x": x, "fields": {"u": u}}


def _kdv(nt=201, nx=512, T=20.0, L=30.0, substeps=40):
    x = S.periodic_grid(-L, L, nx)
    t = np.linspace(0.0, T, nt)
    k = S.wavenumbers(nx, 2 * L, real=True)
    # two solitons of u_t = -6 u u_x - u_xxx: u = c/2 sech²(√c/2 (x - a)), c = 1 and 0.5
    # periodised (images at ±2L) so the initial condition has no jump at the boundary
    u0 = sum(
        0.5 / np.cosh(0.5 * (x + 20.0 + m * 2 * L)) ** 2
        + 0.25 / np.cosh(np.sqrt(0.5) / 2 * (x - 5.0 + m * 2 * L)) ** 2
        for m in (-1, 0, 1)
    )
    u = S.etdrk4_1d(
        u0, 1j * k**3, lambda v: -3j * k * np.fft.rfft(np.fft.irfft(v, nx) ** 2), t, substeps
    )
    return {"t": t, "x": x, "fields": {"u": u}}


def _ks(nt=251, nx=256, T=50.0, L=10.0, substeps=40):
    x = S.periodic_grid(-L, L, nx)
    t = np.linspace(0.0, T, nt)
    k = S.wavenumbers(nx, 2 * L, real=True)
    u0 = -np.sin(np.pi * x / 10.0)
    u = S.etdrk4_1d(
        u0, k**2 - k**4, lambda v: -0.5j * k * np.fft.rfft(np.fft.irfft(v, nx) ** 2), t, substeps
    )
    return {"t": t, "x": x, "fields": {"u": u}}


def _chafee_infante(nt=200, nx=301, T=0.5, L=3.0):
    x = np.linspace(0.0, L, nx)
    t = np.linspace(0.0, T, nt)
    u0 = np.sin(x)
    u0[0] = u0[-1] = 0.0  # the Dirichlet condition u(0) = u(3) = 0 holds from t = 0
    return {"t": t, "x": x, "fields": {"u": S.chafee_infante(x, t, u0)}}


def _nls(nt=251, nx=256, T=np.pi, L=5.0, substeps=40):
    x = S.periodic_grid(-L, L, nx)
    t = np.linspace(0.0, T, nt)
    k = S.wavenumbers(nx, 2 * L)
    psi0 = (2.0 / np.cosh(x)).astype(complex)

    def nonlinear(v):
        p = np.fft.ifft(v)
        return 1j * np.fft.fft(np.abs(p) ** 2 * p)

    psi = S.etdrk4_1d(psi0, -0.5j * k**2, nonlinear, t, substeps, real=False)
    return {"t": t, "x": x, "fields": {"psi": psi}}


def _wave(nt=100, nx=64, ny=64, T=10.0, L=5.0):
    x = S.periodic_grid(-L, L, nx)
    y = S.periodic_grid(-L, L, ny)
    t = np.linspace(0.0, T, nt)
    X, Y = np.meshgrid(x, y, indexing="ij")
    u0 = np.exp(-((X + 1.0) ** 2 + (Y - 0.5) ** 2) / 1.0) - 0.5 * np.exp(
        -((X - 1.5) ** 2 + (Y + 1.0) ** 2) / 0.7
    )
    return {"t": t, "x": x, "y": y, "fields": {"u": S.wave_2d(x, y, t, u0)}}


def _sine_gordon(nt=70, nx=403, ny=129, dt=0.025, substeps=10):
    x = S.periodic_grid(-np.pi, np.pi, nx)
    y = np.linspace(-1.0, 1.0, ny)
    t = dt * np.arange(nt)
    X, Y = np.meshgrid(x, y, indexing="ij")
    u0 = 3.0 * np.exp(-(X**2) / 0.5) * np.cos(np.pi * Y / 2.0) + 0.5 * np.sin(X) * np.cos(
        3 * np.pi * Y / 2.0
    )
    return {
        "t": t,
        "x": x,
        "y": y,
        "fields": {"u": S.sine_gordon_2d(x, y, t, u0, substeps=substeps)},
    }


def _navier_stokes(
    nt=101, nx=300, ny=150, T=20.0, Lx=4 * np.pi, Ly=2 * np.pi, Re=100.0, substeps=20, seed=7
):
    x = S.periodic_grid(0.0, Lx, nx)
    y = S.periodic_grid(0.0, Ly, ny)
    t = np.linspace(0.0, T, nt)
    X, Y = np.meshgrid(x, y, indexing="ij")
    rng = np.random.default_rng(seed)
    w0 = np.zeros_like(X)
    for _ in range(12):  # Gaussian vortices of random sign, strength and position
        cx, cy = rng.uniform(0, Lx), rng.uniform(0, Ly)
        r = rng.uniform(0.4, 0.9)
        s = rng.choice([-1.0, 1.0]) * rng.uniform(1.0, 2.0)
        dx = (X - cx + Lx / 2) % Lx - Lx / 2
        dy = (Y - cy + Ly / 2) % Ly - Ly / 2
        w0 += s * np.exp(-(dx**2 + dy**2) / (2 * r**2))
    w0 -= w0.mean()
    W, U, V = S.navier_stokes_2d(x, y, t, w0, nu=1.0 / Re, substeps=substeps)
    return {"t": t, "x": x, "y": y, "fields": {"omega": W, "u": U, "v": V}}


# ---------------------------------------------------------------------------- registry
SYSTEMS: dict[str, BenchmarkSystem] = {
    s.name: s
    for s in [
        BenchmarkSystem(
            "burgers",
            "Burgers",
            ("u_t = -0.5*d_x(u^2) + 0.1*u_xx",),
            ("t", "x"),
            ("u",),
            {},
            _burgers,
            lhs="u_t",
            periodic=("x",),
            description="[0,10] x [-8,8), 101 x 256, u0 = exp(-(x+2)^2), periodic ETDRK4",
            settings={
                "ratio": [0.025, 0.05, 0.1, 0.25, 0.5],
                "noise": [0.2, 0.4, 0.6, 0.8, 1.0],
                "noise_ratio": 0.1,
            },
        ),
        BenchmarkSystem(
            "kdv",
            "Korteweg-de Vries",
            ("u_t = -3*d_x(u^2) - u_xxx",),
            ("t", "x"),
            ("u",),
            {},
            _kdv,
            lhs="u_t",
            periodic=("x",),
            description="[0,20] x [-30,30), 201 x 512, two solitons (c = 1, 0.5), ETDRK4",
            settings={
                "ratio": [0.025, 0.05, 0.1, 0.25, 0.5],
                "noise": [0.2, 0.4, 0.6, 0.8, 1.0],
                "noise_ratio": 0.25,
            },
        ),
        BenchmarkSystem(
            "ks",
            "Kuramoto-Sivashinsky",
            ("u_t = -0.5*d_x(u^2) - u_xx - u_xxxx",),
            ("t", "x"),
            ("u",),
            {},
            _ks,
            lhs="u_t",
            periodic=("x",),
            description="[0,50] x [-10,10), 251 x 256, u0 = -sin(pi x/10), periodic ETDRK4",
            settings={
                "ratio": [0.025, 0.05, 0.1, 0.25, 0.5],
                "noise": [0.2, 0.4, 0.6, 0.8, 1.0],
                "noise_ratio": 0.25,
            },
        ),
        BenchmarkSystem(
            "chafee_infante",
            "Chafee-Infante",
            ("u_t = u_xx - u + u^3",),
            ("t", "x"),
            ("u",),
            {},
            _chafee_infante,
            lhs="u_t",
            description="[0,0.5] x [0,3], 200 x 301, u0 = sin x, u = 0 at both ends, FD4 + BDF",
            settings={
                "ratio": [0.025, 0.05, 0.1, 0.25, 0.5],
                "noise": [0.01, 0.05, 0.1],
                "noise_ratio": 0.25,
            },
        ),
        BenchmarkSystem(
            "nls",
            "nonlinear Schrodinger",
            ("u_t = -0.5*v_xx - u^2*v - v^3", "v_t = 0.5*u_xx + u*v^2 + u^3"),
            ("t", "x"),
            ("u", "v"),
            {},
            _nls,
            lhs="u_t, v_t",
            split={"psi": ("u", "v")},
            rules="u1(u, v)",
            periodic=("x",),
            description="[0,pi] x [-5,5), 251 x 256, psi0 = 2 sech x, ETDRK4; psi = u + i v",
            settings={
                "ratio": [0.1, 0.25, 0.375, 0.5],
                "noise": [0.2, 0.4, 0.6, 0.8, 1.0],
                "noise_ratio": 0.25,
            },
        ),
        BenchmarkSystem(
            "wave",
            "2-D wave",
            ("u_tt = u_xx + u_yy",),
            ("t", "x", "y"),
            ("u",),
            {},
            _wave,
            lhs="u_tt",
            periodic=("x", "y"),
            description="[0,10] x [-5,5)^2, 100 x 64 x 64, periodic, exact Fourier solution",
            settings={
                "ratio": [0.01, 0.025, 0.05, 0.1, 0.25],
                "noise": [0.2, 0.4, 0.6, 0.8, 1.0],
                "noise_ratio": 0.05,
            },
        ),
        BenchmarkSystem(
            "sine_gordon",
            "2-D sine-Gordon",
            ("u_tt = u_xx + u_yy - sin(u)",),
            ("t", "x", "y"),
            ("u",),
            {},
            _sine_gordon,
            lhs="u_tt",
            periodic=("x",),
            description=(
                "x in [-pi,pi) periodic, y in [-1,1] Dirichlet, 70 x 403 x 129, dt = 0.025, "
                "spectral + Strang splitting"
            ),
            settings={
                "ratio": [0.025, 0.05, 0.1, 0.25, 0.5],
                "noise": [0.2, 0.4, 0.6, 0.8, 1.0],
                "noise_ratio": 0.1,
            },
        ),
        vorticity_system(
            "navier_stokes",
            "2-D Navier-Stokes (vorticity)",
            _navier_stokes,
            "periodic [0,4pi) x [0,2pi), 101 x 300 x 150, t in [0,20], Re = 100, "
            "random Gaussian vortices, pseudo-spectral RK4 (not the paper's cylinder wake)",
            {
                "ratio": [0.05, 0.1, 1.0],
                "noise": [0.1, 0.2, 0.3, 0.4, 0.5],
                "noise_ratio": 0.1,
            },
        ),
    ]
}


def get_system(name: str) -> BenchmarkSystem:
    key = name.lower().replace("-", "_")
    aliases = {
        "ci": "chafee_infante",
        "sg": "sine_gordon",
        "ns": "navier_stokes",
        "kuramoto_sivashinsky": "ks",
    }
    key = aliases.get(key, key)
    if key in SYSTEMS:
        return SYSTEMS[key]
    if key in ZOO:
        return ZOO[key]
    if key in BEYOND:
        return BEYOND[key]
    if key in MONOMIALS:
        return MONOMIALS[key]
    if key in SECOND_ORDER:
        return SECOND_ORDER[key]
    if key in OBSTACLES:
        return OBSTACLES[key]
    raise DataError(
        f"Unknown benchmark system {name!r}; known: {', '.join(SYSTEMS)}, "
        f"the zoo's {', '.join(ZOO)}, beyond D^a F(U): {', '.join(BEYOND)}, "
        f"monomials beside the read-back's: {', '.join(MONOMIALS)}, "
        f"and second order in time: {', '.join(SECOND_ORDER)}."
    )


def _cache_key(system: BenchmarkSystem, overrides: dict) -> str:
    key = {"v": GENERATOR_VERSION, "name": system.name, **overrides}
    if "version" in system.settings:  # a zoo case's own generator version
        key["case_version"] = system.settings["version"]
    blob = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def generate(name: str, *, cache: bool = True, split: bool = True, **overrides) -> Observations:
    """Full-grid observations of a benchmark system (cached on disk unless ``cache=False``).

    ``overrides`` change the generator's parameters (e.g. ``nt=51`` for a smaller test set).
    Complex fields are split into the real fields the true equations use (NLS: u, v)
    unless ``split=False``.
    """
    system = get_system(name)
    path = cache_dir() / f"{system.name}-{_cache_key(system, overrides)}.npz"
    obs = None
    if cache and path.is_file():
        try:
            obs = load(path)
        except DataError:
            obs = None  # a damaged cache file is regenerated
    if obs is None:
        start = time.perf_counter()
        out = system.generator(**overrides)
        seconds = time.perf_counter() - start
        axes = {n: out[n] for n in system.coords if n != "t"}
        meta = {
            "system": system.name,
            "generator_seconds": round(seconds, 3),
            "generator": system.description,
            "overrides": overrides,
            "periodic": list(system.periodic),
        }
        obs = Observations.from_grid(t=out["t"], fields=out["fields"], meta=meta, **axes)
        if cache:
            tmp = path.with_suffix(".tmp.npz")
            obs.save(tmp)
            os.replace(tmp, path)
    if split and system.split:
        obs = obs.split_complex(system.split)
    return obs

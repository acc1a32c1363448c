"""Cases beyond D^α F(U): equations with products of derivatives (issue 25).

Each is discovered with the default options plus one constraint line, ``inputs: u, u_x``,
which lets the final fit use product terms (u_x², u·u_x², …); the cases are not part of
the zoo's halves and no default was tuned on them.

* ``kpz``: interface growth, u_t = ν u_xx + (λ/2) u_x² (Kardar–Parisi–Zhang, no noise);
* ``hamilton_jacobi``: a viscous Hamilton–Jacobi equation with discount,
  u_t = ε u_xx − H(u_x) − r u with H(p) = 0.6 p²;
* ``nondivergence``: nonlinear diffusion not in divergence form, u_t = 0.1 u·u_xx, whose
  canonical writing is 0.05 d_xx(u²) − 0.1 u_x²;
* ``conserved_growth``: a Cahn–Hilliard-type conserved equation of thin-film growth
  (the deterministic conserved KPZ / Lai–Das Sarma–Villain equation with diffusion),
  u_t = d_xx(μ) with chemical potential μ = 0.1 u − 0.05 u_xx + 0.3 u_x², whose gradient
  term makes d_xx(u_x²) a product term no D^α F(U) library holds;
* ``thin_film``: the thin-film (lubrication) equation with linear mobility, the Hele-Shaw
  cell, u_t = −0.1 (u u_xxx)_x for a film u > 0, whose canonical writing is
  −0.05 d_xxxx(u²) + 0.15 d_xx(u_x²) (u u_xxx = ½ (u²)_xxx − 3/2 (u_x²)_x).
"""

from __future__ import annotations

import numpy as np

from ._periodic import periodic_1d as _periodic_1d
from ._system import BenchmarkSystem, periodic_1d_case

__all__ = ["BEYOND"]

#: bumped whenever a case's generator changes (it keys the data cache)
BEYOND_VERSION = 1


def _kpz(nt=101, nx=256, T=5.0):
    return _periodic_1d(
        0.0, 10.0, nx, T, nt,
        {"u": lambda x: 0.8 * np.sin(np.pi * x / 5) + 0.5 * np.cos(3 * np.pi * x / 5 + 0.4)},
        {"u": lambda k: -0.08 * k**2},
        lambda f, D: {"u": 0.5 * D(f["u"], 1) ** 2}, 20,
    )  # fmt: skip


def _hamilton_jacobi(nt=101, nx=256, T=4.0):
    return _periodic_1d(
        -6.0, 6.0, nx, T, nt,
        {"u": lambda x: np.exp(-(x**2)) + 0.7 * np.cos(np.pi * x / 6)
                        + 0.4 * np.sin(np.pi * x / 3)},
        {"u": lambda k: -0.05 * k**2 - 0.3},
        lambda f, D: {"u": -0.6 * D(f["u"], 1) ** 2}, 20,
    )  # fmt: skip


def _nondivergence(nt=101, nx=256, T=5.0):
    # u_t = 0.1 u u_xx, split as 0.1 u_xx (implicit) + 0.1 (u - 1) u_xx (explicit)
    return _periodic_1d(
        0.0, 10.0, nx, T, nt,
        {"u": lambda x: 1.0 + 0.5 * np.cos(np.pi * x / 5) + 0.3 * np.sin(2 * np.pi * x / 5)},
        {"u": lambda k: -0.1 * k**2},
        lambda f, D: {"u": 0.1 * (f["u"] - 1.0) * D(f["u"], 2)}, 40,
    )  # fmt: skip


def _conserved_growth(nt=101, nx=256, T=4.0):
    # u_t = 0.1 u_xx - 0.05 u_xxxx + 0.3 d_xx(u_x^2): the linear part implicit, the
    # conserved gradient-squared flux explicit
    return _periodic_1d(
        0.0, 10.0, nx, T, nt,
        {"u": lambda x: 0.6 * np.sin(np.pi * x / 5) + 0.4 * np.cos(2 * np.pi * x / 5 + 0.7)
                        + 0.2 * np.sin(3 * np.pi * x / 5 + 1.3)},
        {"u": lambda k: -0.1 * k**2 - 0.05 * k**4},
        lambda f, D: {"u": 0.3 * D(D(f["u"], 1) ** 2, 2)}, 40,
    )  # fmt: skip


def _thin_film(nt=101, nx=256, T=3.0):
    # u_t = -0.1 (u u_xxx)_x about the flat film u = 1: -0.1 u_xxxx implicit, the rest,
    # -0.1 ((u - 1) u_xxx)_x, explicit; the film stays above 0.2
    return _periodic_1d(
        0.0, 10.0, nx, T, nt,
        {"u": lambda x: 1.0 + 0.4 * np.sin(np.pi * x / 5) + 0.25 * np.cos(2 * np.pi * x / 5 + 0.5)
                        + 0.15 * np.sin(3 * np.pi * x / 5 + 1.1)},
        {"u": lambda k: -0.1 * k**4},
        lambda f, D: {"u": -0.1 * D((f["u"] - 1.0) * D(f["u"], 3), 1)}, 40,
    )  # fmt: skip


def _case(name, title, equations, generator):
    return periodic_1d_case(
        name, title, equations, generator, lhs="u_t", ops="+,-,*,sin", rules="inputs: u, u_x",
        description="beyond D^a F(U) (products of derivatives)", version=BEYOND_VERSION,
    )  # fmt: skip


#: the cases with products of derivatives, by name
BEYOND: dict[str, BenchmarkSystem] = {
    s.name: s
    for s in [
        _case("kpz", "KPZ interface growth", ["u_t = 0.08*u_xx + 0.5*u_x^2"], _kpz),
        _case("hamilton_jacobi", "Viscous Hamilton–Jacobi with discount",
              ["u_t = 0.05*u_xx - 0.6*u_x^2 - 0.3*u"], _hamilton_jacobi),
        _case("nondivergence", "Nonlinear diffusion u·u_xx",
              ["u_t = 0.1*u*u_xx"], _nondivergence),
        _case("conserved_growth", "Conserved thin-film growth (Cahn–Hilliard-type)",
              ["u_t = 0.1*u_xx - 0.05*u_xxxx + 0.3*d_xx(u_x^2)"], _conserved_growth),
        _case("thin_film", "Thin-film equation with linear mobility (Hele-Shaw)",
              ["u_t = -0.05*d_xxxx(u^2) + 0.15*d_xx(u_x^2)"], _thin_film),
    ]
}  # fmt: skip

"""Cases whose terms the symbolic network's read-back may not hold: monomials next to the
ones it reads (a higher power, a product of two fields, a constant source) and one surrogate
limit. Built to test the library's monomial neighbours (docs/ir.md); not part of the zoo's
halves.

* ``zeldovich``: a combustion front, u_t = 0.05 u_xx + u² − u³ (the read-back gave u, u²);
* ``brusselator``: the Brusselator, u_t = 0.05 u_xx + 1 − 3u + u²v,
  v_t = 0.1 v_xx + 2u − u²v (a constant feed and the cubic u²v);
* ``gardner``: the Gardner equation, u_t = −0.5 d_x(u²) + 0.2 d_x(u³) − 0.3 u_xxx, whose
  narrow solitons the surrogate does not resolve from 10 % of the grid;
* ``cahn_hilliard``: u_t = 0.3 d_xx(u³) − 0.3 u_xx − 0.05 u_xxxx, the same;
* ``schnakenberg``: u_t = 0.01 u_xx + 0.1 − u + u²v, v_t = 0.1 v_xx + 0.9 − u²v (feeds and
  u²v beside a read-back of u·v, u², u, v that leaves only 3 % unexplained).
"""

from __future__ import annotations

import numpy as np

from ._system import BenchmarkSystem, periodic_1d_case
from ._zoo import _periodic_1d, _sech

__all__ = ["MONOMIALS"]

#: bumped whenever a case's generator changes (it keys the data cache)
MONOMIALS_VERSION = 1


def _bump(x, a, w):
    return np.exp(-(((x - a) / w) ** 2))


def _zeldovich(nt=101, nx=256, T=10.0):
    return _periodic_1d(
        0.0, 20.0, nx, T, nt,
        {"u": lambda x: 0.9 * _bump(x, 6, 1.5) + 0.7 * _bump(x, 14, 1.0) + 0.2},
        {"u": lambda k: -0.05 * k**2},
        lambda f, D: {"u": f["u"] ** 2 - f["u"] ** 3}, 10,
    )  # fmt: skip


def _brusselator(nt=101, nx=256, T=6.0):
    return _periodic_1d(
        0.0, 20.0, nx, T, nt,
        {"u": lambda x: 1 + 0.3 * np.cos(2 * np.pi * x / 10),
         "v": lambda x: 2 + 0.3 * np.sin(2 * np.pi * x / 20)},
        {"u": lambda k: -0.05 * k**2 - 3.0, "v": lambda k: -0.1 * k**2},
        lambda f, D: {"u": 1 + f["u"] ** 2 * f["v"], "v": 2 * f["u"] - f["u"] ** 2 * f["v"]},
        20,
    )  # fmt: skip


def _gardner(nt=101, nx=256, T=12.0):
    return _periodic_1d(
        -20.0, 20.0, nx, T, nt,
        {"u": lambda x: _sech(0.5 * (x + 6)) ** 2 + 0.5 * _sech(0.5 * (x - 5)) ** 2},
        {"u": lambda k: 0.3j * k**3},
        lambda f, D: {"u": -0.5 * D(f["u"] ** 2, 1) + 0.2 * D(f["u"] ** 3, 1)}, 40,
    )  # fmt: skip


def _cahn_hilliard(nt=101, nx=256, T=4.0):
    def u0(x):
        s = 2 * np.pi * x / 10
        return 0.3 * np.sin(s) + 0.2 * np.cos(3 * s) + 0.1 * np.sin(4 * s)

    return _periodic_1d(
        0.0, 10.0, nx, T, nt, {"u": u0},
        {"u": lambda k: 0.3 * k**2 - 0.05 * k**4},
        lambda f, D: {"u": 0.3 * D(f["u"] ** 3, 2)}, 20,
    )  # fmt: skip


def _schnakenberg(nt=101, nx=256, T=10.0):
    return _periodic_1d(
        0.0, 20.0, nx, T, nt,
        {"u": lambda x: 1 + 0.3 * np.cos(2 * np.pi * x / 10),
         "v": lambda x: 0.9 + 0.2 * np.sin(2 * np.pi * x / 20)},
        {"u": lambda k: -0.01 * k**2 - 1.0, "v": lambda k: -0.1 * k**2},
        lambda f, D: {"u": 0.1 + f["u"] ** 2 * f["v"], "v": 0.9 - f["u"] ** 2 * f["v"]},
        20,
    )  # fmt: skip


def _case(name, title, equations, generator, fields=("u",)):
    return periodic_1d_case(
        name, title, equations, generator, fields=fields,
        lhs=", ".join(f"{f}_t" for f in fields), ops="+,-,*", noise=0.05,
        description="monomials beside the read-back's", version=MONOMIALS_VERSION,
    )  # fmt: skip


#: the cases, by name
MONOMIALS: dict[str, BenchmarkSystem] = {
    s.name: s
    for s in [
        _case("zeldovich", "Zeldovich combustion front",
              ["u_t = 0.05*u_xx + u^2 - u^3"], _zeldovich),
        _case("brusselator", "Brusselator",
              ["u_t = 0.05*u_xx + 1 - 3*u + u^2*v", "v_t = 0.1*v_xx + 2*u - u^2*v"],
              _brusselator, fields=("u", "v")),
        _case("gardner", "Gardner equation",
              ["u_t = -0.5*d_x(u^2) + 0.2*d_x(u^3) - 0.3*u_xxx"], _gardner),
        _case("cahn_hilliard", "Cahn–Hilliard",
              ["u_t = 0.3*d_xx(u^3) - 0.3*u_xx - 0.05*u_xxxx"], _cahn_hilliard),
        _case("schnakenberg", "Schnakenberg",
              ["u_t = 0.01*u_xx + 0.1 - u + u^2*v", "v_t = 0.1*v_xx + 0.9 - u^2*v"],
              _schnakenberg, fields=("u", "v")),
    ]
}  # fmt: skip

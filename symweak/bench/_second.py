"""One-dimensional equations of second order in time, u_tt = …, as a user with a damped
string or a field theory has them (not part of the zoo's halves):

* ``telegraph``: the telegraph (damped wave) equation u_tt = u_xx − 0.3 u_t, whose damping
  is a lower time derivative of the left-hand side's field (docs/ir.md);
* ``klein_gordon``: the nonlinear Klein–Gordon equation u_tt = 0.5 u_xx − u − u³, whose
  cubic is two powers above the linear term;
* ``sine_gordon_1d``: u_tt = u_xx − sin u.

Each is integrated as the first-order pair u_t = p, p_t = c² u_xx − γ p + f(u) by the
zoo's spectral ETDRK4 solver (periodic in x); only u is returned.
"""

from __future__ import annotations

import numpy as np

from ._system import BenchmarkSystem, periodic_1d_case
from ._zoo import _periodic_1d

__all__ = ["SECOND_ORDER"]

#: bumped whenever a case's generator changes (it keys the data cache)
SECOND_ORDER_VERSION = 1


def _pulses(x):
    return 1.5 * np.exp(-(((x - 7.0) / 1.5) ** 2)) + np.exp(-(((x - 14.0) / 1.0) ** 2))


def _second_order(c2: float, damping: float, force, nt=101, nx=256, T=8.0):
    """u on [0, 20) periodic from two pulses at rest, for u_tt = c² u_xx − γ u_t + f(u)."""
    out = _periodic_1d(
        0.0, 20.0, nx, T, nt,
        {"u": _pulses, "p": lambda x: np.zeros_like(x)},
        {"u": lambda k: np.zeros_like(k), "p": lambda k: np.full_like(k, -damping)},
        lambda f, D: {"u": f["p"], "p": c2 * D(f["u"], 2) + force(f["u"])},
        20,
    )  # fmt: skip
    return {**out, "fields": {"u": out["fields"]["u"]}}


def _telegraph():
    return _second_order(1.0, 0.3, np.zeros_like)


def _klein_gordon():
    return _second_order(0.5, 0.0, lambda u: -u - u**3)


def _sine_gordon_1d():
    return _second_order(1.0, 0.0, lambda u: -np.sin(u))


def _case(name, title, equation, generator, ops):
    return periodic_1d_case(
        name, title, [equation], generator, lhs="u_tt", ops=ops,
        description="second order in time", version=SECOND_ORDER_VERSION,
    )  # fmt: skip


#: the cases, by name
SECOND_ORDER: dict[str, BenchmarkSystem] = {
    s.name: s
    for s in [
        _case("telegraph", "telegraph equation", "u_tt = u_xx - 0.3*u_t", _telegraph, "+,-,*"),
        _case("klein_gordon", "Klein–Gordon", "u_tt = 0.5*u_xx - u - u^3", _klein_gordon, "+,-,*"),
        _case(
            "sine_gordon_1d", "sine-Gordon in 1-D", "u_tt = u_xx - sin(u)", _sine_gordon_1d,
            "+,-,*,sin",
        ),
    ]
}  # fmt: skip

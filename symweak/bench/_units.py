"""Data in a user's units and layouts (`symweak bench units`).

Three textbook equations that none of the benchmark rows holds, each simulated once (Fourier
ETDRK4, 101 × 256) and handed to ``symweak.discover`` the way a user would: point columns
``t, x, u`` with no grid metadata, in other units or other layouts than the ones we
simulate in. Each variant's true equation follows from the change of units (time × f
divides every coefficient by f; the field × a multiplies a term of degree d by a^(1−d)),
so every row is scored against the exact equation. Nothing was tuned on these cases; they
exist to catch what a change of units or layout breaks (radii on axes of very different
length, fields of magnitude 1e4 and snapshots at scattered times were found this way).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..data import Observations
from ..ir import Equation, Term
from ._zoo import _periodic_1d

__all__ = ["UNIT_CASES", "VARIANTS", "unit_case_data", "units_report"]


@dataclass(frozen=True)
class UnitCase:
    name: str
    equation: str
    generator: Callable[[], dict]


def _heat():
    return _periodic_1d(
        0.0, 100.0, 256, 20.0, 101,
        {"u": lambda x: np.exp(-(((x - 30) / 6) ** 2)) + 0.6 * np.exp(-(((x - 65) / 9) ** 2))},
        {"u": lambda k: -1.5 * k**2}, None, 10,
    )  # fmt: skip


def _airy():
    return _periodic_1d(
        0.0, 20.0, 256, 4.0, 101, {"u": lambda x: np.exp(-(((x - 8) / 1.2) ** 2))},
        {"u": lambda k: -0.5j * k + 0.2j * k**3}, None, 10,
    )  # fmt: skip


def _burgers():
    return _periodic_1d(
        -1.0, 1.0, 256, 0.25, 101, {"u": lambda x: -np.sin(np.pi * x) + 0.3},
        {"u": lambda k: -0.02 * k**2}, lambda f, D: {"u": -0.5 * D(f["u"] ** 2, 1)}, 40,
    )  # fmt: skip


#: the equations, in the units they are simulated in
UNIT_CASES = {
    c.name: c
    for c in (
        UnitCase("heat", "u_t = 1.5*u_xx", _heat),
        UnitCase("airy", "u_t = -0.5*u_x - 0.2*u_xxx", _airy),
        UnitCase("burgers", "u_t = -0.5*d_x(u^2) + 0.02*u_xx", _burgers),
    )
}

#: variant -> (time factor f, field factor a, field offset c, layout): the data hold
#: t·f and a·u + c; layouts: ("random", ratio), ("snapshots", number of times),
#: ("sensors", number of positions)
VARIANTS = {
    "as simulated": (1.0, 1.0, 0.0, ("random", 0.1)),
    "time in hundredths": (0.01, 1.0, 0.0, ("random", 0.1)),
    "time in hundreds": (100.0, 1.0, 0.0, ("random", 0.1)),
    "field x 1e4": (1.0, 1e4, 0.0, ("random", 0.1)),
    "field + 300": (1.0, 1.0, 300.0, ("random", 0.1)),
    "12 snapshots": (1.0, 1.0, 0.0, ("snapshots", 12)),
    "64 sensors": (1.0, 1.0, 0.0, ("sensors", 64)),
    "24 sensors": (1.0, 1.0, 0.0, ("sensors", 24)),
}


def expected_equation(case: str, variant: str) -> Equation:
    """The case's equation in the variant's units: for v = a·u + c in time t·f,
    v_t = (a/f)·Σ ξ_j D^α F_j((v − c)/a), each F_j expanded into monomials (Burgers with the
    field + 300 gains an advection term 300 v_x)."""
    import sympy

    from ..grammar import parse_equation

    tf, a, c, _ = VARIANTS[variant]
    eq = parse_equation(UNIT_CASES[case].equation)
    coefficients = {}
    for term, value in eq.coefficients.items():
        (u,) = term.fields
        F = sympy.expand(term.F.subs(u, (u - sympy.Float(c)) / sympy.Float(a)))
        coefficients[Term(F, term.alpha)] = float(value) * a / tf
    return Equation(eq.lhs, Equation(eq.lhs, coefficients).coefficients)


def unit_case_data(case: str, variant: str, noise: float = 0.0, seed: int = 0) -> Observations:
    """Point columns of the case in the variant's units and layout. Sampling and noise are
    the project's own (``Observations.sample`` / ``subset`` and ``add_noise``: σ × the RMS of
    the sampled values, as in every other table), applied in the simulation's units; then
    the units change and the rows are shuffled as a table would hold them."""
    sim = UNIT_CASES[case].generator()
    t, x = sim["t"], sim["x"]
    grid = Observations.from_grid(sim["fields"]["u"], t=t, x=x)
    tf, a, c, (layout, k) = VARIANTS[variant]
    rng = np.random.default_rng(seed)
    if layout == "random":
        obs = grid.sample(k, seed=seed)
    else:
        if layout == "snapshots":
            times, places = np.sort(rng.choice(len(t), k, replace=False)), np.arange(len(x))
        else:
            times, places = np.arange(len(t)), np.sort(rng.choice(len(x), k, replace=False))
        obs = grid.subset(np.ravel_multi_index(np.ix_(times, places), (len(t), len(x))).ravel())
    if noise > 0.0:
        obs = obs.add_noise(noise, seed=seed)
    order = rng.permutation(len(obs))  # no grid order, no grid metadata
    return Observations(
        coords={"t": obs.coords["t"][order] * tf, "x": obs.coords["x"][order]},
        fields={"u": a * obs.fields["u"][order] + c},
    )


def units_report(noise: float = 0.0, seed: int = 0, cases=None, variants=None):
    """Lines of the table (case, variant, points, TPR, E∞, seconds, equation), one per run."""
    from .._errors import SymweakError
    from ..discover import discover
    from .metrics import score

    for name, known in ((cases, UNIT_CASES), (variants, VARIANTS)):
        unknown = [c for c in name or () if c not in known]
        if unknown:
            raise SymweakError(
                f"Unknown units case or variant {unknown}; known: {', '.join(known)}."
            )
    yield "| case | variant | points | TPR | E∞ | seconds | expected | found |"
    yield "|---|---|---|---|---|---|---|---|"
    recovered = total = 0
    for case in cases or UNIT_CASES:
        for variant in variants or VARIANTS:
            obs = unit_case_data(case, variant, noise, seed)
            truth = expected_equation(case, variant)
            start = time.perf_counter()
            res = discover(obs, ops="+,-,*,sin", lhs="u_t", seed=seed, progress=False)
            seconds = time.perf_counter() - start
            s = score(res.ir, truth)
            recovered += s.tpr == 1.0
            total += 1
            found = Equation(
                res.ir.lhs, {t: float(f"{c:.4g}") for t, c in res.ir.coefficients.items()}
            )
            yield (
                f"| {case} | {variant} | {len(obs)} | {s.tpr:.2f} | {s.e_inf:.4f} | "
                f"{seconds:.1f} | `{truth.short()}` | `{found.short()}` |"
            )
    yield f"recovered (TPR = 1): {recovered} of {total}, noise {noise:g}, seed {seed}"

"""A benchmark system: how to generate it and the equation(s) it obeys (the paper's eight
in ``_systems``, the zoo in ``_zoo``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .._errors import DataError
from ..grammar import parse_equation
from ..ir import Equation, System

__all__ = ["BenchmarkSystem", "vorticity_system"]


@dataclass(frozen=True)
class BenchmarkSystem:
    """A benchmark: how to generate it and the equation(s) it obeys.

    ``equations`` are written over the fields as the discovery sees them (NLS: the real and
    imaginary parts u, v). ``settings`` are the paper's sampling ratios and noise levels.
    """

    name: str
    title: str
    equations: tuple[str, ...]
    coords: tuple[str, ...]
    fields: tuple[str, ...]
    params: dict
    generator: Callable[..., dict]
    lhs: str
    ops: str = "id,^2,^3,sin,*"
    aux_fields: tuple[str, ...] = ()
    split: dict | None = None
    rules: str = ""
    periodic: tuple[str, ...] = ()
    description: str = ""
    settings: dict = field(default_factory=dict)

    def true_equations(self) -> System:
        coords = ",".join(self.coords)
        return System(parse_equation(e, coords=coords, fields=self.fields) for e in self.equations)

    def true_equation(self) -> Equation:
        system = self.true_equations()
        if len(system) != 1:
            raise DataError(
                f"{self.name} is a system of {len(system)} equations; use true_equations()."
            )
        return system[0]


def periodic_1d_case(
    name: str,
    title: str,
    equations,
    generator: Callable[..., dict],
    *,
    lhs: str,
    ops: str,
    description: str,
    version: int,
    fields: tuple[str, ...] = ("u",),
    rules: str = "",
    noise: float = 0.1,
) -> BenchmarkSystem:
    """A 1-D case on a periodic x outside the zoo's halves (``half: "beyond"``), sampled at
    10 % with ``noise`` by default; ``version`` keys its data cache."""
    return BenchmarkSystem(
        name,
        title,
        tuple(equations),
        ("t", "x"),
        tuple(fields),
        {},
        generator,
        lhs=lhs,
        ops=ops,
        rules=rules,
        periodic=("x",),
        description=description,
        settings={"ratio": [0.1], "noise": [noise], "version": version, "half": "beyond"},
    )


def vorticity_system(name, title, generator, description, settings) -> BenchmarkSystem:
    """A 2-D Navier–Stokes benchmark in vorticity form (ν = 0.01, periodic x, y, velocities
    u, v as auxiliary fields, the Galilean rule): the paper's row and the cylinder case."""
    return BenchmarkSystem(
        name,
        title,
        ("omega_t = -d_x(u*omega) - d_y(v*omega) + 0.01*omega_xx + 0.01*omega_yy",),
        ("t", "x", "y"),
        ("omega", "u", "v"),
        {},
        generator,
        lhs="omega_t",
        aux_fields=("u", "v"),
        rules="galilean(u, v)",
        periodic=("x", "y"),
        description=description,
        settings=settings,
    )

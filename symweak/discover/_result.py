"""The result of :func:`symweak.discover`: :class:`Discovery` (the equations and accessors;
simulation and persistence live in their own modules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sympy

from .._errors import SymweakError
from ..ir import Equation, System
from ._history import History
from ._simulate import Simulation

__all__ = ["UNEXPLAINED_WARNING", "Discovery", "Simulation"]

#: an equation that leaves more than this part of its left-hand side's weak form
#: unexplained (relative norm, held-out test functions) is flagged by ``Discovery.warnings``
UNEXPLAINED_WARNING = 0.5


class Discovery:
    """The result of :func:`discover`.

    Attributes
    ----------
    system: the discovered equations as IR (:class:`~symweak.ir.System`).
    settings: every option the run used (including defaults), JSON-serialisable.
    seed: the seed.
    history: per-phase records (:class:`~symweak.discover.History`: losses, timings, choices).
    """

    def __init__(
        self,
        system: System,
        *,
        settings: Mapping[str, Any] | None = None,
        seed: int = 0,
        history: History | Mapping[str, Any] | None = None,
        method: str = "grid",
        surrogate=None,
        coords: tuple[str, ...] = (),
        fields: tuple[str, ...] = (),
    ) -> None:
        self.system = system if isinstance(system, System) else System(system)
        self.settings = dict(settings or {})
        self.seed = int(seed)
        self.history = history if isinstance(history, History) else History.from_dict(history)
        self.method = method
        self.surrogate = surrogate
        self.coords = tuple(coords)
        self.fields = tuple(fields)

    # ------------------------------------------------------------------ the contract
    @property
    def ir(self) -> Equation | System:
        """The IR: an :class:`~symweak.ir.Equation`, or a :class:`~symweak.ir.System`."""
        return self.system[0] if len(self.system) == 1 else self.system

    @property
    def equation(self) -> sympy.Eq | list[sympy.Eq]:
        """``sympy.Eq(Derivative(u(t, x), t), rhs)``; a list of them for a system."""
        eqs = self.system.to_sympy()
        return eqs[0] if len(eqs) == 1 else eqs

    @property
    def inclusion_probabilities(self) -> dict:
        """Stability selection's ``{term: probability}`` (terms as short text, the fraction
        of resampled test-function halves whose selection held the term; 0 are left out);
        ``{lhs: {...}}`` for a system; empty where it did not run (the full-grid method)."""
        fits = self.history.fits if self.history is not None else []
        per = {f.lhs: dict(f.probabilities) for f in fits}
        if not any(per.values()):
            return {}
        return next(iter(per.values())) if len(per) == 1 else per

    @property
    def uncertainty(self) -> dict:
        """Per kept term: ``{"coefficient", "interval": (low, high), "probability",
        "without"}`` (terms as short text; 95 % bootstrap intervals over the final fit's test
        functions, around the coefficient shown; the stability-selection inclusion
        probability, None for equations fitted jointly by a pair rule; ``without``: the
        part of the left-hand side's weak form the equation would leave unexplained without
        this term, on the held-out test functions of :attr:`pareto` and :attr:`unexplained`,
        None where not computed); ``{lhs: {...}}`` for a system; empty where it was not
        computed (the full-grid method, ``uncertainty=False``).

        ``without`` next to :attr:`unexplained` says how much the data need a term: well
        above it, the rest of the equation cannot stand in for the term; close to it, the
        data hardly tell the equation with the term from the one without."""
        fits = {f.lhs: f for f in (self.history.fits if self.history is not None else [])}
        per = {}
        for eq in self.system:
            fit = fits.get(eq.lhs.short())
            if fit is None or not fit.intervals:
                continue
            per[eq.lhs.short()] = {
                t.short(): {
                    "coefficient": float(c),
                    "interval": tuple(fit.intervals.get(t.short(), (float("nan"),) * 2)),
                    "probability": fit.probabilities.get(t.short()),
                    "without": fit.without.get(t.short()),
                }
                for t, c in eq.coefficients.items()
            }
        if not per:
            return {}
        return next(iter(per.values())) if len(self.system) == 1 else per

    @property
    def pareto(self) -> list | dict:
        """The Pareto front of the final fit: :class:`ParetoEquation` entries, simplest
        first (complexity × relative residual on held-out test functions), the chosen one
        marked; ``{lhs: [...]}`` for a system; empty where it was not computed."""
        fits = {f.lhs: f for f in (self.history.fits if self.history is not None else [])}
        coords = self.settings.get("coords")
        fields = self.settings.get("fields")
        per = {}
        for eq in self.system:
            fit = fits.get(eq.lhs.short())
            if fit is None or not fit.pareto:
                continue
            per[eq.lhs.short()] = [
                ParetoEquation(
                    _equation(eq.lhs.short(), p["terms"], coords, fields),
                    p["complexity"],
                    p["held_out"],
                    p["chosen"],
                )
                for p in fit.pareto
            ]
        if not per:
            return {}
        return next(iter(per.values())) if len(self.system) == 1 else per

    @property
    def unexplained(self) -> dict | float:
        """The part of each left-hand side's weak form that its equation leaves unexplained:
        ‖Gξ − b‖/‖b‖ on held-out test functions where the Pareto front was computed (else on
        the final fit's own), ``{lhs: r}`` for a system, empty where no fit was recorded.
        Near 0 the equation holds against the test functions; near 1 it explains nothing of
        the left-hand side, and the data did not determine an equation at all (Kuramoto–
        Sivashinsky at 100 % noise: a single u_x with r = 0.9999, where the true three terms
        leave 0.36 on the larger test functions alone)."""
        per = {}
        for fit in self.history.fits if self.history is not None else []:
            chosen = [p["held_out"] for p in fit.pareto if p.get("chosen")]
            per[fit.lhs] = float(chosen[0] if chosen else fit.residual)
        if not per:
            return {}
        return next(iter(per.values())) if len(self.system) == 1 else per

    def warnings(self) -> list[str]:
        """Plain-language warnings about the result (one per equation that leaves more than
        :data:`UNEXPLAINED_WARNING` of its left-hand side unexplained); ``discover`` logs
        them and ``summary`` prints them."""
        per = self.unexplained
        if not isinstance(per, dict):
            per = {self.system[0].lhs.short(): per}
        return [
            f"{lhs}: the equation leaves {100 * r:.0f} % of {lhs} unexplained; the data may be too "
            "noisy or too sparse to determine it. Compare the Pareto front and the intervals "
            "before using it."
            for lhs, r in per.items()
            if r > UNEXPLAINED_WARNING
        ]

    def summary(self, digits: int | None = None) -> str:
        """What a person reads in a terminal: each equation, then per term its coefficient
        ± the half-width of its 95 % interval and its inclusion probability, the part of the
        weak form it leaves unexplained (:attr:`unexplained`), the Pareto front, any
        :meth:`warnings`, and the run (method, seed, seconds)."""
        digits = self.digits if digits is None else digits
        lines = [self.short(digits)]
        unc = self.uncertainty
        per = unc if len(self.system) > 1 else {self.system[0].lhs.short(): unc}
        front = self.pareto
        fronts = front if len(self.system) > 1 else {self.system[0].lhs.short(): front}
        left = self.unexplained
        if not isinstance(left, dict):
            left = {self.system[0].lhs.short(): left}
        for lhs in [e.lhs.short() for e in self.system]:
            terms = per.get(lhs) or {}
            if terms:
                head = f"{lhs}: term, coefficient [95 % interval], inclusion probability"
                if any(info.get("without") is not None for info in terms.values()):
                    head += ", unexplained without the term"
                lines.append(head)
            for term, info in terms.items():
                lo, hi = info["interval"]
                p, without = info["probability"], info.get("without")
                lines.append(
                    f"  {term:<14} {_g(info['coefficient'], digits):>10} "
                    f"[{_g(lo, digits)}, {_g(hi, digits)}]"
                    + (f"  p = {p:.2f}" if p is not None else "")
                    + (f"  without: {without:.4g}" if without is not None else "")
                )
            if lhs in left:
                lines.append(f"{lhs}: unexplained part of the weak form {left[lhs]:.4g}")
            if fronts.get(lhs):
                lines.append(f"{lhs}: Pareto front (complexity, held-out residual)")
                for entry in fronts[lhs]:
                    mark = "  <- chosen" if entry.chosen else ""
                    lines.append(
                        f"  {entry.complexity:5.2f}  {entry.held_out:.4g}  "
                        f"{entry.equation.short(digits)}{mark}"
                    )
        seconds = sum(self.history.seconds().values()) if self.history is not None else 0.0
        lines.extend(f"warning: {w}" for w in self.warnings())
        lines.append(f"method {self.method}, seed {self.seed}, {seconds:.1f} s")
        return "\n".join(lines)

    @property
    def coefficients(self) -> dict:
        """``{term: float}`` with each term a SymPy expression such as ``Derivative(u**2, x)``.

        For a system: ``{lhs: {term: float}}`` keyed by each left-hand side expression.
        """
        per_eq = {
            e.lhs.to_sympy(): {t.to_sympy(): float(c) for t, c in e.coefficients.items()}
            for e in self.system
        }
        return next(iter(per_eq.values())) if len(per_eq) == 1 else per_eq

    def latex(self, digits: int | None = 4) -> str:
        """LaTeX of the equation (``cases`` for a system); coefficients to ``digits`` digits."""
        if len(self.system) == 1:
            return self.system[0].latex(digits)
        return self.system.latex(digits)

    #: significant digits of the coefficients in text meant for people (``print(res)``,
    #: ``repr``, the CLI); ``short()``, ``coefficients``, JSON and exported code keep every
    #: digit. Set it on the class or on one result.
    digits: int = 4

    def short(self, digits: int | None = None) -> str:
        """The equations as text; coefficients exact unless ``digits`` is given."""
        return self.system.short(digits)

    def __str__(self) -> str:
        return self.short(self.digits)

    def __repr__(self) -> str:
        eqs = " ; ".join(e.short(self.digits) for e in self.system)
        return f"<Discovery {self.method}: {eqs}>"

    def predict(self, **coords):
        """Field values at the given coordinates, from the surrogate (``predict(t=..., x=...)``)."""
        if self.surrogate is None:
            raise SymweakError(
                "This result has no surrogate: it came from the full-grid fast path, which "
                "uses the data directly. Run discover(..., method='network') to train one."
            )
        return self.surrogate.predict(coords)

    # ------------------------------------------------------------------ export
    def to_code(
        self,
        target: str = "numpy",
        *,
        periodic=(),
        accuracy: int = 4,
        integrator: str = "BDF",
    ) -> str:
        """The equation(s) as ``"latex"`` (a document), ``"numpy"`` (``rhs(fields, spacing)``),
        ``"sim"`` (a method-of-lines simulation script), ``"torch"`` (an ``nn.Module``) or
        ``"c"`` (``symweak_rhs(...)``). ``periodic`` names the space axes that wrap around."""
        from ..export import render

        unc = self.uncertainty
        if unc and len(self.system) == 1:
            unc = {self.system[0].lhs.short(): unc}
        return render(
            self.system,
            target,
            self.coords,
            periodic=periodic,
            accuracy=accuracy,
            method=self.method,
            seed=self.seed,
            integrator=integrator,
            uncertainty=unc,
        )

    def export(self, path, target: str | None = None, **options) -> Path:
        """Write :meth:`to_code` to ``path``; the target follows the suffix when not given
        (``.tex`` LaTeX, ``.py`` NumPy, ``.c`` C)."""
        from ..export import TARGETS, write

        path = Path(path)
        if target is None:
            by_suffix: dict[str, str] = {}
            for t in TARGETS.values():  # the first target of each suffix
                by_suffix.setdefault(t.suffix, t.name)
            if path.suffix not in by_suffix:
                raise SymweakError(
                    f"Cannot tell the export target from {path.name!r}; name it "
                    f"{', '.join(by_suffix)}, or pass target="
                    + "|".join(repr(t) for t in TARGETS)
                    + "."
                )
            target = by_suffix[path.suffix]

        write(self.to_code(target, **options), path)
        return path

    def simulate(
        self,
        data,
        *,
        periodic=None,
        integrator: str = "BDF",
        rtol: float = 1e-6,
        atol: float = 1e-8,
    ) -> Simulation:
        """Integrate the discovered PDE from the first snapshot of ``data`` and compare.

        ``data``: observations that fill a grid (or a file), or scattered observations when
        this result has a surrogate (its prediction on the data's grid is used).
        ``periodic``: space axes that wrap around (default: those recorded in the data's
        metadata, else none). Returns a :class:`Simulation` with the simulated fields and the
        relative L2 error against the data per field.
        """
        from ._problem import as_observations
        from ._simulate import simulate

        obs = as_observations(data)
        return simulate(self, obs, periodic=periodic, integrator=integrator, rtol=rtol, atol=atol)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        from ..export import result_to_dict

        return result_to_dict(self)

    def save(self, path) -> None:
        """Write the result as JSON (equations with exact float64 coefficients, settings, seed,
        versions, history)."""
        from ..export import write_result

        write_result(self, path)

    @classmethod
    def load(cls, path) -> Discovery:
        """Read a result written by :meth:`save`; the equations come back identical."""
        from ..export import read_result

        parts = read_result(path)
        return cls(parts.pop("system"), **parts)


@dataclass(frozen=True)
class ParetoEquation:
    """One equation of the Pareto front: the equation, its complexity (the configured
    weights summed), its relative residual on held-out test functions, and whether it is
    the one returned."""

    equation: Equation
    complexity: float
    held_out: float
    chosen: bool


def _equation(lhs: str, terms: dict, coords, fields) -> Equation:
    from ..grammar import parse_equation

    text = f"{lhs} = " + " ".join(
        f"{'-' if c < 0 else '+'} {abs(c)!r}*({t})" for t, c in terms.items()
    )
    return parse_equation(text, coords=",".join(coords) if coords else None, fields=fields)


def _g(value: float, digits: int) -> str:
    return f"{value:.{digits}g}"

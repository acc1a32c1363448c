"""The result of :func:`symweak.discover`: :class:`Discovery` (the equations and accessors;
simulation and persistence live in their own modules)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sympy

from .._errors import SymweakError
from ..ir import Equation, System
from ._history import History
from ._pointwise import contradicted, said
from ._posed import ill_posed, replaced_said, well_posed_instead
from ._readings import (
    Alternative,
    ParetoEquation,
    Readings,
    _and,
    _g,
    _symmetric,
    cancelling,
)
from ._simulate import Simulation
from ._units import functions_of_large_fields, lopsided, unexplained

__all__ = ["UNEXPLAINED_WARNING", "Alternative", "Discovery", "ParetoEquation", "Simulation"]

#: uncertain terms beyond this many are counted, not listed, by ``print(res)``
MANY_TERMS = 6

#: an equation that leaves more than this part of its left-hand side's weak form
#: unexplained (relative norm, held-out test functions) is flagged by ``Discovery.warnings``
UNEXPLAINED_WARNING = 0.5


#: the line under a summary's term table: what its columns mean
LEGEND = (
    "  (interval: 95 % over resampled test functions and test-function scales; p: share of "
    "the stability selection's halves that kept the term; unexplained: part of the "
    "left-hand side's weak form no fit explains on held-out test functions)"
)


def _pct(fraction: float) -> str:
    """A part of the weak form as a percentage, three significant digits: ``"5.43 %"``."""
    return f"{100 * float(fraction):.3g} %"


class Coefficients(dict):
    """A dict keyed by SymPy expressions that also takes the terms' short names."""

    def __init__(self, values: dict, names: dict) -> None:
        super().__init__(values)
        self._names = names

    def __missing__(self, key):
        if isinstance(key, str) and key in self._names:
            return self[self._names[key]]
        raise KeyError(
            f"{key!r} is not a term of this equation; its terms are "
            f"{', '.join(self._names) or '(none)'}."
        )

    def __contains__(self, key) -> bool:
        return super().__contains__(key) or (isinstance(key, str) and key in self._names)

    def get(self, key, default=None):
        return self[key] if key in self else default  # noqa: SIM401 (self.get is this)


def _contradicted(lhs: str, lacks, excluded) -> str:
    """The warning for an equation whose returned form the verdicts contradict."""
    parts = []
    if lacks:
        parts.append(f"determine {_and(lacks)}, which the equation lacks")
    if excluded:
        parts.append(f"exclude {_and(excluded)}, which it has")
    return (
        f"{lhs}: the data {' and '.join(parts)}: the selection kept the weaker of terms that "
        "stand in for each other; the first of res.alternatives is the equation the data "
        "prefer."
    )


def _richer(lhs: str, found: dict, verdicts: dict) -> str:
    """The warning for an equation the Pareto front's richer equations fit markedly better
    (``FitRecord.richer``)."""
    determined = [t for t, v in verdicts.items() if v == "determined"]
    uncertain = [t for t, v in verdicts.items() if v == "uncertain"]
    what = f"only {_and(determined)}" if determined else "none of its terms"
    return (
        f"{lhs}: an equation with more terms leaves {_pct(found['held_out'])} of {lhs} "
        f"unexplained on held-out test functions against {_pct(found['returned'])} for the "
        f"one returned (res.pareto): these data hold more than it says, so they determine "
        f"{what}; {len(uncertain)} terms may belong ({_some(uncertain)}; res.verdicts)."
    )


def _some(terms) -> str:
    """``terms`` joined, or the first few and how many more."""
    if len(terms) <= MANY_TERMS:
        return ", ".join(terms)
    return ", ".join(terms[:MANY_TERMS]) + f" and {len(terms) - MANY_TERMS} more"


class Discovery(Readings):
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

    def warnings(self) -> list[str]:
        """Plain-language warnings about the result (one per equation that leaves more than
        :data:`UNEXPLAINED_WARNING` of its left-hand side unexplained, one per equation with
        uncertain terms, one per equation with a function beside largely cancelling terms of
        its own Taylor series, one per ill-posed equation: :mod:`._posed`); ``discover`` logs
        them and ``summary`` prints them."""
        per = self.unexplained
        if not isinstance(per, dict):
            per = {self.system[0].lhs.short(): per}
        settings = self.settings
        out = [unexplained(lhs, r, settings) for lhs, r in per.items() if r > UNEXPLAINED_WARNING]
        out.extend(
            said(lhs, found, lopsided(settings))
            for lhs, found in self._per_lhs("time_series").items()
            if contradicted(found)
        )
        alternatives = self._per_lhs("alternatives")
        floors = self._per_lhs("floors")
        richer = self._per_lhs("richer")
        untuned = self._per_lhs("untuned")
        out.extend(
            _richer(lhs, found, self._per_lhs("verdicts")[lhs]) for lhs, found in richer.items()
        )
        for lhs, terms in self.uncertain_terms().items():
            if lhs in richer:
                continue
            n = len(alternatives.get(lhs, []))
            if n == 1 and set(alternatives[lhs][0]["terms"]) == self._returned_terms(lhs):
                n = 0  # the returned equation alone: nothing else fits as well
            sizes = [
                f"{t} with |coefficient| below {_g(float(floors[lhs][t]), 2)}"
                for t in terms
                if math.isfinite(float(floors.get(lhs, {}).get(t, math.inf)))
            ]
            verb = "belongs" if len(terms) == 1 else "belong"
            text = f"{lhs}: these data cannot tell whether {_and(terms)} {verb} in the equation"
            if len(terms) > MANY_TERMS and len(terms) == len(self._per_lhs("verdicts")[lhs]):
                text = f"{lhs}: these data determine no term and exclude none of {len(terms)}"
            if n:
                fit = "equation fits" if n == 1 else "equations fit"
                text += f" ({n} {fit} about as well, see res.alternatives)"
            if sizes:
                text += f"; they would not detect {_and(sizes)}"
            disputed = untuned.get(lhs, {}).get("disputed")
            if disputed:
                text += (
                    f"; the surrogate before tuning and the one tuned towards the "
                    f"candidate terms disagree on {_and(disputed)}"
                )
            out.append(text + ".")
        out.extend(_contradicted(lhs, *both) for lhs, both in self.disagreements().items())
        out.extend(text for text in map(cancelling, self.system) if text)
        observed = getattr(self.history, "observed", None) if self.history else None
        alts = self.alternatives if observed else {}
        for eq in self.system:
            if text := ill_posed(eq, observed):
                mine = alts.get(eq.lhs.short()) if isinstance(alts, dict) else alts
                out.append(text + well_posed_instead(eq, observed, mine))
        out.extend(
            replaced_said(k, v) for k, v in (getattr(self.history, "posed", {}) or {}).items()
        )
        from .network._adopt import said as swap_said  # swaps the data fit better

        out.extend(swap_said(lhs, found) for lhs, found in self._per_lhs("adopted").items())
        out.extend(functions_of_large_fields(self.settings, observed))
        symmetry = getattr(self.history, "symmetry", None) if self.history else None
        if symmetry and (symmetry.get("kept") == "symmetric" or symmetry.get("disputed")):
            out.append(_symmetric(symmetry))
        return out

    def _returned_terms(self, lhs: str) -> set:
        """The printed terms of the returned equation for ``lhs``."""
        eq = next((e for e in self.system if e.lhs.short() == lhs), None)
        return {t.short() for t in eq.coefficients} if eq is not None else set()

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
                lines.append(LEGEND)
            for term, info in terms.items():
                lo, hi = info["interval"]
                p, without = info["probability"], info.get("without")
                lines.append(
                    f"  {term:<14} {_g(info['coefficient'], digits):>10} "
                    f"[{_g(lo, digits)}, {_g(hi, digits)}]"
                    + (f"  p = {p:.2f}" if p is not None else "")
                    + (f"  without: {_pct(without)}" if without is not None else "")
                )
            if lhs in left:
                lines.append(f"{lhs}: unexplained part of the weak form {_pct(left[lhs])}")
            lines.extend(self._verdict_lines(lhs, digits))
            if fronts.get(lhs):
                lines.append(f"{lhs}: Pareto front (complexity, unexplained on held-out tests)")
                for entry in fronts[lhs]:
                    mark = "  <- chosen" if entry.chosen else ""
                    lines.append(
                        f"  {entry.complexity:5.2f}  {_pct(entry.held_out):>7}  "
                        f"{entry.equation.short(digits)}{mark}"
                    )
        seconds = sum(self.history.seconds().values()) if self.history is not None else 0.0
        lines.extend(f"warning: {w}" for w in self.warnings())
        lines.append(f"method {self.method}, seed {self.seed}, {seconds:.1f} s")
        return "\n".join(lines)

    @property
    def coefficients(self) -> dict:
        """``{term: float}`` with each term a SymPy expression such as ``Derivative(u**2, x)``;
        the grammar's short names work as keys too (``res.coefficients["d_x(u^2)"]``).

        For a system: ``{lhs: {term: float}}`` keyed by each left-hand side expression (or
        its short name, ``"u_t"``).
        """
        per_eq = {
            e.lhs.to_sympy(): Coefficients(
                {t.to_sympy(): float(c) for t, c in e.coefficients.items()},
                {t.short(): t.to_sympy() for t in e.coefficients},
            )
            for e in self.system
        }
        if len(per_eq) == 1:
            return next(iter(per_eq.values()))
        names = {e.lhs.short(): e.lhs.to_sympy() for e in self.system}
        return Coefficients(per_eq, names)

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
        """The equations, and when the data leave terms uncertain one more line naming them."""
        text = self.short(self.digits)
        uncertain = self.uncertain_terms()
        if uncertain:
            text += (
                "\nuncertain: "
                + "; ".join(
                    (f"{lhs}: " if len(self.system) > 1 else "") + _some(terms)
                    for lhs, terms in uncertain.items()
                )
                + " (the data cannot tell; see res.alternatives)"
            )
        for lhs, (lacks, excluded) in self.disagreements().items():
            where = f"{lhs}: " if len(self.system) > 1 else ""
            if lacks:
                text += f"\n{where}the data determine {_and(lacks)}, which this equation lacks"
            if excluded:
                text += f"\n{where}the data exclude {_and(excluded)}, which this equation has"
            text += " (the first of res.alternatives is the equation they prefer)"
        return text

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
        mirror=(),
        integrator: str = "BDF",
        rtol: float = 1e-6,
        atol: float = 1e-8,
    ) -> Simulation:
        """Integrate the discovered PDE from the first snapshot of ``data`` and compare.

        ``data``: observations that fill a grid (or a file), or scattered observations when
        this result has a surrogate (its prediction on the data's grid is used).
        ``periodic``: space axes that wrap around (default: those recorded in the data's
        metadata, else none). ``mirror``: space axes with a no-flux boundary at both ends
        (a scratch assay's well): the axis is extended by its reflection about half a
        spacing beyond its end points and integrated as periodic — exact for equations
        with no preferred direction along it (``symmetric: x``). Returns a
        :class:`Simulation` with the simulated fields and the relative L2 error against the
        data per field.
        """
        from ._problem import as_observations
        from ._simulate import simulate

        obs = as_observations(data)
        return simulate(
            self, obs, periodic=periodic, mirror=mirror, integrator=integrator, rtol=rtol, atol=atol
        )

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

"""What a :class:`~._result.Discovery` says about how sure it is: inclusion probabilities,
intervals, the Pareto front, the unexplained part of the weak form, and what the data
determine (verdicts, alternatives, detection floors; docs/verdicts.md). All read the run's
fit records (``history.fits``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir import Equation

__all__ = ["Alternative", "ParetoEquation", "Readings"]

#: excluded candidates the summary lists (those that could hide the most first)
EXCLUDED_SHOWN = 8


class Readings:
    """The accessors :class:`~._result.Discovery` inherits (it provides ``system``,
    ``history`` and ``settings``)."""

    @property
    def inclusion_probabilities(self) -> dict:
        """Stability selection's ``{term: probability}`` (terms as short text, the fraction
        of resampled test-function halves whose selection held the term; 0 are left out);
        ``{lhs: {...}}`` for a system; empty where it did not run (the full-grid method, which
        selects once)."""
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
        computed (``uncertainty=False``). The full-grid method widens its intervals by the
        other test-function scale instead of other surrogate variants.

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

    def _per_lhs(self, attribute: str) -> dict:
        """``{lhs: the fit record's attribute}`` for every equation that recorded one."""
        fits = self.history.fits if self.history is not None else []
        return {f.lhs: getattr(f, attribute) for f in fits if getattr(f, attribute)}

    def _one_or_all(self, per: dict):
        if not per:
            return {}
        return next(iter(per.values())) if len(self.system) == 1 else per

    @property
    def verdicts(self) -> dict:
        """What the data decide about each term (docs/verdicts.md): ``{"u_xx":
        "determined", "u^3": "uncertain", ...}`` over the terms of :attr:`alternatives`;
        candidates not listed are excluded by the data. ``{lhs: {...}}`` for a system (one
        mapping per left-hand side, ``res.verdicts["v_t"]``); empty where not computed
        (``uncertainty=False``)."""
        return self._one_or_all(self._per_lhs("verdicts"))

    @property
    def alternatives(self) -> list | dict:
        """The equations the data cannot tell apart from the best one, closest first
        (:class:`Alternative`: the equation, its misfit on held-out test functions, the
        margin by which it is within reach and why); ``{lhs: [...]}`` for a system."""
        coords, fields = self.settings.get("coords"), self.settings.get("fields")
        per = {
            lhs: [
                Alternative(
                    _equation(lhs, a["terms"], coords, fields),
                    float(a["held_out"]),
                    float(a["margin"]),
                    a.get("reason", "fit"),
                )
                for a in alts
            ]
            for lhs, alts in self._per_lhs("alternatives").items()
        }
        return self._one_or_all(per)

    @property
    def detection_floor(self) -> dict:
        """``{term: smallest |coefficient|}`` for each term the alternatives differ in: a
        term of that kind smaller than this (in the data's units) would not be detected in
        these data (inf: at no size, other terms stand in for it); ``{lhs: {...}}`` for a
        system."""
        per = {
            lhs: {t: float(v) for t, v in floors.items()}
            for lhs, floors in self._per_lhs("floors").items()
        }
        return self._one_or_all(per)

    @property
    def excluded(self) -> dict:
        """``{term: smallest |coefficient|}`` for each candidate the data exclude: excluded
        only above that size, a smaller one of that kind would not be detected in these
        data (the terms that could hold the largest part of the left-hand side unseen
        first); ``{lhs: {...}}`` for a system."""
        per = {
            lhs: {t: float(v) for t, v in floors.items()}
            for lhs, floors in self._per_lhs("excluded").items()
        }
        return self._one_or_all(per)

    def uncertain_terms(self) -> dict:
        """``{lhs: [terms the data leave uncertain]}`` (only equations that have some)."""
        out = {}
        for lhs, verdicts in self._per_lhs("verdicts").items():
            terms = [t for t, v in verdicts.items() if v == "uncertain"]
            if terms:
                out[lhs] = terms
        return out

    def disagreements(self) -> dict:
        """``{lhs: (determined terms the equation lacks, its terms the data exclude)}`` for
        the equations whose returned form the verdicts contradict: the selection kept the
        weaker of two terms that stand in for each other, and the data prefer the first
        of ``res.alternatives`` (only equations that have some)."""
        out = {}
        for eq in self.system:
            lhs = eq.lhs.short()
            verdicts = self._per_lhs("verdicts").get(lhs)
            if not verdicts:
                continue
            shown = {t.short() for t in eq.coefficients}
            lacks = [t for t, v in verdicts.items() if v == "determined" and t not in shown]
            excluded = [t for t in shown if t not in verdicts]
            if lacks or excluded:
                out[lhs] = (lacks, excluded)
        return out

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

    def _verdict_lines(self, lhs: str, digits: int) -> list[str]:
        """The summary's lines on what the data determine for one equation."""
        verdicts = self._per_lhs("verdicts").get(lhs)
        if not verdicts:
            return []
        sure = [t for t, v in verdicts.items() if v == "determined"]
        unsure = [t for t, v in verdicts.items() if v == "uncertain"]
        lines = [
            f"{lhs}: determined {', '.join(sure) or '(none)'}"
            + (f"; uncertain {', '.join(unsure)} (the data cannot tell)" if unsure else "")
        ]
        alternatives = self.alternatives
        alternatives = alternatives.get(lhs, []) if isinstance(alternatives, dict) else alternatives
        if len(alternatives) > 1:
            lines.append(
                f"{lhs}: equations the data cannot tell apart (unexplained on held-out tests, "
                "margin)"
            )
            lines.extend(
                f"  {100 * a.held_out:.3g} %  {a.margin:+.3f}  {a.equation.short(digits)}"
                + {
                    "stand-in": "  (stand-in)",
                    "floor": "  (below its detection floor)",
                    "surrogate": "  (another surrogate's)",
                    "untuned": "  (the surrogate before tuning)",
                    "symmetry": "  (the U(1)-symmetric fit)",
                    "data": "  (fits the data better)"
                    if a.margin > 1
                    else "  (fits the data as well)",
                }.get(a.reason, "")
                for a in alternatives
            )
        floors = self._per_lhs("floors").get(lhs) or {}
        if floors:
            lines.append(
                f"{lhs}: detection floor (smaller |coefficient| would not be detected): "
                + _sizes(floors)
            )
        hidden = self._per_lhs("excluded").get(lhs) or {}
        if hidden:
            shown = dict(list(hidden.items())[:EXCLUDED_SHOWN])
            more = len(hidden) - len(shown)
            lines.append(
                f"{lhs}: excluded above (smaller |coefficient| would not be detected): "
                + _sizes(shown)
                + (f" and {more} more (res.excluded)" if more else "")
            )
        return lines


def _sizes(floors: dict) -> str:
    return ", ".join(
        f"{t} {_g(float(v), 2) if math.isfinite(float(v)) else 'none at any size'}"
        for t, v in floors.items()
    )


@dataclass(frozen=True)
class Alternative:
    """An equation the data cannot tell apart from the best one: the equation, its relative
    misfit on held-out test functions, the margin by which its score is within reach of the
    best (≥ 0; negative for ``reason="stand-in"``: the best plus a term that the others
    can stand in for, which the data neither need nor exclude, and for ``reason="floor"``:
    the best, which damps nothing along an axis, plus a diffusion or dispersion term the
    data could hold unseen; ``reason="untuned"``: one the surrogate before tuning cannot
    tell from its best, misfit and margin on that surrogate's weak system;
    ``reason="symmetry"``: one of the fit under U(1) phase symmetry, which was not adopted
    but explains as much, misfit and margin on its tied system; ``reason="data"``: the
    equation without a term the data fit as well without (:mod:`.network._refit`; margin
    1 − likelihood ratio / its cutoff)) and the reason."""

    equation: Equation
    held_out: float
    margin: float
    reason: str


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


def _and(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _g(value: float, digits: int) -> str:
    return f"{value:.{digits}g}"


#: a function and the monomials of its own expansion beside it "largely cancel" when their
#: combined leading coefficient is below this share of the larger part
CANCEL_SHARE = 1 / 3


def cancelling(equation) -> str | None:
    """A sentence for an equation that holds a function of a field beside monomials of its
    own Taylor series whose coefficients largely cancel (−2.66 u + 3.17 sin u is
    0.51 u − 0.53 u³ + … : a cubic written with sin u), else None. The first such pair."""
    import sympy

    from ..ir import function_applications

    rhs = equation.rhs
    for t, ct in rhs.items():
        if not function_applications(t.F) or t.F.atoms(sympy.Derivative) or not t.fields:
            continue
        fields = list(t.fields)
        eps = sympy.Symbol("eps")
        scaled = {f: eps * f for f in fields}
        series = sympy.series(t.F.subs(scaled), eps, 0, 4).removeO()
        taylor = sympy.Poly(sympy.expand(series.subs(eps, 1)), *fields)
        own, stand = {}, []
        for s, cs in rhs.items():
            if s is t or s.alpha != t.alpha or function_applications(s.F):
                continue
            if s.F.atoms(sympy.Derivative) or not set(s.fields) <= set(fields):
                continue
            if not s.F.is_polynomial(*fields):
                continue
            monomial = sympy.Poly(s.F, *fields)
            if len(monomial.terms()) != 1:
                continue
            k = float(taylor.coeff_monomial(monomial.monoms()[0]))
            if k == 0.0:
                continue
            stand.append(s)
            mine, theirs = float(ct) * k * monomial.coeffs()[0], float(cs)
            if mine * theirs < 0 and abs(mine + theirs) < CANCEL_SHARE * max(
                abs(mine), abs(theirs)
            ):
                own[s] = (mine, theirs)
        if not own:
            continue
        together = sympy.expand(
            float(ct) * taylor.as_expr() + sum(float(rhs[s]) * s.F for s in stand)
        )
        names = [Equation(equation.lhs, {s: 1.0}).short().split(" = ")[1] for s in own]
        name = Equation(equation.lhs, {t: 1.0}).short().split(" = ")[1]
        return (
            f"{equation.lhs.short()}: {name} and {', '.join(names)} largely cancel (together "
            f"{_three(together, fields)} + … to third order): {name} may be standing in for a "
            "polynomial these data cannot tell it from; compare res.alternatives."
        )
    return None


def _three(expr, fields) -> str:
    """The polynomial ``expr`` in ``fields`` as the grammar writes terms (0.506*u -
    0.528*u^3), coefficients to three significant digits."""
    import sympy

    from ..ir import field_name

    names = [field_name(f) for f in fields]
    parts = []
    for powers, c in sorted(sympy.Poly(expr, *fields).terms(), key=lambda p: sum(p[0])):
        factors = [n if k == 1 else f"{n}^{k}" for n, k in zip(names, powers) if k]
        parts.append((float(c), "*".join(factors) or "1"))
    text = " ".join(f"{'-' if c < 0 else '+'} {abs(c):.3g}*{m}" for c, m in parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _symmetric(record: dict) -> str:
    """The sentence that says a U(1) phase symmetry was adopted, or was not but explains as
    much, making the terms the two fits disagree on uncertain (network/_symmetry.py)."""
    pair = record["fields"]
    if record["kept"] != "symmetric":
        terms = "; ".join(f"{lhs}: {', '.join(t)}" for lhs, t in record["disputed"].items())
        return (
            f"fitted as one complex equation for psi = {pair[0]} + i*{pair[1]} (U(1) phase "
            f"symmetry, `{record['rule']}`), the equations explain as much of these data as "
            f"the ones returned, so the terms the two fits disagree on are uncertain ({terms})."
        )
    first = max(record["residuals"].values())
    tied = max(record["symmetric_residuals"].values())
    return (
        f"the equations were fitted as the real and imaginary parts of one complex equation "
        f"for psi = {pair[0]} + i*{pair[1]} (U(1) phase symmetry, `{record['rule']}`): tied, "
        f"they leave at most {100 * tied:.1f} % of the weak form unexplained against "
        f"{100 * first:.1f} % without it. constraints='u1({pair[0]}, {pair[1]})' fits them "
        "untied (mirrored terms as candidates only)."
    )

"""The built-in rules: Galilean invariance, the U(1) hypothesis and planar isotropy, each
derived from its transformation (:mod:`._base`). Each declares the number of field names it
takes (``fields``), a one-line ``summary`` and the ``actions`` it accepts (the first is what
it does without ``as ...``); the grammar reads them from the registry."""

from __future__ import annotations

import itertools

import sympy

from .._errors import SymweakError
from ..ir import Term, fields_in
from ._base import (
    Rule,
    RuleReport,
    _name,
    _proportional,
)

__all__ = ["U1", "Galilean", "Isotropic"]


class Galilean(Rule):
    """Galilean invariance (paper 4.6.1) for velocity fields ``velocities`` (along x, y, z).

    Filters the terms that depend on absolute velocity and adds the flux terms
    ∂_i(u_i f) that cancel the frame shift of ∂_t f — both derived from the transformation
    x_i -> x_i - c_i t, u_i -> u_i - c_i.
    """

    rule_name = "galilean"
    fields = (1, 3)
    summary = "Galilean invariance; arguments are the velocity fields along x, y, z"
    actions = ()

    def __init__(self, *velocities: str, time: str = "t") -> None:
        if not velocities:
            raise SymweakError("galilean(...) needs the velocity fields, e.g. galilean(u, v).")
        self.velocities = tuple(_name(v) for v in velocities)
        self.time = time
        self.name = f"galilean({', '.join(self.velocities)})"
        self.action = "filter"
        self._parameters = None
        self.substitutions = {}

    def _space(self, coords):
        space = [c for c in coords if c.name != self.time]
        if len(coords) == len(space):
            raise SymweakError(
                f"{self.name} needs a time coordinate `{self.time}`; the data have "
                f"{', '.join(c.name for c in coords)}."
            )
        if len(self.velocities) > len(space):
            raise SymweakError(
                f"{self.name} lists {len(self.velocities)} velocity fields but the data have "
                f"only {len(space)} space coordinate(s)."
            )
        return space

    def apply(self, libraries, coords, fields):
        space = self._space(coords)
        t = next(c for c in coords if c.name == self.time)
        subs = {}
        for vel, x in zip(self.velocities, space):
            c = sympy.Symbol(f"c_{x.name}")
            subs[x.name] = x - c * t
            subs[vel] = sympy.Function(vel)(*coords) - c
        self.substitutions = subs
        bound = self._bind(coords, fields)
        point = {p: 0 for p in bound[2]}
        fmap = {f.func.__name__: f for f in fields}
        libs = {lhs: list(lib) for lhs, lib in libraries.items()}
        report = RuleReport(self.name)
        for lhs, lib in libs.items():
            keep = [term for term in lib if self.respects(term, lhs, bound, point)]
            gone = [term.short() for term in lib if term not in keep]
            if gone:
                report.removed[lhs.short()] = gone
            # Derived flux terms: d_i(u_j f) whose shift cancels part of the frame shift.
            if lhs.field_names and dict(lhs.order).get(t, 0) >= 1:
                f = fmap[lhs.field_names[0]]
                for vel, x in itertools.product(self.velocities, space):
                    cand = Term(fmap[vel] * f, {x: 1}).canonical()[1]
                    if cand in keep or cand == lhs:
                        continue
                    res = self.residuals(cand, lhs, bound, point)
                    if all(_proportional(rt, rl) for rt, rl in res) and any(rt for rt, _ in res):
                        keep.append(cand)
                        report.added.setdefault(lhs.short(), []).append(cand.short())
            libs[lhs] = keep
        return libs, report


class U1(Rule):
    """The U(1) equivariance hypothesis for ψ = re + i·im (paper 4.6.2): the quarter turn
    re -> -im, im -> re as an augmentation — every term T(u, v) of one part's library brings
    its counterpart -T(-v, u) into the other's (the paper's hypothesis: the regression of
    each equation decides).

    ``action="pair"`` (constraint text ``u1(u, v) as pair``) makes it a constraint: the two
    equations are fitted jointly, each term's coefficient tied to its mirror's, so a term is
    kept or dropped in both at once with the evidence of both.

    ``action="equivariant"`` (``u1(u, v) as equivariant``) imposes equivariance under every
    phase ψ -> e^{iφ}ψ, not only the quarter turn, within each equation. A polynomial
    right-hand side N(ψ, ψ̄) = Σ c_jk ψ^j ψ̄^k is equivariant only where j − k = 1, so its
    real and imaginary parts are spanned by |ψ|^{2k}·re and |ψ|^{2k}·im: the library's terms
    D^α P(re, im) are replaced by D^α(re), D^α(im), D^α((re² + im²)·re),
    D^α((re² + im²)·im) (and the next odd degree where the library's polynomials reach it),
    for every α they had; terms of re and im that are not polynomials (sin re) or hold
    derivatives inside F go. u³ + u·v² is then one candidate with one coefficient, where the
    quarter turn leaves u³ and u·v² to be kept or dropped one by one (NLS at σ = 0.6 kept
    v³ and dropped u²·v). The two equations are then tied as by ``pair`` (the quarter turn
    maps each equivariant term of one part onto one of the other), which completes the
    constraint: c ψ gives c_re·u − c_im·v in one part and c_im·u + c_re·v in the other.
    A factor of another field stays (w·u gives w·u, w·v, w·|ψ|²u, ...: Zakharov-type
    coupling); terms of other fields alone leave the parts' equations (not equivariant) and
    stay in the other fields' equations, which are kept invariant: their terms hold the parts
    through |ψ|² only."""

    rule_name = "u1"
    fields = (2, 2)
    summary = "U(1) phase equivariance; arguments are the real and imaginary parts"
    #: ``as pair`` fits the two equations jointly with the coefficients U(1) equivariance
    #: ties; ``as equivariant`` keeps only terms equivariant under every phase
    actions = ("augment", "pair", "equivariant")

    def __init__(self, real: str, imag: str, action: str = "augment") -> None:
        real, imag = _name(real), _name(imag)
        if real == imag:
            raise SymweakError("u1(...) needs two different fields: the real and imaginary part.")
        allowed = self.actions
        if action not in allowed:
            listed = ", ".join(map(repr, allowed[:-1])) + f" or {allowed[-1]!r}"
            raise SymweakError(f"u1(...) takes action {listed}, got {action!r}.")
        self.real, self.imag = real, imag
        self.name = f"u1({real}, {imag})" + (f" as {action}" if action != "augment" else "")
        self.action = action
        self._parameters = ()
        self.substitutions = {}

    def _bind(self, coords, fields):
        """The quarter turn on the fields of these coordinates."""
        u = sympy.Function(self.real)(*coords)
        v = sympy.Function(self.imag)(*coords)
        self.substitutions = {self.real: -v, self.imag: u}
        return Rule._bind(self, coords, fields)

    def apply(self, libraries, coords, fields):
        if self.action == "equivariant":
            return self._equivariant(libraries, fields)
        return Rule.apply(self, libraries, coords, fields)

    def _equivariant(self, libraries, fields) -> tuple[dict, RuleReport]:
        """The libraries with the terms of the two parts replaced by equivariant ones."""
        named = {f.func.__name__: f for f in fields}
        for name in (self.real, self.imag):
            if name not in named:
                raise SymweakError(
                    f"Rule `{self.name}` uses the field `{name}`, which the data do not have "
                    f"(fields: {', '.join(named)})."
                )
        re, im = named[self.real], named[self.imag]
        both, r2 = {re, im}, re**2 + im**2
        report = RuleReport(self.name)
        out = {}
        for lhs, lib in libraries.items():
            # the parts' own equations are equivariant (N(e^{iφ}ψ) = e^{iφ}N); any other
            # field's equation is invariant: its terms hold ψ through |ψ|² only
            own = bool(both & set(lhs.fields))
            kept, alphas, degree = [], {}, 1
            for term in lib:
                F = term.F
                if not both & fields_in(F):
                    if not own:  # invariant, as the other field's equation asks
                        kept.append(term)
                    continue  # in the parts' equations a term without them is not equivariant
                factors = alphas.setdefault(term.alpha, [sympy.Integer(1)])
                if F.atoms(sympy.Derivative) or not F.is_polynomial(re, im):
                    continue
                poly = sympy.Poly(F, re, im)
                degree = max(degree, poly.total_degree())
                for c in poly.coeffs():  # factors of other fields (w in w·u) are kept
                    factor = c.as_coeff_Mul()[1] if fields_in(c) else sympy.Integer(1)
                    if factor not in factors:
                        factors.append(factor)
            if own:
                # a nonlinearity of any degree is at least cubic once equivariant (no even
                # degree is); the quintic joins where the library's polynomials reach 5
                top = 1 if degree == 1 else max(3, degree - (degree + 1) % 2)
                shapes = [r2**k * w for k in range((top - 1) // 2 + 1) for w in (re, im)]
            else:
                shapes = [r2**k for k in range(1, max(2, degree) // 2 + 1)]
            order = sorted(alphas, key=lambda a: (sum(n for _, n in a), str(a)))
            new = [
                Term(factor * shape, dict(alpha))
                for alpha in order
                for factor in alphas[alpha]
                for shape in shapes
            ]
            new = list(dict.fromkeys(kept + new))
            gone = [t.short() for t in lib if t not in new]
            added = [t.short() for t in new if t not in lib]
            if gone:
                report.removed[lhs.short()] = gone
            if added:
                report.added[lhs.short()] = added
            out[lhs] = new
        return out, report

    def _ties_equations(self) -> bool:
        # equivariance under every phase ties the two parts as the quarter turn does
        return self.action in ("pair", "equivariant")


class Isotropic(Rule):
    """Isotropy in the plane of the first two space coordinates (x, y) for a flow whose
    velocity there is ``(u, v)``: the quarter turn x -> y, y -> -x, u -> v, v -> -u; every
    other field is a scalar and stays as it is (the vorticity of a 2-D flow, a concentration).

    By default (``action="pair"``) the turn ties terms: a term and its image share one
    coefficient (ω_xx with ω_yy, ∂x(uω) with ∂y(vω)), within an equation the turn maps onto
    itself and across the two equations it swaps (u_t's terms with v_t's). Terms whose images
    contradict one another (ω_x -> ω_y -> -ω_x) can only have a zero coefficient and leave
    the library. ``as filter`` drops every term that is not invariant under the turn instead,
    ``as augment`` adds the images as candidates.
    """

    rule_name = "isotropic"
    fields = (2, 2)
    summary = "isotropy in the x-y plane; arguments are the velocity fields along x, y"
    actions = ("pair", "filter", "augment")

    def __init__(self, *velocities: str, action: str = "pair", time: str = "t") -> None:
        if len(velocities) != 2:
            raise SymweakError(
                "isotropic(...) needs the two in-plane velocity fields, e.g. isotropic(u, v); "
                "for scalar fields alone write `rule turn: x -> y, y -> -x as pair`."
            )
        allowed = self.actions
        if action not in allowed:
            raise SymweakError(
                f"isotropic(...) takes action {', '.join(map(repr, allowed))}, got {action!r}."
            )
        self.velocities = tuple(_name(v) for v in velocities)
        if self.velocities[0] == self.velocities[1]:
            raise SymweakError("isotropic(...) needs two different velocity fields.")
        self.time = time
        self.action = action
        self.name = f"isotropic({', '.join(self.velocities)})" + (
            f" as {action}" if action != "pair" else ""
        )
        self._parameters = ()
        self.substitutions = {}

    def __repr__(self) -> str:
        return f"Isotropic({', '.join(self.velocities)} as {self.action})"

    def _bind(self, coords, fields):
        space = [c for c in coords if c.name != self.time]
        if len(space) < 2:
            raise SymweakError(
                f"{self.name} turns the plane of two space coordinates; the data have "
                f"{', '.join(c.name for c in space) or 'none'} besides `{self.time}`."
            )
        x, y = space[:2]
        u, v = (sympy.Function(n)(*coords) for n in self.velocities)
        self.substitutions = {x.name: y, y.name: -x, self.velocities[0]: v, self.velocities[1]: -u}
        return Rule._bind(self, coords, fields)

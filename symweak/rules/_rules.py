"""Invariance and equivariance rules as rewrites of candidate libraries.

A rule is a point transformation g of coordinates and fields — ``x -> x - c*t, u -> u - c``
(Galilean), ``u -> -v, v -> u`` (a quarter phase rotation, U(1)), ``x -> -x, u -> -u``
(parity) — plus what to do with candidate terms that do not respect it.

Developer notes:

* g acts on a term T = D^α F(U) by the chain rule. With new coordinates X̄ = X(t, x, ...)
  (affine) and new fields Ū = U(u, ...), the transformed field satisfies
  ū(X̄(x)) = U(u(x)), so ∂/∂x̄ = J^{-T} ∂/∂x with J = ∂X̄/∂x. The image g(T) is therefore
  D̄^α F(U(u)): a linear combination of terms D^β F'. It is computed as a *term vector*
  ``{Term: coefficient}`` (coefficients may hold the group parameters), never by
  differentiating numerically.
* For an equation L = Σ ξ_T T (L its left-hand side) the transformation gives
  g(L) = λ L + R_L. A term T belongs in the library when g(T) - λ T is a multiple of R_L:
  the equation then keeps its form (with the same ξ). For transformations with parameters
  (continuous groups) this is checked per parameter on the infinitesimal generator
  d/dp g(·) at the identity; discrete transformations are checked as they are.
* ``filter`` drops the terms that fail the check; ``augment`` adds, for every term T of the
  library of the equation with left-hand side L_A, the terms of g(T) to the library of the
  equation whose left-hand side is proportional to g(L_A) (for U(1): the imaginary part's);
  both are repeated until nothing changes, so applying a rule twice changes nothing.
* Galilean invariance (paper 4.6.1) is a filter plus derived flux terms: candidates
  ∂_i(u_j f) for the left-hand side's field f and velocity components u_j are generated and
  kept when their shift is a non-zero multiple of the frame shift of ∂_t f — the derivation
  picks ∂_x(u²) for Burgers and ∂_x(uω), ∂_y(vω) for vorticity, with no per-system list.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .._errors import SymweakError
from ..ir import Term, fields_in

__all__ = [
    "RULES",
    "U1",
    "Galilean",
    "Isotropic",
    "Rule",
    "RuleReport",
    "apply_rules",
    "register_rule",
    "rule_from_spec",
]

TermVector = dict  # {Term (canonical): sympy coefficient}


def _name(obj) -> str:
    if isinstance(obj, str):
        return obj
    if isinstance(obj, AppliedUndef):
        return obj.func.__name__
    if isinstance(obj, sympy.Symbol):
        return obj.name
    if isinstance(obj, sympy.FunctionClass):
        return obj.__name__
    raise SymweakError(f"A rule target must be a coordinate or a field, got {obj!r}.")


@dataclass
class RuleReport:
    """What a rule did to each equation's library."""

    rule: str
    removed: dict = field(default_factory=dict)  # lhs text -> [term text]
    added: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = {"rule": self.rule, "removed": self.removed, "added": self.added}
        if getattr(self, "ties", None):
            out["ties"] = self.ties  # [lhs A, lhs B, [[T, T', k], ...]] of pair rules
        return out

    def __str__(self) -> str:
        parts = []
        for lhs in sorted(set(self.removed) | set(self.added)):
            rem, add = self.removed.get(lhs, []), self.added.get(lhs, [])
            if rem:
                parts.append(f"{lhs}: removed {', '.join(rem)}")
            if add:
                parts.append(f"{lhs}: added {', '.join(add)}")
        return f"{self.rule}: " + ("; ".join(parts) if parts else "no change")


class Rule:
    """A transformation of coordinates and fields and what to do with terms it changes.

    Parameters
    ----------
    name: shown in reports.
    substitutions: ``{target: image}``; targets are coordinates or fields (SymPy objects or
        names), images SymPy expressions of coordinates, fields and parameters, e.g.
        ``{x: -x, u: -u}``. Coordinate maps must be affine in the coordinates.
    action: ``"filter"`` (drop terms that break the symmetry) or ``"augment"`` (add the
        images of the terms, for the regression to keep or drop).
    parameters: the group parameters (free symbols of the images that are neither
        coordinates nor fields are taken when not given).

    Examples
    --------
    >>> import sympy
    >>> t, x = sympy.symbols("t x"); u = sympy.Function("u")(t, x)
    >>> parity = Rule("parity", {x: -x, u: -u})
    """

    def __init__(
        self,
        name: str,
        substitutions: Mapping,
        action: str = "filter",
        parameters: Sequence[sympy.Symbol] | None = None,
    ) -> None:
        if action not in ("filter", "augment", "pair"):
            raise SymweakError(
                f"Rule action must be 'filter', 'augment' or 'pair', got {action!r}."
            )
        if not substitutions:
            raise SymweakError(f"Rule `{name}` transforms nothing; give at least one mapping.")
        self.name = str(name)
        self.action = action
        self.substitutions = {_name(k): sympy.sympify(v) for k, v in substitutions.items()}
        self._parameters = tuple(parameters) if parameters is not None else None

    def __repr__(self) -> str:
        subs = ", ".join(f"{k} -> {sympy.sstr(v)}" for k, v in self.substitutions.items())
        return f"Rule({self.name!r}: {subs} as {self.action})"

    # ------------------------------------------------------------------ binding
    def _bind(self, coords: Sequence[sympy.Symbol], fields: Sequence[sympy.Expr]):
        """Coordinate images, field images and parameters in the problem's own objects."""
        cnames = {c.name: c for c in coords}
        fnames = {f.func.__name__: f for f in fields}

        def rebind(expr: sympy.Expr) -> sympy.Expr:
            reps = {}
            for app in expr.atoms(AppliedUndef):
                fname = app.func.__name__
                if fname not in fnames:
                    raise SymweakError(
                        f"Rule `{self.name}` uses the field `{fname}`, which the data do not "
                        f"have (fields: {', '.join(fnames)})."
                    )
                reps[app] = fnames[fname]
            expr = expr.xreplace(reps)
            return expr.xreplace({s: cnames[s.name] for s in expr.free_symbols if s.name in cnames})

        cmap, fmap = {}, {}
        for target, image in self.substitutions.items():
            image = rebind(image)
            if target in cnames:
                cmap[cnames[target]] = image
            elif target in fnames:
                fmap[fnames[target]] = image
            else:
                raise SymweakError(
                    f"Rule `{self.name}` transforms `{target}`, which is neither a coordinate "
                    f"({', '.join(cnames)}) nor a field ({', '.join(fnames)}) of the data."
                )
        known = set(coords)
        params = set()
        for image in [*cmap.values(), *fmap.values()]:
            free = image.xreplace({f: sympy.Dummy() for f in image.atoms(AppliedUndef)})
            params |= {s for s in free.free_symbols if s not in known and not s.is_Dummy}
        if self._parameters is not None:
            params = {rebind(p) for p in self._parameters} | params
        params = tuple(sorted(params, key=lambda s: s.name))
        for c, image in cmap.items():
            if image.atoms(AppliedUndef):
                raise SymweakError(
                    f"Rule `{self.name}`: the image of coordinate {c} may not contain fields."
                )
        # Jacobian J[j, i] = dX_j / dx_i; the map must be affine in the coordinates.
        X = [cmap.get(c, c) for c in coords]
        J = sympy.Matrix([[sympy.diff(Xj, xi) for xi in coords] for Xj in X])
        if any(sympy.diff(e, c) != 0 for e in J for c in coords):
            raise SymweakError(
                f"Rule `{self.name}`: coordinate maps must be affine (such as x -> -x, "
                "x -> a*x or x -> x - c*t); got a map that is not."
            )
        if J.det() == 0:
            raise SymweakError(f"Rule `{self.name}`: the coordinate map is not invertible.")
        Dbar = J.inv().T  # d/dxbar_i = sum_k Dbar[i, k] d/dx_k
        self._cmap = cmap
        return tuple(coords), fmap, params, Dbar

    def identity(self, bound) -> dict:
        """Parameter values (0 or 1 each) at which the transformation is the identity."""
        _coords, fmap, params, _ = bound
        cmap = self._cmap
        if not params:
            return {}
        for trial in itertools.product((0, 1), repeat=len(params)):
            point = dict(zip(params, trial))
            if all(sympy.simplify(img.subs(point) - c) == 0 for c, img in cmap.items()) and all(
                sympy.simplify(img.subs(point) - f) == 0 for f, img in fmap.items()
            ):
                return point
        raise SymweakError(
            f"Rule `{self.name}` has parameters {', '.join(map(str, params))} but no choice of "
            "0 or 1 for them makes it the identity; write it so that p = 0 (a shift) or "
            "p = 1 (a scaling) is the identity."
        )

    # ------------------------------------------------------------------ action on terms
    def image(self, term: Term, bound) -> TermVector:
        """g(T) as a term vector ``{Term: coefficient}`` (coefficients may hold parameters)."""
        F, op = self._mapped(term, bound)
        return _term_vector(op, F, bound[0])

    def generator(self, term: Term, bound, p, point) -> TermVector:
        """d/dp g_p(T) at the identity: the infinitesimal image, a vector of parameter-free
        terms even where p sits inside a function (sin(u - c) -> -cos(u))."""
        F, op = self._mapped(term, bound)
        F0, dF = F.subs(point), sympy.diff(F, p).subs(point)
        op0, dop = op.subs(point), sympy.expand(sympy.diff(op, p).subs(point))
        out = _term_vector(op0, dF, bound[0])
        for k, v in _term_vector(dop, F0, bound[0]).items():
            out[k] = out.get(k, 0) + v
        return _clean(out)

    def _mapped(self, term: Term, bound):
        """(F(U(u)), D̄^α as a polynomial in derivative symbols d_k) of g(T)."""
        coords, fmap, _params, Dbar = bound
        F = term.F.xreplace(fmap)
        orders = term.orders([c.name for c in coords])
        d = _dsymbols(len(coords))
        op = sympy.Integer(1)
        for i, n in enumerate(orders):
            if n:
                op *= sum(Dbar[i, k] * d[k] for k in range(len(coords))) ** n
        return F, sympy.expand(op)

    def residuals(self, term: Term, lhs: Term, bound, point) -> list[TermVector]:
        """Per generator (parameter), or once for a discrete map: (g(T) - λ T, g(L) - λ L)."""
        canon_lhs = lhs.canonical()
        ft, ct = term.canonical()
        params = bound[2]
        if not params:
            lam_vec = self.image(lhs, bound)
            lam = lam_vec.get(canon_lhs[1], 0) / canon_lhs[0]
            gT = self.image(term, bound)
            gT[ct] = gT.get(ct, 0) - lam * ft
            rL = dict(lam_vec)
            rL[canon_lhs[1]] = rL.get(canon_lhs[1], 0) - lam * canon_lhs[0]
            return [(_clean(gT), _clean(rL))]
        out = []
        for p in params:
            # d/dp [g(T) - λ(p) T] and d/dp [g(L) - λ(p) L] at the identity
            dT, dL = self.generator(term, bound, p, point), self.generator(lhs, bound, p, point)
            dlam = dL.get(canon_lhs[1], 0) / canon_lhs[0]
            dT[ct] = dT.get(ct, 0) - dlam * ft
            dL[canon_lhs[1]] = dL.get(canon_lhs[1], 0) - dlam * canon_lhs[0]
            out.append((_clean(dT), _clean(dL)))
        return out

    def respects(self, term: Term, lhs: Term, bound, point) -> bool:
        """True when T may appear in the equation for ``lhs`` without breaking the rule."""
        return all(_proportional(rt, rl) for rt, rl in self.residuals(term, lhs, bound, point))

    def _ties_equations(self) -> bool:
        """Whether :meth:`ties` ties coefficients across equations (``pair``)."""
        return self.action == "pair"

    # ------------------------------------------------------------------ libraries
    def apply(
        self,
        libraries: Mapping[Term, Sequence[Term]],
        coords: Sequence[sympy.Symbol],
        fields: Sequence[sympy.Expr],
    ) -> tuple[dict[Term, list[Term]], RuleReport]:
        """The libraries after the rule, and a report of what was removed and added."""
        bound = self._bind(coords, fields)
        point = self.identity(bound)
        libs = {lhs: list(lib) for lhs, lib in libraries.items()}
        report = RuleReport(self.name)
        if self.action == "filter":
            for lhs, lib in libs.items():
                keep = [t for t in lib if self.respects(t, lhs, bound, point)]
                gone = [t.short() for t in lib if t not in keep]
                if gone:
                    report.removed[lhs.short()] = gone
                libs[lhs] = keep
        else:  # augment, and pair (which needs each term's image in the partner library)
            self._augment(libs, bound, point, report)
        return libs, report

    def ties(
        self,
        libraries: Mapping[Term, Sequence[Term]],
        coords: Sequence[sympy.Symbol],
        fields: Sequence[sympy.Expr],
    ) -> list[tuple[Term, Term, list[tuple[Term, Term, float]]]]:
        """For ``pair`` rules: ``[(L_A, L_B, [(T, T', k), ...])]`` — equation B's coefficient of
        T' equals k times equation A's coefficient of T (g(L_A) = λ L_B, g(T) = κ T',
        k = κ/λ). Each pair of equations appears once (A before B in ``libraries``). A rule
        that maps an equation onto itself (L_B = L_A: a quarter turn of the plane for a
        vorticity equation) ties terms within it — ω_yy's coefficient is ω_xx's — and is
        listed as (L_A, L_A, pairs) with the pairs that are not T -> T itself."""
        if not self._ties_equations():
            return []
        bound = self._bind(coords, fields)
        if bound[2]:
            raise SymweakError(
                f"Rule `{self.name}`: `pair` needs a transformation without parameters."
            )
        out, done = [], set()
        for lhs, dest in self._equation_pairs(list(libraries), bound):
            if (dest, lhs) in done:
                continue
            done.add((lhs, dest))
            # g(L_A) = img·canon(L_B) and L_B = f·canon(L_B), so g(L_A) = (img / f)·L_B
            f_dst, c_dst = dest.canonical()
            lam = float(self.image(lhs, bound)[c_dst]) / float(f_dst)
            stored = {t: t for t in libraries[dest]}
            # terms whose F is a sum ((u² + v²)·v) are matched by their expansions
            sums = {}
            for t in libraries[dest]:
                if not isinstance(sympy.expand(t.F), sympy.Add):
                    continue  # one monomial: matched as a single term below
                ex = _expansion(t, coords)
                if len(ex) > 1:
                    sums.setdefault(frozenset(ex), []).append((t, ex))
            pairs = []
            for term in libraries[lhs]:
                vec = self.image(term, bound)
                if len(vec) != 1:
                    for partner, ex in sums.get(frozenset(vec), []):
                        ratio = _ratio(vec, ex)
                        if ratio is not None:
                            pairs.append((term, partner, ratio / lam))
                            break
                    continue
                ((new, kappa),) = vec.items()
                if new in stored:
                    partner = stored[new]
                    f_partner = float(partner.canonical()[0])
                    pairs.append((term, partner, float(kappa) / f_partner / lam))
            if dest == lhs:  # each tie once: T -> T' (k) and T' -> T (1/k) say the same
                said: dict = {}
                for a, b, k in pairs:
                    if (a == b and np.isclose(k, 1.0)) or np.isclose(said.get((b, a), 0.0), 1 / k):
                        continue
                    said[(a, b)] = k
                pairs = [(a, b, k) for (a, b), k in said.items()]
                if not pairs:
                    continue
            out.append((lhs, dest, pairs))
        return out

    def equation_pairs(
        self,
        lhs_terms: Sequence[Term],
        coords: Sequence[sympy.Symbol],
        fields: Sequence[sympy.Expr],
    ) -> list[tuple[Term, Term]]:
        """For ``pair`` rules: ``[(L_A, L_B)]``, each equation the rule maps onto another
        (L_B) or onto itself (L_B = L_A) — what :meth:`ties` will tie, known from the
        left-hand sides alone, before any library exists."""
        if not self._ties_equations():
            return []
        bound = self._bind(coords, fields)
        if bound[2]:
            return []  # ties() refuses a parametrised pair rule with its own message
        return self._equation_pairs(list(lhs_terms), bound)

    def _equation_pairs(self, lhs_terms: list[Term], bound) -> list[tuple[Term, Term]]:
        out = []
        for lhs in lhs_terms:
            dest = self._target(lhs, lhs_terms, bound, {})
            if dest is not None:
                out.append((lhs, dest))
        return out

    def _target(self, lhs: Term, lhs_terms: Sequence[Term], bound, point) -> Term | None:
        vec = self.image(lhs, bound)
        vec = {k: (v.subs(point) if bound[2] else v) for k, v in vec.items()}
        vec = _clean(vec)
        if len(vec) != 1:
            return None
        (img,) = vec
        for other in lhs_terms:
            if other.canonical()[1] == img:
                return other
        return None

    def _augment(self, libs, bound, point, report):
        lhs_terms = list(libs)
        targets = {lhs: self._target(lhs, lhs_terms, bound, point) for lhs in lhs_terms}
        for _ in range(8):
            changed = False
            for lhs in lhs_terms:
                dest = targets[lhs]
                if dest is None:
                    continue
                for term in list(libs[lhs]):
                    if bound[2]:
                        images = set()
                        for p in bound[2]:
                            images |= set(self.generator(term, bound, p, point))
                    else:
                        images = set(self.image(term, bound))
                    for new in sorted(images, key=lambda t: t.sort_key):
                        if new == dest or new in libs[dest] or (not new.alpha and new.F.is_number):
                            continue
                        libs[dest].append(new)
                        report.added.setdefault(dest.short(), []).append(new.short())
                        changed = True
            if not changed:
                break


def _dsymbols(n: int):
    return sympy.symbols(f"_d0:{n}", commutative=True)


def _term_vector(op: sympy.Expr, F: sympy.Expr, coords) -> TermVector:
    """The terms of op(d) F with d_k = ∂/∂coords[k], as ``{canonical Term: coefficient}``."""
    d = _dsymbols(len(coords))
    poly = sympy.Poly(op, *d)
    out: TermVector = {}
    for monom, coeff in poly.terms():
        alpha = {coords[k]: n for k, n in enumerate(monom) if n}
        for part in sympy.Add.make_args(sympy.expand(F)):
            c, mono = part.as_independent(*part.atoms(AppliedUndef), as_Add=False)
            if not mono.atoms(AppliedUndef):
                if alpha:
                    continue  # the derivative of a constant
                c, mono = part, sympy.Integer(1)
            if alpha and not _depends_on(mono, alpha):
                continue
            factor, canon = Term(mono, alpha).canonical()
            out[canon] = out.get(canon, 0) + coeff * c * factor
    return {k: v for k, v in out.items() if sympy.simplify(v) != 0}


def _expansion(term: Term, coords) -> TermVector:
    """T as written, split into canonical monomial terms ``{Term: coefficient}``."""
    d = _dsymbols(len(coords))
    orders = term.orders([c.name for c in coords])
    op = sympy.Mul(*(d[k] ** n for k, n in enumerate(orders)))
    return _term_vector(op, term.F, coords)


def _ratio(a: TermVector, b: TermVector) -> float | None:
    """r with a = r·b (same terms), or None."""
    if set(a) != set(b):
        return None
    ratios = {float(sympy.nsimplify(a[k] / b[k])) for k in a}
    r = ratios.pop()
    return r if all(abs(x - r) <= 1e-12 * max(1.0, abs(r)) for x in ratios) else None


def _depends_on(mono: sympy.Expr, alpha: Mapping) -> bool:
    args = set().union(*(f.args for f in mono.atoms(AppliedUndef)))
    return all(s in args for s in alpha)


def _clean(vec: TermVector) -> TermVector:
    out = {}
    for k, v in vec.items():
        v = sympy.simplify(v)
        if v != 0:
            out[k] = v
    return out


def _proportional(rt: TermVector, rl: TermVector) -> bool:
    """rt = κ·rl for a number κ (rt = 0 always qualifies)."""
    if not rt:
        return True
    if not rl or set(rt) - set(rl):
        return False
    ratio = None
    for k, v in rl.items():
        r = sympy.simplify(rt.get(k, 0) / v)
        if not r.is_number:
            return False
        if ratio is None:
            ratio = r
        elif sympy.simplify(r - ratio) != 0:
            return False
    return True


# ---------------------------------------------------------------------------- built-ins
class Galilean(Rule):
    """Galilean invariance (paper 4.6.1) for velocity fields ``velocities`` (along x, y, z).

    Filters the terms that depend on absolute velocity and adds the flux terms
    ∂_i(u_i f) that cancel the frame shift of ∂_t f — both derived from the transformation
    x_i -> x_i - c_i t, u_i -> u_i - c_i.
    """

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

    def __init__(self, real: str, imag: str, action: str = "augment") -> None:
        real, imag = _name(real), _name(imag)
        if real == imag:
            raise SymweakError("u1(...) needs two different fields: the real and imaginary part.")
        from ..grammar._parser import BUILTIN_RULE_ACTIONS  # the grammar's table, one list

        allowed = BUILTIN_RULE_ACTIONS["u1"]
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

    def __init__(self, *velocities: str, action: str = "pair", time: str = "t") -> None:
        from ..grammar._parser import BUILTIN_RULE_ACTIONS  # the grammar's table, one list

        if len(velocities) != 2:
            raise SymweakError(
                "isotropic(...) needs the two in-plane velocity fields, e.g. isotropic(u, v); "
                "for scalar fields alone write `rule turn: x -> y, y -> -x as pair`."
            )
        allowed = BUILTIN_RULE_ACTIONS["isotropic"]
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


#: Built-in rules by the name the constraint grammar uses.
RULES: dict = {"galilean": Galilean, "u1": U1, "isotropic": Isotropic}


def register_rule(
    name: str, factory, min_fields: int = 1, max_fields: int = 3, summary: str = ""
) -> None:
    """Make ``name(f1, f2, ...)`` in constraint text build ``factory("f1", "f2", ...)``.

    ``factory`` returns a :class:`Rule`; ``min_fields``/``max_fields`` bound the number of
    field names the grammar accepts.
    """
    from ..grammar._parser import BUILTIN_RULES

    if not callable(factory):
        raise SymweakError(f"register_rule: factory for `{name}` is not callable.")
    RULES[name] = factory
    BUILTIN_RULES[name] = (int(min_fields), int(max_fields), summary or f"user rule {name}")


def rule_from_spec(spec) -> Rule:
    """A :class:`Rule` from a parsed :class:`~symweak.grammar.RuleSpec`."""
    if spec.builtin:
        if spec.name not in RULES:
            raise SymweakError(f"Unknown rule `{spec.name}`; known: {', '.join(sorted(RULES))}.")
        if spec.action is not None:
            return RULES[spec.name](*spec.fields, action=spec.action)
        return RULES[spec.name](*spec.fields)
    return Rule(spec.name, spec.mapping(), spec.action or "filter", spec.parameters)


def apply_rules(
    libraries: Mapping[Term, Sequence[Term]],
    rules: Iterable,
    coords: Sequence[sympy.Symbol],
    fields: Sequence[sympy.Expr],
) -> tuple[dict[Term, list[Term]], list[RuleReport]]:
    """Apply ``rules`` in order to per-equation libraries ``{lhs: [terms]}``.

    Returns the new libraries and one :class:`RuleReport` per rule. The inputs are not
    modified.
    """
    libs = {lhs: list(lib) for lhs, lib in libraries.items()}
    reports = []
    for rule in rules:
        if not isinstance(rule, Rule):
            rule = rule_from_spec(rule)
        libs, report = rule.apply(libs, coords, fields)
        reports.append(report)
    return libs, reports

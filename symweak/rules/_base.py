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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from .._errors import SymweakError
from ..ir import Term
from ._vectors import (
    TermVector,
    _clean,
    _dsymbols,
    _expansion,
    _proportional,
    _ratio,
    _term_vector,
)

__all__ = ["Rule", "RuleReport", "TermVector"]


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
        F = term.F.xreplace({**_derivative_images(term.F, coords, fmap, Dbar), **fmap})
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


# ---------------------------------------------------------------------------- built-ins


def _derivative_images(F: sympy.Expr, coords, fmap, Dbar) -> dict:
    """The image of every derivative D^β u inside F (product terms such as u_x²):
    D̄^β applied to u's image, d/dx̄_i = Σ_k Dbar[i, k] d/dx_k — under x -> -x, u_x -> -u_x."""
    out = {}
    for d in F.atoms(sympy.Derivative):
        image = fmap.get(d.expr, d.expr)
        for var, n in d.variable_count:
            i = list(coords).index(var)
            for _ in range(n):
                image = sum(Dbar[i, k] * sympy.diff(image, c) for k, c in enumerate(coords))
        out[d] = sympy.expand(image)
    return out

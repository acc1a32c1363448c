"""Term vectors ``{Term: coefficient}``: the image of a term under a transformation, and
the tests rules make on them (proportional, depends on a multi-index)."""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy.core.function import AppliedUndef

from ..ir import Term

TermVector = dict  # {Term (canonical): sympy coefficient}


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

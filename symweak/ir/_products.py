"""Terms outside D^α F(U): products of derivatives (u_x², u·u_xx) and their canonical form.

A *product term* is ``D^γ G(U, ∂U)`` where G contains derivatives of the fields
(``Term(u_x**2)``, ``Term(u_x**2, "x")``). Many writings of one strong form exist
(u·u_xx + u_x² = ½ d_xx(u²)), so a sum of such terms is put in a normal form:

* the strong form is a polynomial in the jet variables (u, u_x, u_xx, …); it is split into
  components of one field multiset and one total derivative order per coordinate (every
  writing maps each component to itself);
* per component, the candidate terms are ordered by preference — first D^β F(U) (all
  derivatives on the test function in the weak form), then product terms with the lowest
  derivative order left inside G (fewest derivatives taken of data), then the most moved
  outside — and the first linearly independent ones (exact rational elimination) form a
  basis; the component's coordinates in that basis are unique.

So u·u_xx comes back as ½ d_xx(u²) − u_x², u_x·u_xx as ½ d_x(u_x²), and
u·u_xx + u_x² as ½ d_xx(u²): equivalent writings give the same terms and coefficients.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence

import sympy

from .._errors import IRError
from ._symbols import coord_sort_key, field_name, fields_in, is_field
from ._term import Term

__all__ = [
    "inner_order",
    "is_product",
    "jet",
    "normal_form",
    "product_library",
    "to_weak_terms",
]


def jet(f: sympy.Expr, orders: Sequence[tuple[sympy.Symbol, int]]) -> sympy.Expr:
    """The field ``f`` differentiated ``orders`` (``((x, 2),)`` -> u_xx); ``()`` -> f."""
    orders = [(s, n) for s, n in orders if n]
    return sympy.Derivative(f, *orders) if orders else f


def _jet_parts(d: sympy.Expr) -> tuple[sympy.Expr, dict]:
    """(field, {coord: order}) of a field or a derivative of one."""
    if is_field(d):
        return d, {}
    if isinstance(d, sympy.Derivative) and is_field(d.expr):
        out: dict = {}
        for s, n in d.variable_count:
            out[s] = out.get(s, 0) + int(n)
        return d.expr, out
    raise IRError(f"{d} is not a field or a derivative of a field.")


def is_product(F: sympy.Expr) -> bool:
    """Whether F holds derivatives of fields (a product term's G), not only fields."""
    return F.has(sympy.Derivative)


def inner_order(F: sympy.Expr) -> int:
    """The highest total derivative order inside F (0 for a function of the fields)."""
    best = 0
    for d in F.atoms(sympy.Derivative):
        best = max(best, sum(int(n) for _, n in d.variable_count))
    return best


def _generators(expr: sympy.Expr) -> list[sympy.Expr]:
    gens = set(fields_in(expr)) | {d for d in expr.atoms(sympy.Derivative) if is_field(d.expr)}
    return sorted(gens, key=sympy.default_sort_key)


def _grade(monomial: sympy.Expr) -> tuple:
    """(sorted field names with multiplicity, sorted (coord, order) totals) of a monomial."""
    names: list[str] = []
    orders: dict = {}
    for factor, power in monomial.as_powers_dict().items():
        f, o = _jet_parts(factor)
        names += [field_name(f)] * int(power)
        for s, n in o.items():
            orders[s] = orders.get(s, 0) + n * int(power)
    return tuple(sorted(names)), tuple(sorted(orders.items(), key=lambda p: coord_sort_key(p[0])))


def _distributions(total: dict, k: int) -> Iterable[tuple[dict, ...]]:
    """Every way of splitting per-coordinate orders ``total`` over ``k`` factors."""
    per_coord = []
    for s, n in total.items():
        splits = [c for c in itertools.product(range(n + 1), repeat=k) if sum(c) == n]
        per_coord.append([(s, c) for c in splits])
    for choice in itertools.product(*per_coord) if per_coord else [()]:
        yield tuple({s: c[i] for s, c in choice if c[i]} for i in range(k))


def _monomials(fields: Sequence[sympy.Expr], total: dict) -> list[sympy.Expr]:
    """Distinct jet monomials with these fields (with multiplicity) and total orders."""
    out: dict = {}
    for dist in _distributions(total, len(fields)):
        factors = [
            jet(f, sorted(o.items(), key=lambda p: coord_sort_key(p[0])))
            for f, o in zip(fields, dist)
        ]
        out.setdefault(sympy.Mul(*factors), None)
    return list(out)


def _sub_orders(total: dict) -> list[dict]:
    keys = list(total)
    out = []
    for combo in itertools.product(*[range(total[s] + 1) for s in keys]):
        out.append({s: n for s, n in zip(keys, combo) if n})
    return out


def _candidates(fields: Sequence[sympy.Expr], total: dict):
    """The preference-ordered terms (γ, G) whose strong forms live in one component."""
    base = sympy.Mul(*fields)
    cands = [Term(base, sorted(total.items(), key=lambda p: coord_sort_key(p[0])))]
    products = []
    for gamma in _sub_orders(total):
        rest = {s: total.get(s, 0) - gamma.get(s, 0) for s in total}
        rest = {s: n for s, n in rest.items() if n}
        if not rest:
            continue
        for G in _monomials(fields, rest):
            if is_field(G) or (isinstance(G, sympy.Derivative) and is_field(G.expr)):
                continue  # a single linear jet is D^β F(U), already first
            alpha = sorted(gamma.items(), key=lambda p: coord_sort_key(p[0]))
            products.append(Term(G, alpha))
    products.sort(
        key=lambda t: (inner_order(t.F), -t.total_order, sympy.default_sort_key(t.to_sympy()))
    )
    return cands + products


def _basis_solve(cands, target: sympy.Expr, gens) -> list[tuple[sympy.Expr, object]]:
    """Coordinates of ``target`` (a homogeneous polynomial) in the first independent
    candidates; raises if it is not in their span (cannot happen for a full component)."""
    strong = [sympy.Poly(sympy.expand(t.to_sympy().doit()), *gens) for t in cands]
    goal = sympy.Poly(target, *gens)
    monos = sorted({m for p in [*strong, goal] for m in p.monoms()})
    index = {m: i for i, m in enumerate(monos)}

    def vec(p):
        v = [sympy.Integer(0)] * len(monos)
        for m, c in p.terms():
            v[index[m]] = c
        return v

    # the pivot columns of the reduced row echelon form are exactly the first independent
    # candidates in preference order (one exact elimination, not a rank per candidate)
    M = sympy.Matrix([vec(p) for p in strong]).T  # (monomials, candidates)
    _, pivots = M.rref()
    kept = [cands[i] for i in pivots]
    A = M[:, list(pivots)]
    sol, params = A.gauss_jordan_solve(sympy.Matrix(vec(goal)))
    if params.shape[0]:
        raise IRError("internal: the product-term basis is not independent")
    return [(c, t) for c, t in zip(sol, kept) if c != 0]


def normal_form(expr: sympy.Expr) -> list[tuple[sympy.Expr, object]]:
    """``expr`` (strong or weak writing, polynomial in the fields and their derivatives) as
    the unique ``[(coefficient, Term), …]`` of the module's normal form."""
    strong = sympy.expand(sympy.sympify(expr).doit())
    if strong == 0:
        return []
    gens = _generators(strong)
    if not gens:
        raise IRError(f"{expr} holds no field.")
    try:
        poly = sympy.Poly(strong, *gens)
    except sympy.PolynomialError:
        raise IRError(f"{expr} is not a polynomial in the fields and their derivatives.") from None
    components: dict = {}
    for monom, coeff in poly.terms():
        mono = sympy.Mul(*[g**e for g, e in zip(gens, monom)])
        if mono == 1:
            raise IRError(f"{expr} has a constant part; a term needs a field.")
        components.setdefault(_grade(mono), []).append(coeff * mono)
    out = []
    for (names, orders), parts in sorted(components.items(), key=lambda kv: str(kv[0])):
        by_name = {field_name(f): f for f in fields_in(strong)}
        fields = [by_name[n] for n in names]
        total = dict(orders)
        cands = _candidates(fields, total)
        local = sorted(
            set(gens) | {g for t in cands for g in _generators(t.to_sympy().doit())},
            key=sympy.default_sort_key,
        )
        out += _basis_solve(cands, sympy.Add(*parts), local)
    return out


def product_library(inputs: Sequence[sympy.Expr], degree: int, outer: int = 2) -> list:
    """The product terms of ``inputs`` (:func:`_product_library`), computed once per
    arguments in a process: a run asks twice (whether to offer them, then which), and the
    normal forms are about 0.3 s of SymPy each time."""
    return list(_product_library(tuple(inputs), int(degree), int(outer)))


@functools.lru_cache(maxsize=32)
def _product_library(inputs: tuple, degree: int, outer: int) -> tuple:
    """Canonical terms of every monomial of ``inputs`` (fields and their derivatives, e.g.
    u, u_x) up to ``degree`` that holds a derivative: the product terms of the normal form
    (u_x², u·u_x², ½ d_x(u_x²), …) plus the D^β F(U) terms it needs (d_xx(u²) for u·u_xx).

    ``outer``: each product term's G is also offered in conservative form, differentiated up
    to this order along each coordinate the inputs differentiate (d_x(u_x²), d_xx(u_x²)): a flux
    or a chemical potential built from gradients, as in conserved interface growth and
    Cahn–Hilliard-type equations, u_t = d_xx(μ) with μ ∋ u_x². In the weak form those
    outer derivatives go on the test function, so they cost no derivative of the data.
    """
    derivs = [g for g in inputs if isinstance(g, sympy.Derivative)]
    if not derivs:
        return ()
    coords: list = []
    for g in derivs:
        for s, _ in g.variable_count:
            if s not in coords:
                coords.append(s)
    coords.sort(key=coord_sort_key)
    out: dict = {}
    for d in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(inputs, d):
            if not any(isinstance(g, sympy.Derivative) for g in combo):
                continue
            for _, term in normal_form(sympy.Mul(*combo)):
                out.setdefault(term, None)
    if outer:
        for term in [t for t in out if is_product(t.F)]:
            for s in coords:
                for k in range(1, outer + 1):
                    out.setdefault(Term(term.F, {s: k}), None)
    return tuple(out)


def _integrate_product(expr: sympy.Expr) -> tuple[sympy.Expr, Term] | None:
    """P(u) * u_x  ->  d_x(∫P du), for one first-order derivative of one field."""
    coeff, rest = expr.as_coeff_Mul()
    factors = sympy.Mul.make_args(rest)
    derivs = [f for f in factors if isinstance(f, sympy.Derivative)]
    if len(derivs) != 1:
        return None
    d = derivs[0]
    if not is_field(d.expr) or len(d.variable_count) != 1 or d.variable_count[0][1] != 1:
        return None
    g, var = d.expr, d.variable_count[0][0]
    P = sympy.Mul(*[f for f in factors if f is not d])
    if P.has(sympy.Derivative) or fields_in(P) - {g}:
        return None
    s = sympy.Dummy("s")
    antiderivative = sympy.integrate(P.xreplace({g: s}), s)
    if antiderivative.has(sympy.Integral):
        return None
    return coeff, Term(antiderivative.xreplace({s: g}), {var: 1})


def to_weak_terms(expr: sympy.Expr) -> list[tuple[sympy.Expr, Term]]:
    """Write a strong-form expression as a sum of ``coefficient * term`` pairs.

    Derivative-free parts, derivatives of expressions (``Derivative(u**2, x)``) and products
    ``P(u) * u_x`` (which are ``d_x(∫P du)``) become D^α F(U) terms. Where a part is not of
    that form (``u_x**2``, ``u*u_xx``) and the expression is a polynomial in the fields and
    their derivatives, the whole expression is put in the normal form of
    :func:`symweak.ir.normal_form` (D^α F(U) terms first, then product terms with the fewest
    derivatives inside: u·u_xx -> ½ d_xx(u²) − u_x²); a non-polynomial product
    (``sin(u)*u_x**2``) is kept as one product term.
    """
    out: list[tuple[sympy.Expr, Term]] = []
    leftover = []
    for part in sympy.Add.make_args(sympy.expand(expr)):
        coeff, rest = part.as_coeff_Mul()
        if not rest.has(sympy.Derivative) or (
            isinstance(rest, sympy.Derivative) and not rest.expr.has(sympy.Derivative)
        ):
            out.append((coeff, Term.from_sympy(rest)))
            continue
        integrated = _integrate_product(part)
        if integrated is None:
            leftover.append(part)
        else:
            out.append(integrated)
    if not leftover:
        return out
    try:
        return normal_form(expr)
    except IRError:
        pass
    for part in leftover:
        coeff, rest = part.as_coeff_Mul()
        out.append((coeff, Term.from_sympy(rest)))
    return out

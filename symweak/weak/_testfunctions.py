"""One-dimensional bump functions on [-1, 1] with exact derivatives of any order.

Developer notes: a *bump* φ(s) is smooth, positive on (-1, 1) and zero outside. A test
function is a tensor product of shifted and scaled bumps, φ((x - c)/r), so its n-th
derivative is r^{-n} φ^{(n)}((x - c)/r). Every bump gives φ^{(n)} in closed form —
never by finite differences — and says which orders it supports smoothly.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from functools import cache

import numpy as np

from .._errors import SymweakError

__all__ = ["TEST_FUNCTIONS", "Bump", "ExpBump", "PolyBump", "make_bump"]


class Bump(ABC):
    """A bump φ on [-1, 1]. Subclasses implement :meth:`_derivative` (inside the support)."""

    name: str = ""

    @property
    def max_order(self) -> int | None:
        """Highest derivative order that vanishes smoothly at ±1 (None: any order)."""
        return None

    def check_order(self, order: int) -> None:
        top = self.max_order
        if top is not None and order > top:
            raise SymweakError(
                f"{self!r} cannot carry derivatives of order {order}: its derivatives of order "
                f">= {top + 1} do not vanish at the edge of the support, so integration by parts "
                f"would leave boundary terms. Use PolyBump(p) with p >= {order + 1}, or ExpBump()."
            )

    def derivative(self, s, order: int = 0) -> np.ndarray:
        """φ^{(order)}(s), exactly; zero for |s| >= 1."""
        if isinstance(order, bool) or int(order) != order or order < 0:
            raise SymweakError(f"Derivative order must be a non-negative integer, got {order!r}.")
        self.check_order(int(order))
        s = np.asarray(s, dtype=np.float64)
        out = np.zeros_like(s)
        inside = np.abs(s) < 1.0
        out[inside] = self._derivative(s[inside], int(order))
        return out

    def __call__(self, s) -> np.ndarray:
        return self.derivative(s, 0)

    @abstractmethod
    def _derivative(self, s: np.ndarray, order: int) -> np.ndarray: ...

    def sympy_expr(self, s):
        """The bump as a SymPy expression of ``s`` on (-1, 1) (for tests and docs)."""
        raise NotImplementedError

    def spectrum_cutoff(self, tau: float = 1e-3) -> float:
        """Smallest κ with |φ̂(κ')| <= τ |φ̂(0)| for all κ' >= κ (φ on the unit support);
        computed once per bump and τ in a process."""
        return _spectrum_cutoff(self, float(tau))


@cache
def _spectrum_cutoff(bump: Bump, tau: float) -> float:
    """:meth:`Bump.spectrum_cutoff`, once per (equal) bump and τ."""
    s = np.linspace(-1.0, 1.0, 4097)
    phi = bump.derivative(s)
    kappa = np.linspace(0.0, 200.0, 4001)
    ft = np.empty(kappa.size)
    # 128 frequencies at a time: the whole (4001, 4097) table was 130 MB of fresh pages
    for lo in range(0, kappa.size, 128):
        k = kappa[lo : lo + 128, None]
        ft[lo : lo + 128] = np.trapezoid(phi[None, :] * np.cos(k * s[None, :]), s, axis=1)
    ft = np.abs(ft) / abs(ft[0])
    above = np.flatnonzero(ft > tau)
    return float(kappa[min(above[-1] + 1, kappa.size - 1)]) if above.size else 0.0


class PolyBump(Bump):
    """φ(s) = (1 - s²)^p; in C^{p-1}, so derivatives up to order p - 1 are supported."""

    name = "poly"

    def __init__(self, p: int = 8) -> None:
        if isinstance(p, bool) or int(p) != p or p < 1:
            raise SymweakError(f"PolyBump needs an integer power p >= 1, got {p!r}.")
        self.p = int(p)

    @property
    def max_order(self) -> int:
        return self.p - 1

    def _derivative(self, s: np.ndarray, order: int) -> np.ndarray:
        # Leibniz on (1 - s)^p (1 + s)^p: every factor is a falling factorial times a power,
        # which stays accurate near the edges (no cancellation of expanded coefficients).
        p = self.p
        a, b = 1.0 - s, 1.0 + s
        total = np.zeros_like(s)
        for j in range(order + 1):
            if j > p or order - j > p:
                continue
            da = (-1.0) ** j * math.perm(p, j) * a ** (p - j)
            db = math.perm(p, order - j) * b ** (p - order + j)
            total += math.comb(order, j) * da * db
        return total

    def sympy_expr(self, s):
        return (1 - s**2) ** self.p

    def __repr__(self) -> str:
        return f"PolyBump(p={self.p})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PolyBump) and other.p == self.p

    def __hash__(self) -> int:
        return hash(("poly", self.p))


@cache
def _exp_bump_polys(order: int) -> tuple[tuple[int, ...], ...]:
    """Integer coefficients of P_n with φ^{(n)} = P_n(s) / (1 - s²)^{2n} · φ(s), n <= order.

    P_0 = 1 and P_{n+1} = (1 - s²)² P_n' + 4 n s (1 - s²) P_n - 2 s P_n.
    """
    from numpy.polynomial import polynomial as P

    polys = [np.array([1], dtype=object)]
    one_minus = np.array([1, 0, -1], dtype=object)
    for n in range(order):
        Pn = polys[-1]
        d = P.polyder(Pn) if Pn.size > 1 else np.array([0], dtype=object)
        term1 = P.polymul(P.polymul(one_minus, one_minus), d)
        term2 = P.polymul(np.array([0, 4 * n], dtype=object), P.polymul(one_minus, Pn))
        term3 = P.polymul(np.array([0, -2], dtype=object), Pn)
        nxt = P.polyadd(P.polyadd(term1, term2), term3)
        polys.append(np.array([int(c) for c in nxt], dtype=object))
    return tuple(tuple(int(c) for c in p) for p in polys)


class ExpBump(Bump):
    """φ(s) = exp(-1/(1 - s²)); C^∞, every derivative order is supported."""

    name = "exp"

    def _derivative(self, s: np.ndarray, order: int) -> np.ndarray:
        coeffs = np.array(_exp_bump_polys(order)[order], dtype=np.float64)
        q = 1.0 - s**2
        poly = np.polynomial.polynomial.polyval(s, coeffs)
        return poly * np.exp(-1.0 / q - 2.0 * order * np.log(q))

    def sympy_expr(self, s):
        import sympy

        return sympy.exp(-1 / (1 - s**2))

    def __repr__(self) -> str:
        return "ExpBump()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpBump)

    def __hash__(self) -> int:
        return hash("exp")


#: Name -> constructor; a new test function is one entry.
TEST_FUNCTIONS = {"poly": PolyBump, "exp": ExpBump}


def make_bump(spec) -> Bump:
    """A bump from ``"exp"``, ``"poly"``, ``"poly:12"`` or a :class:`Bump` instance."""
    if isinstance(spec, Bump):
        return spec
    if not isinstance(spec, str):
        raise SymweakError(f"Test function must be a name such as 'exp' or 'poly:8', got {spec!r}.")
    name, _, arg = spec.partition(":")
    if name not in TEST_FUNCTIONS:
        raise SymweakError(
            f"Unknown test function {spec!r}; known: {', '.join(TEST_FUNCTIONS)} "
            "(e.g. 'exp', 'poly', 'poly:12')."
        )
    if arg:
        if name != "poly" or not arg.isdigit():
            raise SymweakError(f"Test function {spec!r}: only 'poly:P' takes a whole-number power.")
        return PolyBump(int(arg))
    return TEST_FUNCTIONS[name]()

"""Test functions for both methods: the bump for the derivative orders, radii read off a
spectrum, the support floor on a lattice, and the draw inside the data's domain
(:func:`make_tests`)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

import numpy as np

from .._errors import SymweakError

log = logging.getLogger("symweak")


def bump_for_orders(test_function: str, orders: Mapping[str, int]) -> str:
    """``"poly"`` becomes ``"poly:P"`` smooth enough for every derivative order used (and
    well resolved by quadrature); other names are kept."""
    if test_function == "poly":
        return f"poly:{max(8, max(orders.values()) + 4)}"
    return test_function


def spectral_radius(axes, grids: Sequence[np.ndarray], bump: str) -> dict[str, float]:
    """Per-axis radius read off the spectrum of each field (the largest over the fields)."""
    from ..weak import TestFunctionSet

    radius: dict[str, float] = {}
    for values in grids:
        r = TestFunctionSet.auto_radius(axes, values, bump)
        radius = {n: max(radius.get(n, 0.0), v) for n, v in r.items()}
    return radius


#: a lattice axis of the data is integrated on only with at least this many points ...
LATTICE_MIN_POINTS = 32


#: ... and no gap wider than this many times its median spacing
LATTICE_MAX_GAP = 1.5


def lattice_axis_ok(axis) -> bool:
    """Whether a data lattice's axis is fine and even enough to integrate test functions on:
    a simulation grid is; 24 sensors at scattered positions, or 12 snapshots at scattered
    times, are not (a support then holds a handful of unevenly spaced nodes)."""
    a = np.asarray(axis, dtype=float)
    if len(a) < LATTICE_MIN_POINTS:
        return False
    steps = np.diff(a)
    return bool(steps.max() <= LATTICE_MAX_GAP * np.median(steps))


#: no test-function radius below this many quadrature spacings of its axis: a support then
#: spans more than 3 spacings, so it holds the 3 grid points the assembly asks for at least
#: (a draw with smaller radii stopped discover with an error; every benchmark row's radii
#: are above this, so none changes)
MIN_SUPPORT_SPACINGS = 1.5


def support_floor(axes) -> dict[str, float]:
    """Per axis, :data:`MIN_SUPPORT_SPACINGS` times the quadrature grid's widest spacing."""
    return {
        n: MIN_SUPPORT_SPACINGS * float(np.max(np.diff(np.asarray(a, dtype=float))))
        for n, a in axes.items()
        if len(a) > 1
    }


def _draw_tests(bounds, n: int, eta, seed: int, bump: str, scale: str, radius=None, floor=None):
    from ..weak import TestFunctionSet

    if scale == "cap":
        return TestFunctionSet.random(
            bounds, n, eta, seed, bump, scale="cap", radius=radius, floor=floor
        )
    if scale == "spectrum":
        return TestFunctionSet.random(
            bounds, n, eta, seed, bump, scale="paper", radius=radius, floor=floor
        )
    return TestFunctionSet.random(bounds, n, eta, seed, bump, scale=scale, floor=floor)


#: draws of candidate test functions tried before giving up on filling a domain
DOMAIN_DRAWS = 40


def points_inside(points: np.ndarray, centers: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """How many of ``points`` (N, d) lie inside each support box ``centers ± radii`` (K, d);
    in blocks of test functions so that no intermediate exceeds about 4 million entries."""
    points = np.asarray(points, dtype=float)
    out = np.zeros(len(centers), dtype=np.int64)
    block = max(1, 4_000_000 // max(1, points.size))
    for s in range(0, len(centers), block):
        c, r = centers[s : s + block, None, :], radii[s : s + block, None, :]
        out[s : s + block] = np.all(np.abs(points[None] - c) < r, axis=-1).sum(axis=1)
    return out


def make_tests(
    bounds,
    n: int,
    eta,
    seed: int,
    bump: str,
    scale: str,
    radius=None,
    domain=None,
    points=None,
    min_points: int = 0,
    floor=None,
):
    """The test functions for one radii ``scale`` (see :mod:`symweak.discover._config`);
    ``radius`` is the spectral radius that ``"cap"`` and ``"spectrum"`` use; ``floor``
    (:func:`support_floor`) the smallest radius per axis.

    With a ``domain`` (:class:`symweak.Domain`), candidates are drawn in seeded batches and
    only those whose support lies wholly inside the domain (in space) are kept, until ``n``
    are found. Where fewer than a quarter of ``n`` (or 8) fit, the radii are halved (up to
    twice, with a warning) before it is an error that says how many fit; ``how`` records
    how many were drawn and any shrinking.

    With ``points`` (the observations' coordinates, (N, d) in the order of ``bounds``) and
    ``min_points`` > 0, a test function is kept only where its support holds at least
    ``min_points`` observations (the surrogate has data nearby). Where every test function
    of the usual draw passes, that draw is returned unchanged; otherwise the ones that pass
    are topped up from seeded batches, and ``how`` says how many were kept of how many."""
    near = None
    if points is not None and min_points > 0:
        pts = np.asarray(points, dtype=float)

        def near(centers, radii):
            return points_inside(pts, centers, radii) >= min_points

    draw = (bounds, n, eta, seed, bump, scale, radius)
    if domain is None:
        return _near_data(draw, near, min_points, floor)
    return _in_domain(draw, domain, near, min_points, floor)


def _near_data(draw, near, min_points: int, floor):
    """:func:`make_tests` without a domain: the usual draw, topped up where some supports
    hold too few observations (``near``; None: no such test)."""
    bounds, n, eta, seed, bump, scale, radius = draw
    tests = _draw_tests(bounds, n, eta, seed, bump, scale, radius, floor)
    if near is None:
        return tests
    ok = near(tests.centers, tests.radii)
    if ok.all():
        return tests
    need = min(n, max(8, n // 4))
    label = f"with >= {min_points} observations in the support"
    found, tried = _inside(
        bounds, n, eta, seed, bump, scale, radius, near, "nearby", label,
        first=(tests, ok), floor=floor,
    )  # fmt: skip
    if found is None or len(found) < need:
        raise SymweakError(
            f"Only {0 if found is None else len(found)} of {tried} test functions drawn "
            f"hold at least {min_points} observations in their support; lower min_points, "
            "give larger radii (eta), or check the coordinates of the data."
        )
    log.info("symweak: %d test functions (%s)", len(found), found.how)
    return found


def _in_domain(draw, domain, near, min_points: int, floor):
    """:func:`make_tests` inside a domain: seeded batches of supports wholly inside it,
    radii halved up to twice where too few fit."""
    bounds, n, eta, seed, bump, scale, radius = draw
    need = min(n, max(8, n // 4))
    drawn = 0
    index = [tuple(bounds).index(nm) for nm in domain.names]

    def accept(centers, radii):
        ok = domain.box_inside(centers[:, index], radii[:, index])
        return ok if near is None else ok & near(centers, radii)

    label = "inside the domain"
    if near is not None:
        label += f" with >= {min_points} observations in the support"
    for shrink in (1.0, 0.5, 0.25):
        eta_s = (eta[0] * shrink, eta[1] * shrink)
        radius_s = None if radius is None else {k: v * shrink for k, v in radius.items()}
        tests, tried = _inside(
            bounds, n, eta_s, seed, bump, scale, radius_s, accept, "domain", label, floor=floor
        )
        drawn += tried
        if tests is not None and len(tests) >= need:
            if shrink < 1:
                log.warning(
                    "symweak: test-function radii shrunk to %g of the default so that "
                    "supports fit inside the domain",
                    shrink,
                )
                tests = dataclasses.replace(tests, how=f"{tests.how}, radii × {shrink:g}")
            log.info("symweak: %d test functions inside the domain (%s)", len(tests), tests.how)
            return tests
    raise SymweakError(
        f"Only {0 if tests is None else len(tests)} of {drawn} test functions drawn fit inside "
        f"the domain ({domain.describe()}), even with radii a quarter of the default; give "
        "smaller radii (eta) or fewer test functions, or check the domain."
    )


def _inside(
    bounds, n, eta, seed, bump, scale, radius, accept, stream, label, first=None, floor=None
):
    """Up to ``n`` test functions that ``accept(centers, radii)`` passes (None if none), and
    how many were drawn: from seeded batches of stream ``stream``, after the ones of
    ``first`` = (a drawn set, its acceptance mask) where given; ``label`` says in ``how``
    what was asked of them."""
    from .._seeds import child_seed
    from ..weak import TestFunctionSet

    names = tuple(bounds)
    centers, radii, drawn, found = [], [], 0, 0
    if first is not None:
        batch, ok = first
        centers.append(batch.centers[ok])
        radii.append(batch.radii[ok])
        drawn, found = len(batch), int(ok.sum())
        first = batch
    for attempt in range(DOMAIN_DRAWS):
        if found >= n:
            break
        batch = _draw_tests(
            bounds, max(2 * n, 64), eta, child_seed(seed, stream) + 7 * attempt, bump, scale,
            radius, floor,
        )  # fmt: skip
        if first is None:
            first = batch
        ok = accept(batch.centers, batch.radii)
        drawn += len(batch)
        centers.append(batch.centers[ok])
        radii.append(batch.radii[ok])
        found += int(ok.sum())
    if not found:
        return None, drawn
    kept = min(found, n)
    how = f"{first.how}, {label} ({kept} kept of {drawn} drawn)"
    cs, rs = np.concatenate(centers)[:kept], np.concatenate(radii)[:kept]
    return TestFunctionSet(names, cs, rs, first.bump, how), drawn

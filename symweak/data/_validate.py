"""Checks that run before anything else, each with a message that says what, where and how.

All checks raise :class:`symweak.DataError`. Nothing here changes or drops data.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._errors import DataError
from .._names import validate_coord_name, validate_field_name

__all__ = [
    "as_axis",
    "as_coordinate",
    "as_field",
    "check_extent",
    "check_finite",
    "check_float32",
    "check_names",
    "check_same_length",
    "check_spread",
    "require_points",
]


def _where(coords: Mapping[str, np.ndarray], index: int) -> str:
    parts = ", ".join(f"{n}={float(c[index]):.6g}" for n, c in coords.items())
    return f"point {index} ({parts})" if parts else f"point {index}"


def check_names(coord_names, field_names) -> None:
    """Coordinates are single letters, fields valid names, no overlaps, time named ``t``."""
    from .._errors import IRError

    try:
        for name in coord_names:
            try:
                validate_coord_name(name)
            except IRError as exc:
                usual = "t" if str(name).lower().startswith("t") else "x"
                raise IRError(
                    f"{exc} Map it with rename={{{name!r}: {usual!r}}} (Observations, load)."
                ) from None
        for name in field_names:
            validate_field_name(name)
    except IRError as exc:
        raise DataError(str(exc)) from None
    clash = set(coord_names) & set(field_names)
    if clash:
        raise DataError(f"{sorted(clash)} is used both as a coordinate and as a field; rename one.")
    if not field_names:
        raise DataError("No fields given; pass at least one, e.g. fields={'u': u}.")
    if "t" not in coord_names:
        raise DataError(
            f"No time coordinate: coordinates are {list(coord_names)}. symweak needs the time "
            "coordinate to be called 't' (rename it, e.g. coords={'t': time, 'x': x})."
        )
    if len(coord_names) < 2 or len(coord_names) > 4:
        raise DataError(f"Expected t plus 1 to 3 space coordinates, got {list(coord_names)}.")


def _numeric(name: str, kind: str, values) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise DataError(f"{kind} {name!r} is not numeric (dtype {arr.dtype}); pass numbers.")
    if np.issubdtype(arr.dtype, np.bool_):
        raise DataError(
            f"{kind} {name!r} holds booleans (True/False), not measurements; pass numbers "
            f"({name}.astype(float) if 0 and 1 are what you mean)."
        )
    return arr


def as_coordinate(name: str, values) -> np.ndarray:
    """A coordinate array: 1-D, real, float64 (a copy)."""
    arr = _numeric(name, "Coordinate", values)
    if np.iscomplexobj(arr):
        raise DataError(f"Coordinate {name!r} is complex; coordinates must be real.")
    if arr.ndim != 1:
        raise DataError(
            f"Coordinate {name!r} has shape {arr.shape}; scattered observations need 1-D arrays "
            "of equal length (use Observations.from_grid for gridded data)."
        )
    return np.array(arr, dtype=np.float64, copy=True)


def as_field(name: str, values, shape=None) -> np.ndarray:
    """A field array (real float64 or complex128), a copy, with the expected shape."""
    arr = _numeric(name, "Field", values)
    dtype = np.complex128 if np.iscomplexobj(arr) else np.float64
    arr = np.array(arr, dtype=dtype, copy=True)
    if shape is not None and arr.shape != tuple(shape):
        raise DataError(f"Field {name!r} has shape {arr.shape}, expected {tuple(shape)}.")
    return arr


def as_axis(name: str, values) -> np.ndarray:
    """A grid axis: 1-D, real, at least 2 values, strictly increasing."""
    shape = np.shape(values)
    if len(shape) != 1:
        raise DataError(
            f"Grid axis {name!r} has shape {shape}; an axis is a 1-D array of the {name} "
            f"values of the grid (e.g. {name}=np.linspace(0, 1, 101))."
        )
    arr = as_coordinate(name, values)
    if arr.size < 2:
        raise DataError(f"Grid axis {name!r} has {arr.size} value(s); it needs at least 2.")
    check_finite({name: arr}, {}, what="grid axis")
    steps = np.diff(arr)
    bad = np.flatnonzero(steps <= 0)
    if bad.size:
        i = int(bad[0])
        raise DataError(
            f"Grid axis {name!r} is not strictly increasing: {name}[{i}] = {arr[i]:.6g} and "
            f"{name}[{i + 1}] = {arr[i + 1]:.6g} ({bad.size} such step(s)). Sort the axis and the "
            f"data along it together (order = np.argsort({name})), and remove repeated values."
        )
    return arr


def check_same_length(arrays: Mapping[str, np.ndarray]) -> int:
    lengths = {n: a.shape[0] for n, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        first, n0 = next(iter(lengths.items()))
        diff = [(n, m) for n, m in lengths.items() if m != n0]
        name, m = diff[0]
        raise DataError(
            f"Arrays have different lengths: {name!r} has {m} values but {first!r} has {n0} "
            f"(all lengths: {lengths}). Every coordinate and field needs one value per point."
        )
    return next(iter(lengths.values()))


def check_finite(
    coords: Mapping[str, np.ndarray], fields: Mapping[str, np.ndarray], what="", axes=None
) -> None:
    """No NaN or inf anywhere; report how many and where the first is."""
    for kind, arrays in (("coordinate", coords), ("field", fields)):
        for name, arr in arrays.items():
            bad = ~np.isfinite(arr)
            if bad.any():
                count = int(bad.sum())
                nan = int(np.isnan(arr).sum())
                flat = np.flatnonzero(bad.ravel())
                first = int(flat[0])
                if arr.ndim == 1 and coords and all(c.shape == arr.shape for c in coords.values()):
                    where = _where(coords, first)
                else:
                    index = tuple(int(i) for i in np.unravel_index(first, arr.shape))
                    where = f"index {index}"
                    if axes is not None and len(axes) == arr.ndim:
                        pos = ", ".join(
                            f"{n}={float(a[i]):.6g}" for (n, a), i in zip(axes.items(), index)
                        )
                        where += f" ({pos})"
                label = what or kind
                raise DataError(
                    f"{label.capitalize()} {name!r} has {count} non-finite value(s) "
                    f"({nan} NaN, {count - nan} inf); the first is at {where}. symweak does not "
                    "drop or fill them: remove those points (e.g. keep = np.isfinite(u)) or "
                    "fill them before building the observations."
                )


#: largest magnitude accepted in coordinates and fields: cubes of the fields (library terms)
#: and products of coordinates stay finite in float64
MAX_MAGNITUDE = 1e100
#: smallest largest-magnitude accepted in a field: its squares and cubes stay normal floats
MIN_MAGNITUDE = 1e-100
#: a coordinate's extent relative to its largest magnitude below this leaves too few digits
MIN_RELATIVE_EXTENT = 1e-9


def check_magnitude(coords: Mapping[str, np.ndarray], fields: Mapping[str, np.ndarray]) -> None:
    """No value so large that powers of it overflow float64 (u^3 in a library, σ² in the
    noise estimate): say which array and how to rescale."""
    for kind, arrays in (("coordinate", coords), ("field", fields)):
        for name, arr in arrays.items():
            if not arr.size:
                continue
            largest = float(np.max(np.abs(arr)))
            if largest > MAX_MAGNITUDE:
                raise DataError(
                    f"{kind.capitalize()} {name!r} has values up to {largest:.3g} in magnitude; "
                    f"symweak works in float64 and powers of such values overflow (limit "
                    f"{MAX_MAGNITUDE:.0e}). Rescale it first (e.g. {name} / {largest:.0e}); the "
                    "discovered coefficients then refer to the rescaled variable."
                )
            if kind == "field" and 0.0 < largest < MIN_MAGNITUDE:
                raise DataError(
                    f"Field {name!r} has values only up to {largest:.3g} in magnitude; symweak "
                    f"works in float64 and products of such values underflow to 0 (limit "
                    f"{MIN_MAGNITUDE:.0e}). Rescale it first (e.g. {name} * {1 / largest:.0e}); "
                    "the discovered coefficients then refer to the rescaled variable."
                )


def check_extent(coords: Mapping[str, np.ndarray]) -> None:
    for name, arr in coords.items():
        if arr.size and float(arr.max()) == float(arr.min()):
            raise DataError(
                f"Coordinate {name!r} has zero extent: every point has {name} = {arr[0]:.6g}. "
                f"A PDE in {name} cannot be identified; drop the coordinate or add data that "
                f"varies in {name}."
            )
        if not arr.size:
            continue
        extent = float(arr.max()) - float(arr.min())
        scale = float(np.max(np.abs(arr)))
        if extent < MIN_MAGNITUDE:
            raise DataError(
                f"Coordinate {name!r} spans only {extent:.3g}; symweak works in float64 and "
                f"powers of such spacings underflow (limit {MIN_MAGNITUDE:.0e}). Rescale it "
                f"first (e.g. {name} * {1 / extent:.0e}); coefficients then refer to the "
                "rescaled coordinate."
            )
        if extent < MIN_RELATIVE_EXTENT * scale:
            digits = max(round(16 + np.log10(extent / scale)), 0)
            raise DataError(
                f"Coordinate {name!r} spans {extent:.3g} around {scale:.3g}: float64 keeps only "
                f"about {digits} digit(s) of the differences between points. Subtract an offset "
                f"first (e.g. {name} - {name}.min()); the equation does not change."
            )


#: the network method trains in float32: a coordinate's float32 step at its largest
#: magnitude must stay below this share of its span. Time as Unix seconds (1.7e9, steps of
#: 128 s) over 600 s merged 41 times into 6, and decay with diffusion came back as −0.0026 u²
FLOAT32_STEP = 1e-3


def check_float32(coords: Mapping[str, np.ndarray]) -> None:
    """Coordinates far from zero relative to their span lose their differences in float32,
    the surrogate's precision; say so before training, with the fix."""
    for name, arr in coords.items():
        if not arr.size:
            continue
        extent = float(arr.max()) - float(arr.min())
        scale = float(np.max(np.abs(arr)))
        step = float(np.spacing(np.float32(scale)))
        if step > FLOAT32_STEP * extent:
            raise DataError(
                f"Coordinate {name!r} spans {extent:.3g} around {scale:.3g}: the network "
                f"method trains in float32, which places {name} there only to within "
                f"{step:.3g} (more than {FLOAT32_STEP:.1%} of its span), so nearby values "
                f"merge. Subtract an offset first (e.g. {name} - {name}.min()); the equation "
                "does not change."
            )


def check_spread(coords: Mapping[str, np.ndarray]) -> None:
    """Scattered points must fill a region of (t, x, ...), not lie on one line or plane
    (a probe moving at constant speed, a space-time diagonal): derivatives across it are
    not determined."""
    names = list(coords)
    if len(names) < 2:
        return
    stacked = np.stack([coords[n] for n in names], axis=1)
    lo, hi = stacked.min(axis=0), stacked.max(axis=0)
    unit = (stacked - (lo + hi) / 2) / (hi - lo)
    _, sv, vt = np.linalg.svd(unit - unit.mean(axis=0), full_matrices=False)
    if sv[-1] > 1e-8 * sv[0]:
        return
    rank = int(np.sum(sv > 1e-8 * sv[0]))
    where = ", ".join(names)
    shape = {1: "one line", 2: "one plane"}.get(rank, f"a {rank}-dimensional subspace")
    relation = ""
    normal = vt[-1] / (hi - lo)  # normal . (c - centre) = 0 in the user's units
    if len(names) == 2 and abs(vt[-1][1]) > 1e-8:
        centre = stacked.mean(axis=0)
        slope = -normal[0] / normal[1]
        offset = centre[1] - slope * centre[0]
        if abs(offset) < 1e-9 * (hi[1] - lo[1]):
            offset = 0.0
        rhs = f"{slope:.4g} {names[0]}" + (
            f" {'+' if offset > 0 else '-'} {abs(offset):.4g}" if offset else ""
        )
        relation = f" ({names[1]} = {rhs})"
    raise DataError(
        f"All {len(stacked)} points lie on {shape} in ({where}){relation}: a PDE in {where} "
        "needs points spread over a region of that space, not along a line (e.g. one probe "
        "moving at constant speed). Add points off it."
    )


def require_points(n_points: int, n_unknowns: int, what: str) -> None:
    """Fewer points than unknowns cannot determine the model."""
    if n_points < n_unknowns:
        raise DataError(
            f"Only {n_points} observation(s) for {n_unknowns} unknowns ({what}). Provide more "
            "points, or reduce the model (fewer terms, lower orders)."
        )

"""Reading and writing observations: ``.npz``, ``.mat``, ``.h5``/``.hdf5``, ``.nc`` and xarray.

One table maps an extension to a (reader, writer) pair; a new format is one entry.

Files written by symweak carry ``symweak_layout`` ("grid" or "scattered") and read back
exactly. Foreign files are read by name conventions:

* coordinates are arrays named ``t``, ``x``, ``y``, ``z`` (PDE-FIND's ``tt`` is ``t``);
* every other numeric array is a field (PDE-FIND's ``usol``/``uu`` are ``u``);
* an N-D field is gridded; its axis order is decided from the shapes (``usol`` of shape
  (256, 101) with len(x) = 256 and len(t) = 101 is read as (x, t)), and the choice is
  recorded in ``obs.meta["layout"]`` and logged. Equal axis lengths are ambiguous: pass
  ``layout="t,x"``.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import DataError
from ._axes import Grid
from ._observations import Observations
from ._tables import read_table
from ._writers import WRITERS, _require, save

__all__ = ["FORMATS", "from_xarray", "load", "observations_from_arrays", "save"]

log = logging.getLogger("symweak.data")

_COORD_ALIASES = {"t": "t", "tt": "t", "time": "t", "x": "x", "y": "y", "z": "z"}
_FIELD_ALIASES = {"usol": "u", "uu": "u", "U": "u"}
#: |imag| below this fraction of |real| is treated as round-off (reported, not silent).
IMAG_TOL = 1e-5


# ---------------------------------------------------------------------------- helpers
def _text(value) -> str:
    arr = np.asarray(value)
    if arr.dtype.kind in "SU":
        return str(arr.reshape(-1)[0]) if arr.size else ""
    if arr.dtype.kind == "O":
        return str(arr.reshape(-1)[0])
    return str(arr)


def _from_symweak(arrays: Mapping[str, np.ndarray], source: str) -> Observations:
    layout = _text(arrays["symweak_layout"])
    meta = json.loads(_text(arrays["symweak_meta"])) if "symweak_meta" in arrays else {}
    meta["source"] = source
    names = [k for k in arrays if k not in ("symweak_layout", "symweak_meta", "symweak_domain")]
    obs = _from_symweak_layout(arrays, names, layout, meta, source)
    if "symweak_domain" in arrays:
        from ._domain import Domain

        obs = obs.with_domain(Domain.from_json(_text(arrays["symweak_domain"]), source))
    return obs


def _from_symweak_layout(arrays, names, layout, meta, source) -> Observations:
    coord_names = [n for n in names if len(n) == 1 and not n.startswith("grid") and n in "txyz"]
    if layout == "grid":
        axes = {n: np.asarray(arrays[n]).ravel() for n in ("t", "x", "y", "z") if n in coord_names}
        fields = {
            n: np.asarray(arrays[n]) for n in names if n not in axes and not n.endswith("_clean")
        }
        clean = {n[: -len("_clean")]: np.asarray(arrays[n]) for n in names if n.endswith("_clean")}
        t = axes.pop("t")
        return Observations.from_grid(t=t, fields=fields, clean=clean or None, meta=meta, **axes)
    if layout != "scattered":
        raise DataError(f"{source}: unknown symweak_layout {layout!r}.")
    coords = {n: np.asarray(arrays[n]).ravel() for n in ("t", "x", "y", "z") if n in coord_names}
    grid_axes = {
        n[5:]: np.asarray(arrays[n]).ravel()
        for n in names
        if n.startswith("grid_") and n != "grid_index"
    }
    skip = set(coords) | {f"grid_{n}" for n in grid_axes} | {"grid_index"}
    fields = {
        n: np.asarray(arrays[n]).ravel()
        for n in names
        if n not in skip and not n.endswith("_clean")
    }
    clean = {
        n[: -len("_clean")]: np.asarray(arrays[n]).ravel() for n in names if n.endswith("_clean")
    }
    grid = Grid({n: grid_axes[n] for n in coords}) if grid_axes else None
    index = np.asarray(arrays["grid_index"]).ravel().astype(np.int64) if grid is not None else None
    return Observations(coords, fields, clean=clean or None, grid=grid, grid_index=index, meta=meta)


def _real_if_negligible(
    name: str, arr: np.ndarray, keep_complex: bool, notes: list[str]
) -> np.ndarray:
    if not np.iscomplexobj(arr) or keep_complex:
        return arr
    imag = float(np.max(np.abs(arr.imag))) if arr.size else 0.0
    real = float(np.max(np.abs(arr.real))) if arr.size else 0.0
    if imag <= IMAG_TOL * max(real, np.finfo(float).tiny):
        note = (
            f"{name} is stored as complex but its imaginary part is round-off "
            f"(max |imag| = {imag:.3g} <= {IMAG_TOL:g} * max |real|); kept the real part "
            "(pass keep_complex=True to keep it complex)"
        )
        notes.append(note)
        log.info(note)
        return np.ascontiguousarray(arr.real)
    return arr


def _choose_layout(
    field_name: str, shape, coords: Mapping[str, np.ndarray], layout
) -> tuple[str, ...]:
    if layout is not None:
        order = tuple(n.strip() for n in (layout.split(",") if isinstance(layout, str) else layout))
        if sorted(order) != sorted(coords):
            raise DataError(f"layout={layout!r} must name each coordinate {sorted(coords)} once.")
        if tuple(coords[n].size for n in order) != tuple(shape):
            raise DataError(
                f"layout={layout!r} gives shape {tuple(coords[n].size for n in order)} but "
                f"{field_name!r} has shape {tuple(shape)}."
            )
        return order
    matches = [
        perm
        for perm in itertools.permutations(coords)
        if tuple(coords[n].size for n in perm) == tuple(shape)
    ]
    if not matches:
        sizes = {n: a.size for n, a in coords.items()}
        raise DataError(
            f"Field {field_name!r} has shape {tuple(shape)}, which matches no order of the "
            f"coordinate lengths {sizes}."
        )
    if len(matches) > 1:
        raise DataError(
            f"Field {field_name!r} has shape {tuple(shape)} and several coordinates have the same "
            f"length, so its axis order is ambiguous; pass layout='t,x' (the order of its axes)."
        )
    return matches[0]


def observations_from_arrays(
    arrays: Mapping[str, Any],
    source: str = "arrays",
    *,
    layout=None,
    keep_complex: bool = False,
    fields: list[str] | None = None,
) -> Observations:
    """Observations from a dict of arrays by symweak's or PDE-FIND's naming conventions."""
    arrays = {k: v for k, v in arrays.items() if not k.startswith("__")}
    if "symweak_layout" in arrays:
        return _from_symweak(arrays, source)
    coords: dict[str, np.ndarray] = {}
    raw_fields: dict[str, np.ndarray] = {}
    renamed = []
    for key, value in arrays.items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "biufc" or arr.size == 0:
            continue
        if key in _COORD_ALIASES:
            name = _COORD_ALIASES[key]
            if name in coords:
                raise DataError(f"{source}: two arrays give coordinate {name!r}.")
            coords[name] = arr.ravel()
            if key != name:
                renamed.append(f"{key} -> {name}")
        else:
            name = _FIELD_ALIASES.get(key, key)
            if name != key:
                renamed.append(f"{key} -> {name}")
            raw_fields[name] = arr
    if fields is not None:
        missing = [f for f in fields if f not in raw_fields]
        if missing:
            raise DataError(f"{source}: no field(s) {missing}; the file has {sorted(raw_fields)}.")
        raw_fields = {f: raw_fields[f] for f in fields}
    if "t" not in coords:
        raise DataError(
            f"{source}: no time coordinate; expected an array named 't' (or 'tt'). "
            f"Arrays found: {sorted(arrays)}."
        )
    if not raw_fields:
        raise DataError(f"{source}: no field arrays found (arrays: {sorted(arrays)}).")
    notes: list[str] = [f"renamed {', '.join(renamed)}"] if renamed else []
    raw_fields = {n: _real_if_negligible(n, a, keep_complex, notes) for n, a in raw_fields.items()}
    gridded = [n for n, a in raw_fields.items() if a.squeeze().ndim >= 2]
    n_points = coords["t"].size
    if gridded:
        if len(gridded) != len(raw_fields):
            raise DataError(f"{source}: fields {gridded} are gridded but others are not.")
        orders = {}
        for name, arr in raw_fields.items():
            arr = arr.squeeze()
            orders[name] = _choose_layout(name, arr.shape, coords, layout)
        target = ("t", *[n for n in ("x", "y", "z") if n in coords])
        grid_fields = {}
        for name, arr in raw_fields.items():
            order = orders[name]
            grid_fields[name] = np.transpose(arr.squeeze(), [order.index(n) for n in target])
        chosen = {n: "(" + ", ".join(o) + ")" for n, o in orders.items()}
        layout_note = "; ".join(
            f"{n} {raw_fields[n].squeeze().shape} read as {o}" for n, o in chosen.items()
        )
        log.info("%s: %s", source, layout_note)
        meta = {"source": source, "layout": layout_note}
        if notes:
            meta["notes"] = notes
        space = {n: coords[n] for n in target[1:]}
        return Observations.from_grid(t=coords["t"], fields=grid_fields, meta=meta, **space)
    for name, arr in raw_fields.items():
        if arr.ravel().size != n_points:
            raise DataError(
                f"{source}: field {name!r} has {arr.size} values but t has {n_points}; scattered "
                "data needs one value per point."
            )
    meta = {"source": source, "layout": "scattered"}
    if notes:
        meta["notes"] = notes
    return Observations(coords, {n: a.ravel() for n, a in raw_fields.items()}, meta=meta)


# ---------------------------------------------------------------------------- formats
def _read_npz(path: Path, **kw) -> Observations:
    import zipfile

    try:
        # the file is opened here so that it is closed when numpy fails on it
        with open(path, "rb") as fh:
            data = np.load(fh, allow_pickle=False)
            if not hasattr(data, "files"):
                raise DataError(
                    f"{path.name} holds one unnamed array, not named arrays; write it with "
                    "numpy.savez(path, t=t, x=x, u=u)."
                )
            with data:
                arrays = {k: data[k] for k in data.files}
    except DataError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise DataError(
            f"{path.name}: not a readable .npz file ({type(exc).__name__}: {exc}); it may be "
            "truncated or not written by numpy.savez. Write it again."
        ) from None
    return observations_from_arrays(arrays, path.name, **kw)


def _read_mat(path: Path, **kw) -> Observations:
    import scipy.io

    try:
        arrays = scipy.io.loadmat(str(path))
    except NotImplementedError:  # MATLAB v7.3 files are HDF5
        return _read_h5(path, **kw)
    except (ValueError, TypeError, OSError, scipy.io.matlab.MatReadError) as exc:
        raise DataError(f"{path.name}: not a readable MATLAB file ({exc}).") from None
    return observations_from_arrays(arrays, path.name, **kw)


def _read_h5(path: Path, **kw) -> Observations:
    h5py = _require("h5py")
    arrays = {}
    try:
        with h5py.File(path, "r") as f:
            for key, item in f.items():
                if isinstance(item, h5py.Dataset):
                    value = item[()]
                    if isinstance(value, bytes):
                        value = np.array(value.decode())
                    arrays[key] = value
            for key, value in f.attrs.items():
                arrays[key] = np.array(value.decode() if isinstance(value, bytes) else value)
    except OSError as exc:
        raise DataError(f"{path.name}: not a readable HDF5 file ({exc}).") from None
    # MATLAB v7.3 stores arrays transposed; names tell us nothing more, shapes decide.
    return observations_from_arrays(arrays, path.name, **kw)


def _read_nc(path: Path, **kw) -> Observations:
    xr = _require("xarray")
    try:
        ds = xr.open_dataset(path)
    except Exception as exc:  # xarray raises many types for unreadable files
        raise DataError(f"{path.name}: not a readable netCDF file ({exc}).") from None
    with ds:
        ds.load()
        return from_xarray(
            ds, source=path.name, **{k: v for k, v in kw.items() if k in ("fields",)}
        )


def from_xarray(
    obj, *, source: str = "xarray", fields: list[str] | None = None, rename=None
) -> Observations:
    """Observations from an xarray ``DataArray`` or ``Dataset`` (dimension names become
    coordinates; ``rename={"time": "t"}`` maps names)."""
    xr = _require("xarray")
    rename = dict(rename or {})
    if isinstance(obj, xr.DataArray):
        name = obj.name if obj.name is not None else "u"
        obj = obj.to_dataset(name=str(name))
    if not isinstance(obj, xr.Dataset):
        raise DataError(f"Expected an xarray DataArray or Dataset, got {type(obj).__name__}.")
    attrs = dict(obj.attrs)
    if attrs.get("symweak_layout") in ("grid", "scattered"):
        arrays: dict[str, Any] = {}
        complex_names = [n for n in str(attrs.get("symweak_complex", "")).split(",") if n]
        for name in complex_names:
            arrays[name] = obj[f"{name}__re"].values + 1j * obj[f"{name}__im"].values
        for name, var in obj.variables.items():
            base = name[:-4] if name.endswith(("__re", "__im")) else None
            if base in complex_names or name.endswith("_dim"):
                continue
            arrays[name] = var.values
        arrays["symweak_layout"] = np.array(attrs["symweak_layout"])
        arrays["symweak_meta"] = np.array(attrs.get("symweak_meta", "{}"))
        if "symweak_domain" in attrs:
            arrays["symweak_domain"] = np.array(attrs["symweak_domain"])
        return _from_symweak(arrays, source)
    if rename:
        obj = obj.rename(rename)
    names = list(fields) if fields is not None else [str(n) for n in obj.data_vars]
    if not names:
        raise DataError(f"{source}: the dataset has no data variables.")
    dims = obj[names[0]].dims
    for n in names[1:]:
        if set(obj[n].dims) != set(dims):
            raise DataError(f"{source}: fields {names[0]!r} and {n!r} have different dimensions.")
    dims = [str(d) for d in dims]
    if "t" not in dims:
        raise DataError(
            f"{source}: dimensions {dims} include no 't'; rename the time dimension, e.g. "
            "from_xarray(ds, rename={'time': 't'})."
        )
    missing = [d for d in dims if d not in obj.coords]
    if missing:
        raise DataError(f"{source}: dimension(s) {missing} have no coordinate values; assign them.")
    order = ["t", *[d for d in dims if d != "t"]]
    axes = {d: np.asarray(obj.coords[d].values, dtype=float) for d in order}
    grid_fields = {n: np.asarray(obj[n].transpose(*order).values) for n in names}
    t = axes.pop("t")
    meta = {"source": source, "layout": "(" + ", ".join(order) + ")"}
    return Observations.from_grid(t=t, fields=grid_fields, meta=meta, **axes)


#: Extension -> (reader, writer). A new format is one entry here.
FORMATS: dict[str, tuple[Callable[..., Observations], Callable[[Observations, Path], None]]] = {
    ".npz": (_read_npz, WRITERS[".npz"]),
    ".mat": (_read_mat, WRITERS[".mat"]),
    ".h5": (_read_h5, WRITERS[".h5"]),
    ".hdf5": (_read_h5, WRITERS[".hdf5"]),
    ".nc": (_read_nc, WRITERS[".nc"]),
    ".csv": (read_table, WRITERS[".csv"]),
    ".parquet": (read_table, WRITERS[".parquet"]),
}


#: the options ``load`` takes per format (the others take ``_ARRAY_OPTIONS``)
_ARRAY_OPTIONS = frozenset({"layout", "keep_complex", "fields"})
_TABLE_OPTIONS = frozenset({"coords", "fields", "rename"})
_OPTIONS = {
    ".csv": _TABLE_OPTIONS | {"encoding"},
    ".parquet": _TABLE_OPTIONS,
    ".nc": frozenset({"fields"}),
}


def _format(path: Path):
    ext = path.suffix.lower()
    if ext not in FORMATS:
        raise DataError(
            f"Unsupported file type {ext or '(no extension)'!r} for {path.name}; supported: "
            f"{', '.join(FORMATS)}, or pass an xarray DataArray/Dataset to symweak.load."
        )
    return FORMATS[ext]


def load(source, **options) -> Observations:
    """Load observations from a file (by extension) or an xarray object.

    Options: ``layout="t,x"`` for ambiguous gridded arrays, ``keep_complex=True`` to keep a
    complex field whose imaginary part is round-off, ``fields=[...]`` to select fields; for
    ``.csv`` and ``.parquet`` tables also ``coords="t,x"`` and ``rename={"time": "t"}``, for
    ``.csv`` ``encoding="latin-1"`` (default UTF-8). Files over 4 GiB are refused unless
    ``max_bytes=`` (a larger limit, or ``None``) says otherwise.
    """
    if isinstance(source, Observations):
        return source
    if isinstance(source, bytes):  # a path in the file system's own encoding
        source = os.fsdecode(source)
    if not isinstance(source, (str, os.PathLike)):
        mod = type(source).__module__
        if mod.startswith("xarray"):
            opts = {k: v for k, v in options.items() if k in ("fields", "rename")}
            return from_xarray(source, **opts)
        raise DataError(
            f"symweak.load takes a file path or an xarray object, got {type(source).__name__}."
        )
    path = Path(source)
    if path.is_dir():
        raise DataError(f"{path} is a directory; give the data file inside it.")
    reader, _ = _format(path)
    max_bytes = options.pop("max_bytes", MAX_BYTES)
    accepted = _OPTIONS.get(path.suffix.lower(), _ARRAY_OPTIONS)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise DataError(
            f"{path.name}: load() option(s) {unknown} do not apply to {path.suffix.lower()} "
            f"files; they take {sorted(accepted)}."
        )
    if not path.is_file():
        raise DataError(f"No such file: {path}.")
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise DataError(
            f"{path.name} is {_size(size)}; symweak reads a whole file into memory and refuses "
            f"files over {_size(max_bytes)} (max_bytes). Subsample it first (e.g. a fraction of "
            "the rows), or pass max_bytes=None to load it anyway (it needs a few times its "
            "size in memory)."
        )
    return reader(path, **options)


#: files larger than this are refused unless load(..., max_bytes=...) says otherwise
MAX_BYTES = 4 * 2**30


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"

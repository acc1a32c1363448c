"""Writing observations to files (``Observations.save``): one writer per format, all from
the same flat layout of arrays. Kept apart from the readers so that ``Observations`` can
save without importing the loaders (which build ``Observations``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import DataError
from .._files import atomic_write

log = logging.getLogger("symweak")

__all__ = ["WRITERS", "save"]


def _meta_dump(meta: Mapping[str, Any]) -> str:
    def default(o):
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    return json.dumps(dict(meta), default=default)


def _to_arrays(obs) -> dict[str, np.ndarray]:
    """The symweak layout as a flat dict of arrays (shared by every writer)."""
    out: dict[str, np.ndarray] = {}
    if obs.is_full_grid:
        out["symweak_layout"] = np.array("grid")
        for name, axis in obs.grid.axes.items():
            out[name] = axis
        for name in obs.fields:
            out[name] = obs.to_grid(name)
            if obs.clean is not None and name in obs.clean:
                out[f"{name}_clean"] = obs.to_grid(name, which="clean")
    else:
        out["symweak_layout"] = np.array("scattered")
        out.update(obs.coords)
        out.update(obs.fields)
        if obs.clean is not None:
            out.update({f"{n}_clean": v for n, v in obs.clean.items()})
        if obs.grid is not None:
            out.update({f"grid_{n}": a for n, a in obs.grid.axes.items()})
            out["grid_index"] = obs.grid_index
    out["symweak_meta"] = np.array(_meta_dump(obs.meta))
    if obs.domain is not None:
        out["symweak_domain"] = np.array(obs.domain.to_json())
    return out


def _write_npz(obs, path: Path) -> None:
    # a file object: numpy would append ".npz" to a name ending in ".NPZ" and write elsewhere
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **_to_arrays(obs))


def _write_mat(obs, path: Path) -> None:
    import scipy.io

    arrays = _to_arrays(obs)
    arrays = {k: (str(v) if v.dtype.kind == "U" else v) for k, v in arrays.items()}
    with open(path, "wb") as fh:  # (as for .npz: no ".mat" appended to "X.MAT")
        scipy.io.savemat(fh, arrays, do_compression=True)


def _require(module: str, extra: str = "io"):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise DataError(
            f"Reading or writing this format needs the `{module}` package: "
            f"pip install 'symweak[{extra}]'."
        ) from None


def _write_h5(obs, path: Path) -> None:
    h5py = _require("h5py")
    with h5py.File(path, "w") as f:
        for key, value in _to_arrays(obs).items():
            if value.dtype.kind == "U":
                f.attrs[key] = str(value)
            else:
                f.create_dataset(key, data=value, compression="gzip" if value.size > 1000 else None)


def _write_nc(obs, path: Path) -> None:
    xr = _require("xarray")
    data_vars: dict[str, Any] = {}
    attrs = {"symweak_meta": _meta_dump(obs.meta)}
    complex_names = []

    def put(name, dims, values):
        if np.iscomplexobj(values):
            complex_names.append(name)
            data_vars[f"{name}__re"] = (dims, values.real)
            data_vars[f"{name}__im"] = (dims, values.imag)
        else:
            data_vars[name] = (dims, values)

    if obs.is_full_grid:
        dims = obs.grid.names
        coords = dict(obs.grid.axes)
        for name in obs.fields:
            put(name, dims, obs.to_grid(name))
            if obs.clean is not None and name in obs.clean:
                put(f"{name}_clean", dims, obs.to_grid(name, which="clean"))
        attrs["symweak_layout"] = "grid"
    else:
        coords = {}
        for name, values in obs.coords.items():
            data_vars[name] = (("point",), values)
        for name, values in obs.fields.items():
            put(name, ("point",), values)
        if obs.clean is not None:
            for name, values in obs.clean.items():
                put(f"{name}_clean", ("point",), values)
        attrs["symweak_layout"] = "scattered"
        if obs.grid is not None:
            for name, axis in obs.grid.axes.items():
                data_vars[f"grid_{name}"] = ((f"grid_{name}_dim",), axis)
            data_vars["grid_index"] = (("point",), obs.grid_index)
    attrs["symweak_complex"] = ",".join(complex_names)
    if obs.domain is not None:
        attrs["symweak_domain"] = obs.domain.to_json()
    ds = xr.Dataset(data_vars, coords=coords, attrs=attrs)
    ds.to_netcdf(path)


def _table(obs) -> dict[str, np.ndarray]:
    if obs.domain is not None:
        log.warning(
            "symweak: a table holds columns only: the domain (%s) is not saved with it; "
            "save as .npz, .h5, .mat or .nc to keep it, or give it again after loading",
            obs.domain.describe(),
        )
    complex_names = [n for n, v in obs.fields.items() if np.iscomplexobj(v)]
    if complex_names:
        raise DataError(
            f"Tables hold real columns; the field(s) {complex_names} are complex. Split them "
            "first: obs.split_complex({...}), or save as .npz/.h5/.nc."
        )
    return {**obs.coords, **obs.fields}


def _write_csv(obs, path: Path) -> None:
    pd = _require("pandas")
    pd.DataFrame(_table(obs)).to_csv(path, index=False, float_format="%.17g")


def _write_parquet(obs, path: Path) -> None:
    pd = _require("pandas")
    _require("pyarrow")
    pd.DataFrame(_table(obs)).to_parquet(path, index=False)


#: Extension -> writer.
WRITERS = {
    ".npz": _write_npz,
    ".mat": _write_mat,
    ".h5": _write_h5,
    ".hdf5": _write_h5,
    ".nc": _write_nc,
    ".csv": _write_csv,
    ".parquet": _write_parquet,
}


def save(obs, path, **_options) -> None:
    """Write ``obs`` to ``path``; the format follows the suffix."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in WRITERS:
        raise DataError(
            f"Unsupported file type {ext or '(no extension)'!r} for {path.name}; supported: "
            f"{', '.join(WRITERS)}, or pass an xarray DataArray/Dataset to symweak.load."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: WRITERS[ext](obs, tmp))

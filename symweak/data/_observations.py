"""``Observations``: scattered or gridded samples of one or more fields.

Developer notes:

* Points are stored *scattered*: one 1-D array per coordinate and per field, all of the
  same length, in the order the user gave them (never reordered).
* When the points come from a rectilinear grid, ``grid`` remembers the axes and
  ``grid_index`` the flat grid index of every point; ``is_full_grid`` says whether every
  grid point is present (then ``to_grid`` rebuilds the arrays). Sampling keeps this.
* ``clean`` holds noise-free values at the same points when they are known (benchmarks),
  for evaluation only; training never sees them.
* Points with equal coordinates are replicates (``replicates``): kept as independent
  samples, never averaged; such points are not recorded on a lattice (a grid index is one
  point's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._errors import DataError
from ._axes import Grid, _order_coords, _renamed
from ._lattice import find_lattice
from ._replicates import Replicates, find_replicates
from ._validate import (
    as_axis,
    as_coordinate,
    as_field,
    check_extent,
    check_finite,
    check_magnitude,
    check_names,
    check_same_length,
    check_spread,
)

__all__ = ["Grid", "Observations"]


class Observations:
    """Observations of fields at scattered points.

    Parameters
    ----------
    coords:
        ``{"t": t, "x": x, ...}`` — 1-D arrays of equal length; ``t`` plus 1 to 3 space
        coordinates (single-letter names).
    fields:
        ``{"u": u, ...}`` — 1-D arrays (real or complex) of the same length.
    clean:
        Optional noise-free values at the same points, for evaluation only.
    grid, grid_index:
        Set by :meth:`from_grid` and sampling: the grid the points lie on and their flat
        indices in it (found by itself when point columns lie on a lattice).
    rename:
        ``{"time": "t", "X": "x"}``: names to map first (symweak writes derivatives as
        ``u_xx``, so coordinates are single letters and time is ``t``).

    Every check runs here, before anything else; arrays are copied, never changed.
    """

    def __init__(
        self,
        coords: Mapping[str, Any],
        fields: Mapping[str, Any],
        *,
        clean: Mapping[str, Any] | None = None,
        grid: Grid | None = None,
        grid_index: np.ndarray | None = None,
        meta: Mapping[str, Any] | None = None,
        check_duplicates: bool = True,
        rename: Mapping[str, str] | None = None,
        domain=None,
    ) -> None:
        if not isinstance(coords, Mapping) or not isinstance(fields, Mapping):
            raise DataError(
                "Observations(coords=..., fields=...) take mappings of names to arrays, e.g. "
                "Observations(coords={'t': t, 'x': x}, fields={'u': u})."
            )
        if rename:
            coords, fields = _renamed(coords, fields, rename)
        names = _order_coords(coords)
        check_names(names, list(fields))
        self.coords: dict[str, np.ndarray] = {n: as_coordinate(n, coords[n]) for n in names}
        self.fields: dict[str, np.ndarray] = {}
        for name, values in fields.items():
            arr = as_field(name, values)
            if arr.ndim != 1:
                raise DataError(
                    f"Field {name!r} has shape {arr.shape}; scattered observations need 1-D "
                    "arrays, one value per point (use Observations.from_grid for gridded data)."
                )
            self.fields[name] = arr
        n = check_same_length({**self.coords, **self.fields})
        if n == 0:
            raise DataError("No observations: the arrays are empty.")
        check_finite(self.coords, self.fields)
        check_magnitude(self.coords, self.fields)
        check_extent(self.coords)
        self.clean: dict[str, np.ndarray] | None = None
        if clean is not None:
            unknown = set(clean) - set(self.fields)
            if unknown:
                raise DataError(f"Clean values given for unknown field(s) {sorted(unknown)}.")
            self.clean = {k: as_field(k, v, (n,)) for k, v in clean.items()}
            check_finite(self.coords, self.clean, what="clean field")
        if (grid is None) != (grid_index is None):
            raise DataError("grid and grid_index must be given together.")
        self.grid = grid
        self.grid_index = None
        #: points that share coordinates (:class:`Replicates`), or None
        self.replicates: Replicates | None = None
        if grid is not None:
            self.grid_index = self._checked_index(grid, grid_index, n)
        elif check_duplicates:
            self.replicates = find_replicates(self.coords)
            found = None if self.replicates else find_lattice(self.coords)
            if found is not None:  # point columns of a simulation grid: record the grid
                self.grid, self.grid_index = Grid(found[0]), found[1]
            else:  # (a lattice with two values per axis spans its whole space)
                check_spread(self.coords)
        #: True when the grid was found in the coordinates (not given)
        self.lattice_found = grid is None and self.grid is not None
        self.meta: dict[str, Any] = dict(meta or {})
        #: where the equation holds in space (:class:`symweak.Domain`), or None: everywhere
        #: in the data's bounding box. Test functions are placed inside it.
        self.domain = None
        if domain is not None:
            self._set_domain(domain)

    def _checked_index(self, grid: Grid, grid_index, n: int) -> np.ndarray:
        """``grid_index`` checked against ``grid`` (one distinct index per point), copied."""
        idx = np.asarray(grid_index)
        if idx.shape != (n,) or not np.issubdtype(idx.dtype, np.integer):
            raise DataError("grid_index must hold one integer grid index per point.")
        if grid.names != tuple(self.coords):
            raise DataError(f"Grid axes {grid.names} differ from coordinates {tuple(self.coords)}.")
        if idx.size and (idx.min() < 0 or idx.max() >= grid.size):
            raise DataError("grid_index holds indices outside the grid.")
        # one mark per grid point (linear; np.unique sorted or hashed 13 M indices of a 2-D
        # full grid in seconds, three times per discovery)
        seen = np.zeros(grid.size, dtype=bool)
        seen[idx] = True
        if np.count_nonzero(seen) != idx.size:
            raise DataError("grid_index repeats a grid point.")
        return idx.astype(np.int64, copy=True)

    def _set_domain(self, domain) -> None:
        from ._domain import Domain

        if not isinstance(domain, Domain):
            raise DataError(
                f"domain must be a symweak.Domain (Domain.intervals, .polygon, .mask or "
                f".covered), got {type(domain).__name__}."
            )
        domain.check_data(self)
        self.domain = domain

    def with_domain(self, domain) -> Observations:
        """The same observations with a domain (see :class:`symweak.Domain`); ``"covered"``
        takes the region the data cover (:meth:`Domain.covered`)."""
        from ._domain import Domain

        if isinstance(domain, str) and domain == "covered":
            domain = Domain.covered(self)
        out = self._replace()
        out.domain = None
        out._set_domain(domain)
        return out

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_grid(
        cls,
        data=None,
        *,
        t,
        x=None,
        y=None,
        z=None,
        name: str = "u",
        fields: Mapping[str, Any] | None = None,
        clean: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        **axes,
    ) -> Observations:
        """Observations on a full rectilinear grid.

        ``data`` has shape ``(len(t), len(x)[, len(y)[, len(z)]])``; several fields go in
        ``fields={"u": u, "v": v}``. Axes must be strictly increasing. Other single-letter
        space axes can be given as keywords.
        """
        space = {k: v for k, v in (("x", x), ("y", y), ("z", z)) if v is not None}
        space.update(axes)
        if not space:
            raise DataError("from_grid needs at least one space axis, e.g. x=...")
        all_axes = {"t": t, **space}
        check_names(list(all_axes), [name] if fields is None else list(fields))
        grid = Grid({n: as_axis(n, a) for n, a in all_axes.items()})
        if fields is None:
            if data is None:
                raise DataError("from_grid needs the data array (or fields={...}).")
            fields = {name: data}
        elif data is not None:
            raise DataError("Give either the data array or fields={...}, not both.")
        shape = grid.shape
        order = "(" + ", ".join(grid.names) + ")"
        flat = {}
        for fname, values in fields.items():
            arr = np.asarray(values)
            if arr.shape != shape:
                hint = ""
                if arr.ndim == 2 and arr.shape == shape[::-1]:
                    hint = f" It looks transposed: pass {fname}.T."
                raise DataError(
                    f"Field {fname!r} has shape {arr.shape} but the axes {order} give "
                    f"{shape}.{hint}"
                )
            flat[fname] = as_field(fname, arr).ravel()
        check_finite({}, {k: v.reshape(shape) for k, v in flat.items()}, axes=grid.axes)
        clean_flat = None
        if clean is not None:
            clean_flat = {k: as_field(k, v, shape).ravel() for k, v in clean.items()}
        points = grid.points()
        return cls(
            points,
            flat,
            clean=clean_flat,
            grid=grid,
            grid_index=np.arange(grid.size, dtype=np.int64),
            meta=meta,
        )

    # ------------------------------------------------------------------ basic facts
    def __len__(self) -> int:
        return int(next(iter(self.coords.values())).shape[0])

    @property
    def coord_names(self) -> tuple[str, ...]:
        return tuple(self.coords)

    @property
    def space_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.coords if n != "t")

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(self.fields)

    @property
    def ndim_space(self) -> int:
        return len(self.coords) - 1

    @property
    def bounds(self) -> dict[str, tuple[float, float]]:
        return {n: (float(a.min()), float(a.max())) for n, a in self.coords.items()}

    @property
    def is_complex(self) -> bool:
        return any(np.iscomplexobj(v) for v in self.fields.values())

    @property
    def is_full_grid(self) -> bool:
        return self.grid is not None and len(self) == self.grid.size

    @property
    def ratio(self) -> float:
        """Sampling ratio r = N_data / N_grid (1.0 for scattered data with no grid)."""
        return len(self) / self.grid.size if self.grid is not None else 1.0

    def field(self, name: str) -> np.ndarray:
        """The values of field ``name`` (with a clear error for unknown names)."""
        if name not in self.fields:
            raise DataError(f"Unknown field {name!r}; the observations have {list(self.fields)}.")
        return self.fields[name]

    def coord(self, name: str) -> np.ndarray:
        if name not in self.coords:
            raise DataError(
                f"Unknown coordinate {name!r}; the observations have {list(self.coords)}."
            )
        return self.coords[name]

    def to_grid(self, name: str, which: str = "fields") -> np.ndarray:
        """A field on the full grid (requires ``is_full_grid``)."""
        if not self.is_full_grid:
            raise DataError(
                "These observations do not fill a grid "
                f"({len(self)} points{'' if self.grid is None else f' of {self.grid.size}'}); "
                "to_grid needs every grid point."
            )
        source = self.fields if which == "fields" else (self.clean or {})
        if name not in source:
            raise DataError(f"No {which} values for {name!r}; have {list(source)}.")
        out = np.empty(self.grid.size, dtype=source[name].dtype)
        out[self.grid_index] = source[name]
        return out.reshape(self.grid.shape)

    def describe(self) -> str:
        bounds = ", ".join(f"{n} in [{lo:.6g}, {hi:.6g}]" for n, (lo, hi) in self.bounds.items())
        fields = ", ".join(
            f"{n} ({'complex' if np.iscomplexobj(v) else 'real'})" for n, v in self.fields.items()
        )
        if self.replicates is not None:
            lines = [f"{self.replicates.describe(len(self))}; {bounds}; fields: {fields}"]
            spread = ", ".join(
                f"{f} {self.replicates.spread(v):.3g} ({100 * r:.3g}% of its std)"
                for (f, v), r in zip(self.fields.items(), self.replicate_noise().values())
            )
            lines.append(f"replicate spread: {spread}")
        elif self.lattice_found:  # say what was found in the coordinates
            shape = " × ".join(map(str, self.grid.shape))
            filled = "complete" if self.is_full_grid else f"{100 * self.ratio:.3g}% filled"
            lines = [f"{len(self)} points on a {shape} grid ({filled}); {bounds}; fields: {fields}"]
        else:
            lines = [f"{len(self)} points, {self._kind()}; {bounds}; fields: {fields}"]
        if self.domain is not None:
            lines.append(f"domain: {self.domain.describe()}")
        if "noise" in self.meta:
            lines.append(f"noise sigma_NR = {self.meta['noise']}")
        if "source" in self.meta:
            lines.append(f"source: {self.meta['source']}")
        return "\n".join(lines)

    def replicate_noise(self) -> dict[str, float]:
        """``{field: spread of the replicates / standard deviation of the field}`` (see
        :class:`Replicates`); empty when no coordinate is measured twice."""
        return {} if self.replicates is None else self.replicates.noise(self.fields)

    def _kind(self) -> str:
        if self.is_full_grid:
            return f"full grid {'x'.join(map(str, self.grid.shape))}"
        if self.grid is not None:
            return f"{100 * self.ratio:.3g}% of a {'x'.join(map(str, self.grid.shape))} grid"
        return "scattered"

    def __repr__(self) -> str:
        return f"<Observations {self.describe().splitlines()[0]}>"

    # ------------------------------------------------------------------ derived sets
    def _replace(self, *, fields=None, clean=..., index=None, meta=None) -> Observations:
        sel = slice(None) if index is None else index
        coords = {n: a[sel] for n, a in self.coords.items()}
        flds = {n: a[sel] for n, a in (fields or self.fields).items()}
        if clean is ...:
            clean = None if self.clean is None else {n: a[sel] for n, a in self.clean.items()}
        gi = None if self.grid_index is None else self.grid_index[sel]
        out = Observations(
            coords,
            flds,
            clean=clean,
            grid=self.grid,
            grid_index=gi,
            meta={**self.meta, **(meta or {})},
            check_duplicates=False,
        )
        out.domain = self.domain  # checked against the whole set; a subset keeps it
        if self.replicates is not None:
            out.replicates = find_replicates(coords)
        return out

    def subset(self, index) -> Observations:
        """The points selected by an integer index array or boolean mask (order kept)."""
        index = np.asarray(index)
        if index.dtype == bool:
            if index.shape != (len(self),):
                raise DataError(f"Mask has shape {index.shape}, expected ({len(self)},).")
            index = np.flatnonzero(index)
        return self._replace(index=index)

    def sample(self, ratio: float, seed: int = 0) -> Observations:
        """A random fraction ``ratio`` of the points, without replacement (seeded).

        As in the paper, ``ratio`` is relative to the full grid when the observations
        are a full grid: N = round(ratio * N_grid). Clean values come along.
        """
        from ._sampling import sample

        return sample(self, ratio, seed)

    def add_noise(self, sigma: float, seed: int = 0) -> Observations:
        """ũ = u + σ·rms(u)·N(0, 1) per field (seeded); the noise-free values go to ``clean``."""
        from ._sampling import add_noise

        return add_noise(self, sigma, seed)

    def split_complex(self, names: Mapping[str, tuple[str, str]] | None = None) -> Observations:
        """Replace each complex field by its real and imaginary parts.

        ``names`` maps a complex field to the two new names, e.g. ``{"psi": ("u", "v")}``;
        the default is ``("<name>re", "<name>im")``.
        """
        names = dict(names or {})
        new, new_clean = {}, ({} if self.clean is not None else None)
        for fname, values in self.fields.items():
            if not np.iscomplexobj(values):
                if fname in names:
                    raise DataError(f"Field {fname!r} is real; it has no imaginary part to split.")
                new[fname] = values
                if new_clean is not None and fname in self.clean:
                    new_clean[fname] = self.clean[fname]
                continue
            re_name, im_name = names.pop(fname, (f"{fname}re", f"{fname}im"))
            new[re_name], new[im_name] = values.real.copy(), values.imag.copy()
            if new_clean is not None and fname in self.clean:
                new_clean[re_name] = self.clean[fname].real.copy()
                new_clean[im_name] = self.clean[fname].imag.copy()
        if names:
            raise DataError(f"split_complex: unknown field(s) {sorted(names)}.")
        return self._replace(fields=new, clean=new_clean)

    def reconstruction_error(self, predicted: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Mean squared error of predictions at these points against the clean values."""
        if self.clean is None:
            raise DataError("No clean values are known for these observations.")
        out = {}
        for name, ref in self.clean.items():
            pred = np.asarray(predicted[name])
            out[name] = float(np.mean(np.abs(pred - ref) ** 2))
        return out

    # ------------------------------------------------------------------ files
    def save(self, path, **options) -> None:
        """Write to ``.npz``, ``.mat``, ``.h5``/``.hdf5`` or ``.nc`` (chosen by extension)."""
        from ._writers import save

        save(self, path, **options)

"""Point columns in tables: CSV (header required) and Parquet, read with pandas/pyarrow.

One row per observation, one column per coordinate and field. Coordinates are the columns
named ``t``, ``x``, ``y``, ``z`` unless ``coords=`` names them; other names (``time``,
``X``, ``lon``) are mapped with ``rename={"time": "t"}``. Fields are the remaining numeric
columns unless ``fields=`` names them; columns not used are left out with a note. Every
problem names the file, the column and the (1-based, header = line 1) line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .._errors import DataError
from ._observations import Observations
from ._writers import _require

__all__ = ["read_table"]

log = logging.getLogger("symweak")

_COORDS = ("t", "x", "y", "z")


def _names(value, what: str, path: Path) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{path.name}: {what}= takes column names, e.g. {what}='t,x'.")
    return list(value)


def _separator(path: Path, encoding: str) -> tuple[str, str]:
    """(column separator, decimal mark) of a CSV file: the commonest of ``,`` ``;`` and a
    tab in its first line (a spreadsheet in a European locale writes ``t;x;u`` and
    ``0,5;1,25;0,031``: a decimal comma where ``;`` separates)."""
    try:
        with open(path, newline="", encoding=encoding) as fh:
            first, second = fh.readline(), fh.readline()
    except (OSError, UnicodeDecodeError, LookupError):
        return ",", "."  # pandas reports what is wrong with the file
    sep = max([",", ";", "\t"], key=first.count) if first.count(",") == 0 else ","
    decimal = "," if sep != "," and re.search(r"\d,\d", second) else "."
    return sep, decimal


def _header(path: Path, encoding: str, sep: str = ",") -> list[str]:
    """A CSV file's column names as written (pandas renames repeated ones to ``u.1``)."""
    import csv

    try:
        with open(path, newline="", encoding=encoding) as fh:
            return next(csv.reader(fh, delimiter=sep), [])
    except (OSError, UnicodeDecodeError, LookupError, csv.Error):
        return []  # pandas reports what is wrong with the file


def _frame(path: Path, encoding: str | None):
    pd = _require("pandas")
    sep, decimal = ",", "."
    if path.suffix.lower() == ".csv":
        sep, decimal = _separator(path, encoding or "utf-8")
        header = _header(path, encoding or "utf-8", sep)
        dup = sorted({c for c in header if header.count(c) > 1})
        if dup:
            raise DataError(f"{path.name}: column name(s) {dup} appear twice; rename them.")
    try:
        if path.suffix.lower() == ".parquet":
            _require("pyarrow")
            return pd.read_parquet(path)
        return pd.read_csv(path, encoding=encoding or "utf-8", sep=sep, decimal=decimal)
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path.name}: not {encoding or 'UTF-8'} text (it holds byte "
            f"{exc.object[exc.start]:#04x}); save it as UTF-8, or pass the file's encoding, "
            "e.g. encoding='latin-1'."
        ) from None
    except LookupError:
        raise DataError(f"{path.name}: unknown encoding {encoding!r}.") from None
    except Exception as exc:  # pandas raises many types for unreadable tables
        raise DataError(
            f"{path.name}: not a readable {path.suffix.lower()} table ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''})."
        ) from None


def _rename(frame, rename: Mapping[str, str] | None, path: Path):
    if not rename:
        return frame
    missing = [k for k in rename if k not in frame.columns]
    if missing:
        raise DataError(
            f"{path.name}: rename= names column(s) {missing} that the file does not have "
            f"(columns: {list(map(str, frame.columns))})."
        )
    return frame.rename(columns=dict(rename))


def _column(frame, name: str, path: Path) -> np.ndarray:
    """One column as float64 (or complex), with the first bad line named."""
    pd = _require("pandas")
    values = pd.to_numeric(frame[name], errors="coerce")
    bad = values.isna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        given = frame[name].iloc[row]
        what = "is empty" if pd.isna(given) else f"holds {str(given)!r}, not a number"
        raise DataError(
            f"{path.name}: column {name!r} {what} on line {row + 2} (data row {row + 1}; "
            f"{int(bad.sum())} such value(s) in the column). Fill or drop those rows first."
        )
    return values.to_numpy(dtype=np.float64)


def _own_coordinate_names(frame, given: list[str], columns: list[str], path: Path):
    """``coords=`` with the file's own names (``time_h,position_um``): the first is time
    (renamed ``t``) unless ``t`` is among them, the others space, renamed ``x``, ``y``, ``z``
    in order; the fields keep their names."""
    missing = [c for c in given if c not in columns]
    if missing:
        raise DataError(f"{path.name}: coords= names column(s) {missing}; the file has {columns}.")
    free = [c for c in _COORDS if c not in given]
    mapping = {}
    for i, name in enumerate(given):
        if name in _COORDS:
            continue
        new = "t" if i == 0 and "t" not in given and "t" in free else free[0] if free else None
        if new == "t":
            free.remove("t")
        elif new is not None:
            free = [c for c in free if c != new]
        if new is None or (new in columns and new not in given):
            raise DataError(
                f"{path.name}: cannot name coordinate {name!r} (the names t, x, y, z are "
                "taken); rename the columns with rename=."
            )
        mapping[name] = new
    log.info(
        "symweak: %s: coordinates %s",
        path.name,
        ", ".join(f"{a} -> {b}" for a, b in mapping.items()),
    )
    return frame.rename(columns=mapping), [mapping.get(c, c) for c in given]


def _no_time(columns: list[str], path: Path) -> None:
    """The error for a table with no time coordinate: every rename it needs, in one line."""
    time = next(
        (c for c in columns if c.lower() in ("t", "tt") or c.lower().startswith("time")), None
    )
    space = next(
        (
            c
            for c in columns
            if c != time and c.lower().startswith(("x", "pos", "dist", "space", "depth"))
        ),
        None,
    )
    pairs = {time or "<time column>": "t"}
    if space and "x" not in columns:
        pairs[space] = "x"
    fix = "rename={" + ", ".join(f"{a!r}: {b!r}" for a, b in pairs.items()) + "}"
    cli = ",".join(f"{a}={b}" for a, b in pairs.items())
    own = ",".join(pairs)
    raise DataError(
        f"{path.name}: no time column `t` (columns: {columns}). Name the coordinates with "
        f"coords='{own}' (time first; renamed t, x, …) or map them with {fix} (on the command "
        f"line: --coords {own} or --rename {cli})."
    )


def read_table(
    path: Path, coords=None, fields=None, rename=None, encoding=None, **_ignored
) -> Observations:
    """Observations from a CSV or Parquet table (see the module notes)."""
    frame = _rename(_frame(path, encoding), rename, path)
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        dup = sorted({c for c in columns if columns.count(c) > 1})
        raise DataError(f"{path.name}: column name(s) {dup} appear twice; rename them.")
    frame.columns = columns
    if not len(frame):
        raise DataError(f"{path.name}: the table has a header but no rows.")
    coord_names = _names(coords, "coords", path) or [c for c in _COORDS if c in columns]
    if coord_names and any(c not in _COORDS for c in coord_names):
        frame, coord_names = _own_coordinate_names(frame, coord_names, columns, path)
        columns = [str(c) for c in frame.columns]
    if "t" not in coord_names:
        _no_time(columns, path)
    chosen = _names(fields, "fields", path)
    if chosen is None:  # numeric columns; one with a few bad cells is reported, not dropped
        pd = _require("pandas")
        chosen = [
            c
            for c in columns
            if c not in coord_names
            and pd.to_numeric(frame[c], errors="coerce").notna().mean() >= 0.5
        ]
    if not chosen:
        raise DataError(
            f"{path.name}: no field column: the columns {columns} are all coordinates or not "
            "numeric. Add the measured values as a column, or name it with fields='u'."
        )
    missing = [c for c in [*coord_names, *chosen] if c not in columns]
    if missing:
        raise DataError(
            f"{path.name}: no column(s) {missing}; the file has {columns}"
            + (" (use rename= to map names)." if rename is None else ".")
        )
    unused = [c for c in columns if c not in coord_names and c not in chosen]
    if unused:
        log.info("symweak: %s: columns %s are not used", path.name, unused)
    return Observations(
        coords={c: _column(frame, c, path) for c in coord_names},
        fields={f: _column(frame, f, path) for f in chosen},
        meta={"source": path.name, **({"unused_columns": unused} if unused else {})},
    )

"""Writing files so that nothing half-written is ever seen, and values made JSON-ready."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

__all__ = ["atomic_write", "jsonable"]


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` to a temporary file beside ``path``, then rename it over ``path``: a
    reader never sees a half-written file, and of two concurrent writers one wins whole.
    The file gets the permissions a plain ``open(path, "w")`` would give it."""
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def jsonable(obj):
    """``obj`` with NumPy scalars as Python numbers, non-finite floats as strings, tuples as
    lists and anything else unknown as its ``str``."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)

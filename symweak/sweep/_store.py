"""The results store: one SQLite row per finished run, keyed by the run's key.

SQLite (the standard library's ``sqlite3``) because rows arrive one at a time from many
workers and each must land whole or not at all: a row is written in one transaction by
the process that drives the sweep, so Ctrl-C, a crash or a lost worker leaves only complete
rows, and a sweep run again skips the keys already there. ``Store.frame()`` gives a pandas
DataFrame for analysis; ``Store.export("runs.parquet")`` writes Parquet through pyarrow.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from .._errors import SymweakError

__all__ = ["COLUMNS", "Store"]

#: the store's columns (name, SQL type); lists and dicts are stored as JSON text
COLUMNS = (
    ("key", "TEXT PRIMARY KEY"),
    ("status", "TEXT NOT NULL"),  # "ok" or "failed"
    ("label", "TEXT"),
    ("system", "TEXT"),
    ("file", "TEXT"),
    ("ratio", "REAL"),
    ("noise", "REAL"),
    ("seed", "INTEGER"),
    ("config", "TEXT"),  # the run's full configuration (JSON)
    ("tpr", "REAL"),  # the smallest over the equations; NULL without a truth
    ("e_inf", "REAL"),  # the largest over the equations
    ("e_2", "REAL"),
    ("equation", "TEXT"),
    ("coefficients", "TEXT"),  # JSON: {lhs: {term: coefficient}}, every digit
    ("intervals", "TEXT"),  # JSON: {lhs: {term: [low, high]}}, 95 % (network path)
    ("verdicts", "TEXT"),  # JSON: {lhs: {term: "determined" | "uncertain"}}
    ("honest", "INTEGER"),  # 1: no false term determined, every true one determined or uncertain
    ("exact", "INTEGER"),  # 1: the determined terms are the truth, none uncertain
    ("seconds", "REAL"),
    ("peak_memory_mib", "REAL"),  # the worker process's peak resident memory
    ("device", "TEXT"),
    ("versions", "TEXT"),  # JSON: symweak, torch, numpy, scipy, sympy, python
    ("error", "TEXT"),
    ("finished", "TEXT"),  # UTC time
)
NAMES = [name for name, _ in COLUMNS]


class Store:
    """A sweep's results in an SQLite file (created on first use)."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS runs ({', '.join(f'{n} {t}' for n, t in COLUMNS)})"
                )
                have = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        except sqlite3.DatabaseError as exc:
            raise SymweakError(f"{self.path}: not a symweak results store ({exc}).") from None
        if have != NAMES:
            raise SymweakError(
                f"{self.path}: a results table with other columns ({have}); use a new store file."
            )

    @contextlib.contextmanager
    def _connect(self):
        """A connection that commits on success, rolls back on error, and is closed."""
        db = sqlite3.connect(self.path, timeout=60)
        try:
            with db:
                yield db
        finally:
            db.close()

    def put(self, row: dict[str, Any]) -> None:
        """Write one run's row in one transaction (replacing a failed row of the same key)."""
        unknown = set(row) - set(NAMES)
        if unknown:
            raise SymweakError(f"Unknown store column(s) {sorted(unknown)}.")
        values = [_cell(row.get(n)) for n in NAMES]
        with self._connect() as db:
            db.execute(
                f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * len(NAMES))})", values
            )

    def keys(self, status: str | None = None) -> set[str]:
        query, args = "SELECT key FROM runs", ()
        if status is not None:
            query, args = query + " WHERE status = ?", (status,)
        with self._connect() as db:
            return {k for (k,) in db.execute(query, args)}

    def rows(self) -> list[dict[str, Any]]:
        """Every row, JSON columns decoded, in the order they were written."""
        with self._connect() as db:
            cur = db.execute(f"SELECT {', '.join(NAMES)} FROM runs ORDER BY rowid")
            out = []
            for values in cur:
                row = dict(zip(NAMES, values))
                for name in ("config", "coefficients", "intervals", "verdicts", "versions"):
                    if row[name] is not None:
                        row[name] = json.loads(row[name])
                out.append(row)
            return out

    def frame(self):
        """The rows as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=NAMES)

    def export(self, path) -> None:
        """The rows as a Parquet (``.parquet``) or CSV (``.csv``) file, written atomically."""
        from .._files import atomic_write

        path = Path(path)
        frame = self.frame()
        for name in ("config", "coefficients", "intervals", "verdicts", "versions"):
            frame[name] = frame[name].map(lambda v: None if v is None else json.dumps(v))
        if path.suffix.lower() == ".parquet":
            atomic_write(path, lambda tmp: frame.to_parquet(tmp, index=False))
        elif path.suffix.lower() == ".csv":
            atomic_write(path, lambda tmp: frame.to_csv(tmp, index=False))
        else:
            raise SymweakError(f"Export to .parquet or .csv, got {path.name}.")

    def __len__(self) -> int:
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def _cell(value):
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True)
    return value

"""Checks of the ``symweak`` command's output paths, made before any work runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ._errors import SymweakError

__all__ = ["check_report_outputs", "check_writable"]


def check_writable(
    path: str, flag: str = "--out", folder_ok: bool = False, example: str = "run.json"
) -> None:
    """Refuse an output path that cannot be written, before anything runs. ``folder_ok``: the
    path is a folder to write files into (``plot --out``)."""
    target = Path(path).expanduser().resolve()
    if target.is_dir() and not folder_ok:
        raise SymweakError(
            f"Cannot save to {path}: it is a folder; give a file name, e.g. {Path(path) / example}."
        )
    if folder_ok and target.exists() and not target.is_dir():
        raise SymweakError(
            f"Cannot write figures into {path}: it is a file. Choose another {flag}."
        )
    folder = target if folder_ok and target.is_dir() else target.parent
    if not folder.is_dir():
        raise SymweakError(
            f"Cannot save to {path}: the folder {folder} does not exist. Create it or choose "
            f"another {flag}."
        )
    if not os.access(folder, os.W_OK):
        raise SymweakError(
            f"Cannot save to {path}: the folder {folder} is not writable. Choose another {flag}."
        )


def check_report_outputs(args: argparse.Namespace) -> None:
    """``sweep report --figure/--export``: a known format and a writable place, before the
    report is printed."""
    for flag, value, suffixes in (
        ("--figure", args.figure, (".png", ".svg", ".pdf")),
        ("--export", args.export, (".parquet", ".csv")),
    ):
        if value is None:
            continue
        if Path(value).suffix.lower() not in suffixes:
            raise SymweakError(
                f"{flag} {value}: name a {', '.join(suffixes)} file (the suffix gives the format)."
            )
        check_writable(value, flag)

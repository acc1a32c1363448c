"""Locate the top-level ``grammar/`` and ``templates/`` folders.

In an installed wheel they live inside the package as ``symweak/_resources/<kind>``
(hatch's ``force-include``); in a source checkout or an editable install they are the
top-level folders next to ``symweak/``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["resource_dir", "resource_path"]

_KINDS = ("grammar", "templates")


def resource_dir(kind: str) -> Path:
    """The folder holding symweak's ``grammar`` or ``templates`` files."""
    if kind not in _KINDS:
        raise ValueError(f"Unknown resource kind {kind!r}; expected one of {_KINDS}.")
    packaged = Path(str(resources.files("symweak"))) / "_resources" / kind
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parent.parent / kind
    if source.is_dir():
        return source
    raise FileNotFoundError(
        f"symweak's {kind}/ folder is missing (looked in {packaged} and {source}); "
        "reinstall symweak."
    )


def resource_path(kind: str, name: str) -> Path:
    """Path of one resource file, e.g. ``resource_path('grammar', 'symweak.lark')``."""
    path = resource_dir(kind) / name
    if not path.is_file():
        raise FileNotFoundError(f"symweak resource {kind}/{name} is missing; reinstall symweak.")
    return path

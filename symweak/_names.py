"""Names of coordinates and fields: plain-string checks shared by the IR and the data
layer (which must not import SymPy). The reserved names come from the operator registry,
read when a field name is checked."""

from __future__ import annotations

import unicodedata

from ._errors import IRError

__all__ = ["validate_coord_name", "validate_field_name"]


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch).startswith("L")


def validate_coord_name(name: str) -> str:
    """Return ``name`` if it is a valid coordinate name (one letter), else raise."""
    if not isinstance(name, str) or len(name) != 1 or not _is_letter(name):
        raise IRError(
            f"Coordinate name {name!r} is not a single letter. symweak writes derivatives "
            "as u_xx, so each coordinate must be one letter (t, x, y, z, ...)."
        )
    return name


def validate_field_name(name: str) -> str:
    """Return ``name`` if it is a valid field name, else raise with the reason."""
    if not isinstance(name, str) or not name:
        raise IRError(f"Field name {name!r} must be a non-empty string such as 'u' or 'omega'.")
    if not _is_letter(name[0]) or not all(_is_letter(c) or c.isdigit() for c in name):
        raise IRError(
            f"Field name {name!r} may contain only letters and digits and must start with a "
            "letter (no underscores: u_x means the x-derivative of u)."
        )
    from .operators import reserved_names

    if name in reserved_names():
        raise IRError(
            f"Field name {name!r} is reserved (a function or keyword of the expression "
            "language); rename the field."
        )
    return name

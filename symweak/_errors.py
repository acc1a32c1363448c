"""Error types raised by symweak.

Every error a user can trigger derives from :class:`SymweakError`, and also from
the built-in exception a Python user would expect (``ValueError`` for bad values,
``KeyError`` for unknown names), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["DataError", "GrammarError", "IRError", "SymweakError"]


class SymweakError(Exception):
    """Base class of every error symweak raises on purpose."""


class IRError(SymweakError, ValueError):
    """An expression cannot be represented in symweak's IR (terms, equations)."""


class DataError(SymweakError, ValueError):
    """Observations are malformed (NaN, mismatched lengths, unsorted grid, ...)."""


class GrammarError(SymweakError, ValueError):
    """Text in the operator or constraint language could not be parsed.

    Attributes
    ----------
    text: the full text that was parsed.
    line, column: 1-based position of the problem (``None`` when unknown).
    reason: the message without the position and caret.
    """

    def __init__(
        self,
        reason: str,
        text: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.reason = reason
        self.text = text
        self.line = line
        self.column = column
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        parts = [self.reason]
        if self.text is not None and self.line is not None and self.column is not None:
            lines = self.text.splitlines() or [""]
            src = lines[self.line - 1] if 0 < self.line <= len(lines) else ""
            parts[0] = f"{self.reason} (line {self.line}, column {self.column})"
            parts.append("    " + src)
            parts.append("    " + " " * (self.column - 1) + "^")
        if self.hint:
            parts.append(self.hint)
        return "\n".join(parts)

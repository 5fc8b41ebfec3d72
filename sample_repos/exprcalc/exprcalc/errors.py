"""Exception classes carrying the source position of the problem."""

from __future__ import annotations

from typing import Optional


class ExprError(Exception):
    """Base class for all exprcalc errors.

    ``position`` is the 0-based offset into the source text (``None`` when
    unknown).
    """

    def __init__(self, message: str, position: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        if self.position is None:
            return self.message
        return f"{self.message} at position {self.position}"

    def pointer(self, source: str) -> str:
        """The source line containing the error with a caret underneath.

        >>> ParseError("unexpected '*'", 4).pointer("1 + * 2")
        "1 + * 2\\n    ^"
        """
        if self.position is None:
            return source
        line_start = source.rfind("\n", 0, self.position) + 1
        line_end = source.find("\n", self.position)
        if line_end == -1:
            line_end = len(source)
        column = self.position - line_start
        return f"{source[line_start:line_end]}\n{' ' * column}^"


class ParseError(ExprError):
    """The source text is not a valid expression."""


class EvalError(ExprError):
    """A valid expression could not be evaluated (unknown name, bad types, ...)."""

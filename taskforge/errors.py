"""The two kinds of expected failure, kept apart from bugs.

`UserError` is bad input: the CLI prints its one-line message and exits 2.
`Rejected` is a candidate that did not become a task: counted per reason in the funnel.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Any


class UserError(Exception):
    """Bad input from the user: a missing path, a malformed recipe, a repo without tests."""

    exit_code = 2


class Rejected(Exception):
    """A candidate that failed a check; `reason` is a short stable key for the funnel table."""

    def __init__(self, reason: str, detail: str = "",
                 facts: dict[str, Any] | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.facts = facts or {}  # what the journal keeps besides the detail

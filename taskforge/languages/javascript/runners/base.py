"""What every JavaScript test runner answers: its files, its argv, and its report read back."""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from taskforge.model import Outcome

SUPPORT = Path(__file__).resolve().parent.parent / "support"


@dataclass
class Report:
    """A run's results, from the runner's machine-readable report."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    collection_errors: dict[str, str] = field(default_factory=dict)  # test file -> error
    coverage_keys: dict[str, str] = field(default_factory=dict)  # coverage key -> test id
    seconds: float = 0.0  # the tests' own time, summed
    finished: bool = False  # the runner reported the end of its run (those that do)
    # test id -> what the assertion that failed it compared (`compared_sides`)
    compared: dict[str, list[list]] = field(default_factory=dict)


def compared_sides(value: object) -> list[list] | None:
    """A failed test's recorded comparison (support/taskforge-compared.cjs): two sides, each
    `[typeof, JSON text or None]`; None where the report holds none or something else."""
    if not isinstance(value, list) or len(value) != 2:
        return None
    for side in value:
        if not (isinstance(side, list) and len(side) == 2 and isinstance(side[0], str)
                and (side[1] is None or isinstance(side[1], str))):
            return None
    return value


def json_side(value: object) -> list:
    """A side as support/taskforge-compared.cjs writes it, of a value a JSON report holds
    (jest's `matcherResult`)."""
    kinds = {str: "string", int: "number", float: "number", bool: "boolean",
             type(None): "object", list: "object", dict: "object"}
    kind = kinds.get(type(value), "undefined")
    return [kind, json.dumps(value) if kind != "undefined" else None]


def unique_id(seen: dict[str, int], test_id: str) -> str:
    """`test_id`, or `test_id [n]` for its n-th occurrence (two tests of one name)."""
    seen[test_id] = seen.get(test_id, 0) + 1
    return test_id if seen[test_id] == 1 else f"{test_id} [{seen[test_id]}]"


def file_of(test_id: str) -> str:
    return test_id.split("::", 1)[0]


class JsTestRunner(abc.ABC):
    name: ClassVar[str]

    def __init__(self, modules: Path | None = None) -> None:
        self.modules = modules  # the environment's node_modules (which release is installed)
    #: Whether one test file that fails to load stops the whole run (mocha: one process).
    loads_all_or_nothing: ClassVar[bool] = False

    def report_variables(self, report: Path) -> dict[str, str]:
        """Environment variables that tell the runner's reporter where to write."""
        return {}

    @abc.abstractmethod
    def test_files(self, root: Path, args: Sequence[str]) -> list[str] | None:
        """The test files (relative, posix, sorted) the runner runs for these arguments, or
        None when the runner finds them itself (from its configuration)."""

    @abc.abstractmethod
    def argv(self, files: Sequence[str], *, workspace: Path, report: Path,
             select: Sequence[str] | None, coverage: bool, reverse: bool,
             test_timeout: float | None, collect_only: bool) -> list[str]:
        """The command that runs `files` in `workspace` (all of their tests, or those named
        in `select`) and writes its machine-readable report to `report` (files the command
        needs besides may be written beside it)."""

    @abc.abstractmethod
    def read_report(self, report: Path, workspace: Path) -> Report:
        """The results `argv`'s report holds; ids are `file::suite > test`."""

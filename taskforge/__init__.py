"""taskforge: verified feature-deletion coding tasks from real, test-heavy repositories.

The names below are loaded on first use (PEP 562): a data loader that only calls
`load_tasks` and `grade` does not pay for the generator (LibCST, the strategies, ingestion).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskforge.errors import Rejected, UserError
    from taskforge.generate import Summary, generate
    from taskforge.model import GradeResult
    from taskforge.tasks import Task, TaskSet, load_tasks

_HOMES = {"Rejected": "taskforge.errors", "UserError": "taskforge.errors",
          "Summary": "taskforge.generate", "generate": "taskforge.generate",
          "GradeResult": "taskforge.model", "Task": "taskforge.tasks",
          "TaskSet": "taskforge.tasks", "load_tasks": "taskforge.tasks"}

__all__ = ["GradeResult", "Rejected", "Summary", "Task", "TaskSet", "UserError", "generate",
           "load_tasks"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'taskforge' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted(__all__)


class _Package(types.ModuleType):
    """Importing the submodule `taskforge.generate` (the CLI does) binds it on the package under
    the name of the public function; that binding is refused, so `taskforge.generate` stays the
    function (through `__getattr__`) however the submodule was first imported."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

"""Deletion strategies, registered by name. A new strategy is one class added to STRATEGIES."""

from __future__ import annotations

from taskforge.delete.base import SelectOptions, Strategy, TaskOptions
from taskforge.delete.project import PythonProject, is_test_file
from taskforge.delete.stub_function import StubFunction
from taskforge.errors import UserError

STRATEGIES: dict[str, type[Strategy]] = {cls.name: cls for cls in (StubFunction,)}


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]()
    except KeyError:
        raise UserError(f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}") \
            from None


__all__ = ["STRATEGIES", "PythonProject", "SelectOptions", "Strategy", "TaskOptions",
           "get_strategy", "is_test_file"]

"""Python's deletion strategies (LibCST), registered by name. A new strategy is one class added
to STRATEGIES; stages reach them through `PythonLanguage.strategies`."""

from __future__ import annotations

from taskforge.errors import UserError
from taskforge.languages.python.delete.feature_cluster import FeatureCluster
from taskforge.languages.python.delete.project import PythonProject
from taskforge.languages.python.delete.remove_branch import RemoveBranch
from taskforge.languages.python.delete.remove_function import RemoveFunction
from taskforge.languages.python.delete.remove_method import RemoveMethod
from taskforge.languages.python.delete.remove_module import RemoveModule
from taskforge.languages.python.delete.stub_class import StubClass
from taskforge.languages.python.delete.stub_function import StubFunction
from taskforge.languages.strategy import Strategy

STRATEGIES: dict[str, type[Strategy]] = {cls.name: cls for cls in (
    StubFunction, RemoveFunction, StubClass, RemoveMethod, FeatureCluster, RemoveBranch,
    RemoveModule)}


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]()
    except KeyError:
        raise UserError(f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}") \
            from None


__all__ = ["STRATEGIES", "PythonProject", "get_strategy"]

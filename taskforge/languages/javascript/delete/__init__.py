"""JavaScript/TypeScript deletion strategies (tree-sitter), registered by name."""

from __future__ import annotations

from taskforge.languages.javascript.delete.feature_cluster import FeatureCluster
from taskforge.languages.javascript.delete.remove_function import RemoveFunction
from taskforge.languages.javascript.delete.remove_method import RemoveMethod
from taskforge.languages.javascript.delete.stub_class import StubClass
from taskforge.languages.javascript.delete.stub_function import StubFunction
from taskforge.languages.strategy import Strategy

STRATEGIES: dict[str, type[Strategy]] = {cls.name: cls for cls in (
    StubFunction, RemoveFunction, StubClass, RemoveMethod, FeatureCluster)}

__all__ = ["STRATEGIES"]

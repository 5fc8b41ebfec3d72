"""Java deletion strategies (tree-sitter-java), registered by name."""

from __future__ import annotations

from taskforge.languages.java.delete.remove_method import RemoveMethod
from taskforge.languages.java.delete.stub_class import StubClass
from taskforge.languages.java.delete.stub_method import StubMethod
from taskforge.languages.strategy import Strategy

STRATEGIES: dict[str, type[Strategy]] = {cls.name: cls for cls in (
    StubMethod, RemoveMethod, StubClass)}

__all__ = ["STRATEGIES"]

"""Shared fixtures (rootdir conftest; the tests/ directory has no __init__.py)."""

import pytest

from exprcalc import Evaluator


@pytest.fixture
def calc():
    """An evaluator with a few variables and user functions registered."""
    evaluator = Evaluator(variables={"x": 3, "y": 4, "name": "world", "flag": True, "ratio": 0.5})
    evaluator.register("double", lambda n: n * 2)
    evaluator.register("greet", lambda who, greeting="hello": f"{greeting}, {who}!")
    return evaluator


@pytest.fixture
def call_log():
    """A list plus a function that records its calls, to observe laziness."""
    calls = []

    def record(value):
        calls.append(value)
        return value

    return calls, record

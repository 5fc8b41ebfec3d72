"""The screen scores both trivial solutions with one run (`screen.SCREENED_NULL`): that holds
only while the server's `pass` and `return None` stubs are the same code but for their
positions, for every kind of function it swaps (plain, closure, async, method)."""

from __future__ import annotations

import importlib.util

import pytest

from taskforge.languages.python.testing.runner import PLUGIN_DIR
from taskforge.languages.python.testing.screen import NULL_BODIES, SCREENED_NULL

SOURCE = """\
def plain(a, b=1, *args, **kwargs):
    return a + b

def outer(x):
    def closure(y):
        return x + y
    return closure

async def coroutine(a):
    return a

class Box:
    def method(self, value):
        self.value = value
        return self
"""


def _server():
    spec = importlib.util.spec_from_file_location("taskforge_screen_under_test",
                                                  PLUGIN_DIR / "taskforge_screen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["plain", "closure", "coroutine", "method"])
def test_the_trivial_stubs_are_one_code(name: str) -> None:
    namespace: dict = {}
    exec(compile(SOURCE, "<candidate>", "exec"), namespace)
    function = {"plain": namespace["plain"], "closure": namespace["outer"](1),
                "coroutine": namespace["coroutine"], "method": namespace["Box"].method}[name]
    server = _server()
    stubs = [server._stub_code(function.__code__, body) for body in NULL_BODIES]
    assert SCREENED_NULL in NULL_BODIES and all(stubs), name
    first, *others = stubs
    for other in others:
        assert other.co_code == first.co_code and other.co_consts == first.co_consts, name
        assert other.co_names == first.co_names and other.co_freevars == first.co_freevars
    # the positive control: the task-state stub (`raise`) is other code
    assert server._stub_code(function.__code__, "raise").co_code != first.co_code

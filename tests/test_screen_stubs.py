"""The screen scores `pass` and `return None` with one run and each constant with its own
(`screen.SCREENED_NULLS`): that holds only while the server's stubs of one run are the same
code but for their positions, and those of two runs are not, for every kind of function it
swaps (plain, closure, async, method); and while the server's bodies are the language's."""

from __future__ import annotations

import importlib.util

import pytest

from taskforge.languages.python.testing.runner import PLUGIN_DIR
from taskforge.languages.python.testing.screen import NULL_BODIES, SCREENED_NULLS

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
    codes = {}
    for screened, bodies in SCREENED_NULLS.items():
        stubs = [server._stub_code(function.__code__, body) for body in bodies]
        assert screened in bodies and all(stubs), name
        first, *others = stubs
        for other in others:
            assert other.co_code == first.co_code and other.co_consts == first.co_consts, name
            assert other.co_names == first.co_names and other.co_freevars == first.co_freevars
        # (by type and repr: `False == 0`, so a set of the constants would hold one)
        codes[screened] = (first.co_code, tuple((type(c), repr(c)) for c in first.co_consts))
    # one run for each: no two runs' stubs are one code (else the screen runs one twice)
    assert len(set(codes.values())) == len(SCREENED_NULLS), name
    # the positive control: the task-state stub (`raise`) is other code
    assert server._stub_code(function.__code__, "raise").co_code != \
        codes["pass"][0]


def test_the_server_knows_every_trivial_body_and_runs_each() -> None:
    assert _server().BODIES == {"raise": "raise NotImplementedError", **NULL_BODIES}
    assert sorted(b for bodies in SCREENED_NULLS.values() for b in bodies) == sorted(NULL_BODIES)

"""One run scores every trivial body that behaves alike (`Language.behaviour_key`): Python's
`pass` and `return None` as a function's whole body compile to the same code, so
`score_null_solutions` runs one and gives both its score; where they differ (in place of a
deleted branch, `return None` leaves the function and `pass` goes on) each runs.

JavaScript's empty body and `return undefined;` likewise, as a function's whole body only.

The attack: a branch whose trivial `return None` passes every FAIL_TO_PASS test while `pass`
does not. Against a naive sharing (one run for all bodies, its positive control) the task
passes the trivial-solution gate; with the key it is caught."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import count_calls, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.ingest import ingest
from taskforge.languages import language_named
from taskforge.languages.base import Language, Runner, null_rejection
from taskforge.languages.javascript import JavaScriptLanguage
from taskforge.languages.javascript.behaviour import code_key as js_code_key
from taskforge.languages.python import PythonLanguage
from taskforge.languages.python.behaviour import code_key
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.verify.confirm import Verifier, run_timeout

FUNCTION = '''\
class Box:
    def size(self, x):
        """How big."""
        BODY

    async def fetch(self):
        BODY


def outer(n):
    def inner():
        BODY
    return inner
'''
BRANCH = '''\
def emit(text, mode):
    if mode == "quiet":
        BODY
    return text
'''


def key_with(tmp_path: Path, template: str, body: str, name: str = "m.py") -> str | None:
    (tmp_path / name).write_text(template.replace("BODY", body))
    return code_key(tmp_path, [name])


def test_whole_function_bodies_share_a_key(tmp_path: Path) -> None:
    assert key_with(tmp_path, FUNCTION, "pass") == key_with(tmp_path, FUNCTION, "return None")
    # not every text shares it: a stub that still raises is another behaviour
    assert key_with(tmp_path, FUNCTION, "pass") != \
        key_with(tmp_path, FUNCTION, "raise NotImplementedError")


def test_branch_bodies_do_not(tmp_path: Path) -> None:
    assert key_with(tmp_path, BRANCH, "pass") != key_with(tmp_path, BRANCH, "return None")


def test_what_cannot_be_compiled_has_no_key(tmp_path: Path) -> None:
    # `return` outside a function: no key, so each body runs (and fails on its own)
    assert key_with(tmp_path, "BODY\n", "return None") is None
    # any other file counts by its bytes, and its name counts
    (tmp_path / "data.txt").write_text("a")
    first = code_key(tmp_path, ["data.txt"])
    (tmp_path / "data.txt").write_text("b")
    assert code_key(tmp_path, ["data.txt"]) != first
    assert code_key(tmp_path, ["data.txt"]) != code_key(tmp_path, ["gone.txt"])


def test_every_constant_has_a_key_of_its_own(tmp_path: Path) -> None:
    # `0 == False` and `1 == True`: constants told apart by value alone would share a run
    texts = [t for b, t in PythonLanguage.null_bodies.items() if b not in ("pass", "return-none")]
    keys = {key_with(tmp_path, FUNCTION, text) for text in texts}
    assert None not in keys and len(keys) == len(texts)
    assert key_with(tmp_path, FUNCTION, "pass") not in keys


JS_FUNCTION = """\
export class Box {
  size(n) {
    BODY
  }
}
export const grow = function* (n) {
  BODY
};
export function emit(text, mode) {
  if (mode === "quiet") {
    BRANCH
  }
  return text;
}
"""


def js_key(tmp_path: Path, body: str, branch: str = "x();", template: str = JS_FUNCTION,
           name: str = "m.js") -> str | None:
    (tmp_path / name).write_text(template.replace("BODY", body).replace("BRANCH", branch))
    return js_code_key(tmp_path, [name])


@pytest.mark.parametrize("name", ["m.js", "m.ts"])
def test_javascript_whole_function_bodies_share_a_key(tmp_path: Path, name: str) -> None:
    """An empty body and `return undefined;` (a method's, a generator's) do the same."""
    assert js_key(tmp_path, "", name=name) == js_key(tmp_path, "return undefined;", name=name)
    assert js_key(tmp_path, "", name=name) != js_key(tmp_path, "return null;", name=name)
    assert len({js_key(tmp_path, text, name=name)
                for text in JavaScriptLanguage.null_bodies.values()}) == \
        len(JavaScriptLanguage.null_bodies) - 1


def test_javascript_branch_bodies_do_not(tmp_path: Path) -> None:
    assert js_key(tmp_path, "", branch="") != js_key(tmp_path, "", branch="return undefined;")


def test_javascript_where_undefined_may_be_rebound_there_is_no_key(tmp_path: Path) -> None:
    for prelude in ("var undefined = 1;", "function f(undefined) { return 1; }",
                    "const [undefined] = [2];", "with (Math) { max(1); }"):
        assert js_key(tmp_path, "return undefined;", template=prelude + "\n" + JS_FUNCTION) \
            is None, prelude
    assert js_key(tmp_path, "return undefined;", template="export function (") is None


FILES = {
    "pyproject.toml": setuptools_pyproject("quietly", "0.1"),
    "quietly/__init__.py": "",
    "quietly/emit.py": """\
        LOG = []


        def emit(text, mode):
            if mode == "quiet":
                LOG.clear()
                return None
            LOG.append(text)
            return text


        def total(values):
            result = 0
            for value in values:
                result += value
            return result
        """,
    "tests/test_emit.py": """\
        from quietly.emit import emit, total


        def test_quiet_gives_nothing():
            assert emit("x", "quiet") is None


        def test_loud_gives_the_text():
            assert emit("x", "loud") == "x"


        def test_total():
            assert total([1, 2, 3]) == 6


        def test_total_empty():
            assert total([]) == 0
        """,
}


@pytest.fixture(scope="module")
def verifier(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> Verifier:
    root = make_project(tmp_path_factory.mktemp("quietly"), FILES)
    source = ingest(SourceSpec(kind="path", location=str(root)), cache=tf_cache,
                    base_dir=root.parent, sandbox=get_sandbox("none"), repeats=2, timeout=120)
    return Verifier(source, get_sandbox("none"), tf_cache, run_timeout(source, 120), 2,
                    TaskOptions())


def candidate_of(verifier: Verifier, strategy_name: str, suffix: str):
    strategy = verifier.source.language.strategy(strategy_name)
    assert strategy is not None
    found = [c for c in strategy.candidates(verifier.source.project, verifier.source.baseline,
                                            SelectOptions(min_body_lines=1))
             if c.symbol.endswith(suffix)]
    assert found, suffix
    return strategy, found[0]


@pytest.mark.slow
def test_a_function_stub_runs_one_trivial_solution(verifier: Verifier,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    strategy, candidate = candidate_of(verifier, "stub-function", "total")
    started = count_calls(monkeypatch, Runner, "run")
    nulls = verifier.null_solutions(strategy, candidate,
                                    ["tests/test_emit.py::test_total"])
    # `pass` and `return None` one run, each constant its own
    assert len(started) == len(PythonLanguage.null_bodies) - 1
    assert nulls == {body: {"passed": 0, "of": 1} for body in PythonLanguage.null_bodies}


@pytest.mark.slow
def test_a_branch_whose_return_none_passes_is_caught(verifier: Verifier,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    strategy, candidate = candidate_of(verifier, "remove-branch", "quiet\"]")
    fail_to_pass = ["tests/test_emit.py::test_quiet_gives_nothing"]
    started = count_calls(monkeypatch, Runner, "run")
    nulls = verifier.null_solutions(strategy, candidate, fail_to_pass)
    assert len(started) == 2  # the keys differ: each body ran, up to the one that passes
    assert nulls == {"pass": {"passed": 0, "of": 1}, "return-none": {"passed": 1, "of": 1}}
    rejection = null_rejection(nulls, PythonLanguage.null_bodies)
    assert rejection is not None and rejection.reason == "trivial-solution"


@pytest.mark.slow
def test_positive_control_one_run_for_all_bodies_misses_it(
        verifier: Verifier, monkeypatch: pytest.MonkeyPatch) -> None:
    """A naive sharing (every body one key) runs `pass` only and passes the task."""
    monkeypatch.setattr(PythonLanguage, "behaviour_key", lambda self, workspace, paths: "same")
    strategy, candidate = candidate_of(verifier, "remove-branch", "quiet\"]")
    nulls = verifier.null_solutions(strategy, candidate,
                                    ["tests/test_emit.py::test_quiet_gives_nothing"])
    assert nulls["return-none"] == {"passed": 0, "of": 1}
    assert null_rejection(nulls, PythonLanguage.null_bodies) is None


def test_a_language_without_a_key_runs_each() -> None:
    assert Language.behaviour_key(language_named("java"), Path("/nonexistent"), ["A.java"]) \
        is None


def test_java_bodies_share_a_key_where_their_bytes_are_one(tmp_path: Path) -> None:
    """Java's second trivial body is the default where the return type has no other value
    (an `Object`'s `return null;`): the same bytes, one run."""
    java = language_named("java")
    source = tmp_path / "A.java"
    source.write_text("class A { Object f() { return null; } }\n")
    first = java.behaviour_key(tmp_path, ["A.java"])
    assert java.behaviour_key(tmp_path, ["A.java"]) == first
    source.write_text("class A { boolean f() { return true; } }\n")
    assert java.behaviour_key(tmp_path, ["A.java"]) != first


@pytest.mark.slow
def test_the_screen_less_candidate_still_rejects_trivial_tasks(verifier: Verifier) -> None:
    """The whole confirmation (not screened) of that branch: rejected for its trivial body."""
    strategy, candidate = candidate_of(verifier, "remove-branch", "quiet\"]")
    verdicts = verifier.screen([candidate], LocalExecutor(1))
    with pytest.raises(Rejected) as rejected:
        verifier.make_task(strategy, candidate, verdicts[candidate.key])
    assert rejected.value.reason == "trivial-solution"

"""Before tasks are made from a source, the grader grades its unchanged code with every
stable test (taskforge/verify/self_grade.py). Two projects the grader cannot pass as they
are, each against its positive control, `generate` without the self-grade: it emits tasks
whose reference solution grades 0, which would teach an agent that a correct answer fails.

- `guarded`: the project's conftest wraps a method of a pytest runner class (what
  hypothesis' plugin does, session 36), which the integrity observer reports on every grade;
  with the self-grade the source is set aside with that line and writes no task.
- `configured`: one test passes under pytest as the baseline runs it but not under the
  grader's configuration (here it asserts plugin autoloading is on); with the self-grade it
  is left out of every task like a flaky test, and the references grade 1.0.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, setuptools_pyproject, write_recipe

import taskforge
from taskforge.errors import UserError
from taskforge.generate import Summary
from taskforge.languages.python import PythonLanguage

# The module, not the function `taskforge.generate` that the package exports under its name.
generate_module = importlib.import_module("taskforge.generate")

SOURCE = '''\
def total(values):
    """The sum of `values`."""
    result = 0
    for value in values:
        result += value
    return result


def largest(values):
    """The greatest of `values`."""
    best = values[0]
    for value in values[1:]:
        if value > best:
            best = value
    return best
'''
TESTS = '''\
from calc import largest, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_total_empty():
    assert total([]) == 0


def test_largest():
    assert largest([3, 9, 2]) == 9


def test_largest_first():
    assert largest([9, 3]) == 9
'''
# A project guard in the style of hypothesis' plugin: refuse @pytest.fixture on a test.
GUARD = '''\
import _pytest.fixtures

_call = _pytest.fixtures.FixtureFunctionMarker.__call__


def _guarded(self, function):
    if function.__name__.startswith("test_"):
        raise TypeError("a test cannot be a fixture")
    return _call(self, function)


_pytest.fixtures.FixtureFunctionMarker.__call__ = _guarded
'''
AUTOLOAD = '''\
import os


def test_plugins_autoload():
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
'''
RECIPE = """\
name: self-grade
seed: 0
sources: {sources}
strategies: [stub-function]
select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: 2,
         min_stable_tests: {min_stable}}}
task: {{tests_visible: true}}
verify: {{repeats: 2, timeout_s: 120}}
sandbox: none
"""


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    return make_project(tmp_path / "calc", {
        "pyproject.toml": setuptools_pyproject("calc"), "calc/__init__.py": SOURCE,
        "tests/test_calc.py": TESTS, **files})


def run(tmp_path: Path, roots: list[Path], cache: Path, out: str = "out",
        min_stable: int = 1) -> tuple[Summary, taskforge.TaskSet]:
    sources = "[" + ", ".join(f"{{path: {root}}}" for root in roots) + "]"
    recipe = write_recipe(tmp_path / f"{out}.yaml",
                          RECIPE.format(sources=sources, min_stable=min_stable))
    summary = taskforge.generate(recipe, out=tmp_path / out, cache=cache)
    return summary, taskforge.load_tasks(tmp_path / out)


def grade_reference(task: taskforge.Task, dest: Path) -> taskforge.GradeResult:
    ws = task.materialize(dest)
    apply_patch(ws, task.record["patch"])
    return task.grade(ws, sandbox="none")


def without_self_grade(monkeypatch: pytest.MonkeyPatch) -> None:
    """The positive control: generate as it was, every ingested source goes on."""
    def every_source(_run: object, sources: list, _aside: list, _warnings: list) -> list:
        return sources

    monkeypatch.setattr(generate_module, "_self_graded", every_source)


@pytest.mark.parametrize("checked", [False, True], ids=["without-self-grade", "self-graded"])
def test_a_source_the_grader_cannot_pass_is_set_aside(tmp_path: Path, tf_cache: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      checked: bool) -> None:
    guarded = project(tmp_path, {"tests/conftest.py": GUARD})
    plain = project(tmp_path / "plain", {})
    if not checked:
        without_self_grade(monkeypatch)
    summary, tasks = run(tmp_path, [guarded, plain], tf_cache)
    if not checked:
        # What the self-grade prevents: tasks whose reference cannot score.
        assert len(tasks) == 4
        guarded_id = summary.sources[0]["snapshot"]  # sources are listed in the recipe's order
        first = next(t for t in tasks if t.record["snapshot"] == guarded_id)
        result = grade_reference(first, tmp_path / "ws")
        assert result.reward == 0.0
        assert any("FixtureFunctionMarker.__call__" in m for m in result.tampered), result
        return
    failed, other = sorted(summary.sources, key=lambda s: "failed" not in s)
    assert failed["failed"].startswith("the grader does not pass the unchanged code: ")
    assert "FixtureFunctionMarker.__call__" in failed["failed"]
    # The other source goes on: its tasks alone are written.
    assert len(tasks) == 2 and other["emitted"] == 2
    assert summary.funnel["tried"] == 2
    # Alone, it is the run's error (exit 2 from the CLI), as a source ingest sets aside.
    with pytest.raises(UserError, match=r"the grader does not pass the unchanged code: .*"
                                        r"FixtureFunctionMarker"):
        run(tmp_path, [guarded], tf_cache, out="alone")
    assert not (tmp_path / "alone" / "manifest.json").exists()


@pytest.mark.parametrize("checked", [False, True], ids=["without-self-grade", "self-graded"])
def test_tests_the_grader_does_not_pass_are_left_out(tmp_path: Path, tf_cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     checked: bool) -> None:
    root = project(tmp_path, {"tests/test_plugins.py": AUTOLOAD})
    if not checked:
        without_self_grade(monkeypatch)
    # Any grade is slower than a default timeout of 0 s: the warning a long suite gets.
    monkeypatch.setattr(generate_module, "GRADE_TIMEOUT", 0.0)
    summary, tasks = run(tmp_path, [root], tf_cache)
    assert len(tasks) == 2
    odd = "tests/test_plugins.py::test_plugins_autoload"
    result = grade_reference(tasks[0], tmp_path / "ws")
    if not checked:
        assert odd in tasks[0].record["PASS_TO_PASS"]
        assert result.reward == 0.0 and odd in result.failed
        return
    (entry,) = summary.sources
    assert entry["ungradable_tests"] == [odd]
    assert any("more than task.grade's default timeout (0s)" in w for w in summary.warnings)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "proj: 1 ungradable (not passed when the grader graded the unchanged code)" in page
    assert f"<code>{odd}</code>" in page
    assert entry["stable"] == 4
    for task in tasks:
        assert odd not in task.record["PASS_TO_PASS"] + task.record["FAIL_TO_PASS"]
    assert result.reward == 1.0 and not result.tampered, result

    # The verdict is cached with the test it left out: a second run grades nothing and
    # leaves out the same test (shards and resumed runs sharing the cache agree).
    def no_grading(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("graded again")

    monkeypatch.setattr(PythonLanguage, "grade_run", no_grading)
    again, _ = run(tmp_path, [root], tf_cache, out="again")
    assert again.sources[0]["ungradable_tests"] == [odd]
    # Five stable tests meet select.min_stable_tests 5 at ingest; the four the grader
    # passes do not.
    with pytest.raises(UserError, match="4 stable tests the grader passes, fewer than "
                                        r"select.min_stable_tests \(5\)"):
        run(tmp_path, [root], tf_cache, out="strict", min_stable=5)

    # A damaged entry counts as none (the source is graded again), and a failure of the
    # source's own while it is graded sets it aside with one line (alone: the run's error).
    (kept,) = [p for p in (tf_cache / "self-grades").glob("*.json")
               if json.loads(p.read_text())["snapshot"] == entry["snapshot"]]
    kept.write_text("{")

    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PythonLanguage, "grade_run", disk_full)
    with pytest.raises(UserError, match=r"the self-grade failed: cannot read or write a file "
                                        r"\(OSError\): .*No space left on device"):
        run(tmp_path, [root], tf_cache, out="full")

"""The grader's checks on real suites: every reference solution scores 1.0 with nothing
reported (canaries planted in their test files, the observer watching), on every quickstart
task and on tasks from real packages; and on each real package an attack from inside the test
process, which wins against the naive grader, scores 0."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT, apply_patch, write_recipe
from naive_grader import naive_reward

import taskforge

# Real packages, pinned sdists that ship their tests (from recipes/pypi-small.yaml, and tabulate;
# click's 2,459 tests cost CI four minutes here for no attack the others miss).
PACKAGES = ("cachetools==8.0.1", "marshmallow==4.4.0", "tabulate==0.9.0")

# Appended to the file the task deleted from: the JUnit writer forgets failures, reached
# through sys.modules under a computed name (the attack of issue 13).
ATTACK = """

import sys as _sys

_reporter = _sys.modules["_py" + "test.junitxml"]._NodeReporter
_reporter.append_failure = _reporter.append_pass
_reporter.append_error = _reporter.append_pass
"""


def generate(recipe_text: str, tmp_path: Path, cache: Path) -> taskforge.TaskSet:
    recipe = write_recipe(tmp_path / "recipe.yaml", recipe_text)
    taskforge.generate(recipe, out=tmp_path / "out", cache=cache)
    return taskforge.load_tasks(tmp_path / "out")


def grade_reference(task: taskforge.Task, dest: Path) -> taskforge.GradeResult:
    ws = task.materialize(dest)
    apply_patch(ws, task.record["patch"])
    return task.grade(ws)


@pytest.mark.slow
def test_every_quickstart_reference_scores_one_with_nothing_reported(tf_cache: Path,
                                                                    tmp_path: Path) -> None:
    recipe = yaml.safe_load((REPO_ROOT / "recipes" / "quickstart.yaml").read_text())
    # javademo's references are graded in tests/test_java_e2e.py (a Java task costs a minute
    # to make and another to grade: every run compiles the tree) and tsdemo's in
    # tests/test_javascript_typescript.py. Eight tasks a source keep every strategy (the
    # seeded order is stratified by strategy) at half `make run`'s cost.
    graded_elsewhere = ("javademo", "tsdemo")
    recipe["sources"] = [{"path": str(REPO_ROOT / source["path"])}
                         for source in recipe["sources"]
                         if Path(source["path"]).name not in graded_elsewhere]
    recipe["select"]["max_tasks_per_source"] = 8
    text = yaml.safe_dump(recipe)
    tasks = generate(text, tmp_path, tf_cache)
    assert len(tasks) >= 24
    assert len({task.record["strategy"] for task in tasks}) >= 6
    wrong = {}
    for task in tasks:
        result = grade_reference(task, tmp_path / "ws" / task.instance_id)
        if (result.reward, result.tampered) != (1.0, ()):
            wrong[task.instance_id] = (result.reward, result.tampered)
    assert wrong == {}


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_real_package_references_score_one_and_an_in_process_attack_zero(
        package: str, tf_cache: Path, tmp_path: Path) -> None:
    tasks = generate(f"""\
        name: grade-real
        seed: 0
        sources:
          - pypi: "{package}"
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 4}}
        task: {{tests_visible: true, keep_docstrings: true}}
        verify: {{repeats: 1, timeout_s: 600, full_suite: false}}
        sandbox: auto
    """, tmp_path, tf_cache)
    # Four candidates for two tasks: a stub can break collection (cachetools' first does).
    assert len(tasks) >= 2
    for task in list(tasks)[:2]:
        result = grade_reference(task, tmp_path / "ref" / task.instance_id)
        assert (result.reward, result.resolved, result.tampered) == (1.0, True, ()), result
    task = tasks[0]
    ws = task.materialize(tmp_path / "attack")
    target = ws / task.record["deleted"][0]["path"]
    target.write_text(target.read_text() + textwrap.dedent(ATTACK))
    (tmp_path / "naive").mkdir()
    assert naive_reward(task, ws, tmp_path / "naive") == 1.0  # the positive control
    result = task.grade(ws)
    assert result.reward == 0.0
    assert any("_pytest.junitxml._NodeReporter.append_failure was replaced" in reason
               for reason in result.tampered), result.tampered

"""A run that did not run what it was given (a session that died at start) is no evidence: its
outcomes read as every selected test failing, which in the task state is a FAIL_TO_PASS set
that proves nothing (a screened candidate whose covering tests all fail agreed with it), and
for a trivial solution a gate passed for nothing. Found when warm runs in humanize's
environment died at start and `generate` still emitted its tasks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sources import ingest_source
from taskforge.verify.gates import score_null_solution
from taskforge.verify.protocol import label_tests

FILES = {
    "pyproject.toml": setuptools_pyproject("calc", "0.1"),
    "calc/__init__.py": "",
    "calc/core.py": "def double(x):\n    return 2 * x\n",
    "tests/test_core.py": "from calc.core import double\n\n\n"
                          "def test_two():\n    assert double(1) == 2\n\n\n"
                          "def test_four():\n    assert double(2) == 4\n",
}
TESTS = ["tests/test_core.py::test_four", "tests/test_core.py::test_two"]


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner]:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    root = make_project(tmp_path_factory.mktemp("calc"), FILES)
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    return snapshot.root, Runner(language_named("python"), env, get_sandbox("none"), 120,
                                 cache=cache)


def test_a_run_that_died_at_start_is_rejected_not_read_as_failures(calc, tmp_path: Path) -> None:
    tree, runner = calc
    ws = tmp_path / "ws"
    shutil.copytree(tree, ws)
    (ws / "conftest.py").write_text("raise RuntimeError('the session dies at start')\n")
    # Positive control: read as outcomes, every test failed and no file failed to load: a
    # FAIL_TO_PASS set, were the run taken at its word.
    run = runner.run(ws, select=TESTS)
    assert all(run.outcomes[t] != "passed" for t in TESTS) and not run.collection_errors
    assert sorted(run.unreported) == TESTS
    with pytest.raises(Rejected) as err:
        label_tests(ws, "", TESTS, runner, repeats=1, reference_repeats=0)
    assert err.value.reason == "run-broken" and "task state: 2 selected tests" in err.value.detail
    with pytest.raises(Rejected) as err:
        score_null_solution(ws, TESTS, runner)
    assert err.value.reason == "run-broken" and "trivial solution" in err.value.detail


def test_a_run_that_broke_midway_is_rejected_not_read_as_failures(calc, tmp_path: Path) -> None:
    """A project hook that raises once a test has failed ends pytest's session (INTERNALERROR,
    which the JUnit XML records as an error of a `pytest.internal` case): the tests after it
    never ran. Not a file that failed to load, so no excuse for their missing results."""
    tree, runner = calc
    ws = tmp_path / "ws"
    shutil.copytree(tree, ws)
    (ws / "conftest.py").write_text(
        "def pytest_runtest_logreport(report):\n"
        "    if report.failed:\n"
        "        raise RuntimeError('a hook breaks on a failure')\n")
    (ws / "calc/core.py").write_text("def double(x):\n    return 2 * x if x > 1 else 0\n")
    # Positive control: read as outcomes, neither test passed (test_four never ran); taken
    # for a file that failed to load, the internal error excused that: both FAIL_TO_PASS
    run = runner.run(ws, select=TESTS)
    assert all(run.outcomes[t] != "passed" for t in TESTS), run.log_tail
    assert "tests/test_core.py::test_four" in run.unreported
    assert not run.collection_errors
    with pytest.raises(Rejected) as err:
        label_tests(ws, "", TESTS, runner, repeats=1, reference_repeats=0)
    assert err.value.reason == "run-broken" and "(exit 3)" in err.value.detail  # pytest's internal error


def test_tests_in_a_file_that_no_longer_loads_are_the_deletion_s_doing(calc,
                                                                        tmp_path: Path) -> None:
    """A deletion that breaks a test file's import leaves its tests unreported too, with the
    file's collection error to account for them: they fail in the task state."""
    tree, runner = calc
    ws = tmp_path / "ws"
    shutil.copytree(tree, ws)
    (ws / "calc/core.py").write_text("def triple(x):\n    return 3 * x\n")
    labels = label_tests(ws, "", TESTS, runner, repeats=1, reference_repeats=0)
    assert labels.fail_to_pass == TESTS
    assert score_null_solution(ws, TESTS, runner) == {"passed": 0, "of": 2}

"""A selecting run builds only the tests its selection names (`pytest_pycollect_makeitem` in
the pytest plugin): the other functions of a module are never parametrized, and what is
selected runs and reports exactly as in a run that built everything and deselected the rest.
A selected test the narrowing would miss reports nothing, which fails the run closed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.languages.base import Runner
from taskforge.verify.protocol import label_tests

# Each parametrized function's ids are made by a callable that notes, in a file beside the
# module, that pytest built that function's items.
TESTS_FILE = '''\
import os
import unittest

import pytest

from calc.core import double

BUILT = os.path.join(os.path.dirname(__file__), "built.log")


def noted(name):
    def ids(value):
        with open(BUILT, "a") as log:
            log.write(name + "\\n")
        return str(value)
    return ids


@pytest.mark.parametrize("x", [1, 2], ids=noted("test_param"))
def test_param(x):
    assert double(x) == 2 * x


@pytest.mark.parametrize("x", [1, 2, 3], ids=noted("test_unselected"))
def test_unselected(x):
    assert double(x) == 2 * x


@pytest.mark.parametrize("s", ["a::b", "c[d]"])
def test_odd_ids(s):
    assert double(s) == s + s


class TestOuter:
    class TestInner:
        def test_deep(self):
            assert double(3) == 6

    def test_method(self):
        assert double(0) == 0


class TestCaseStyle(unittest.TestCase):
    def test_unit(self):
        self.assertEqual(double(4), 8)


test_alias = test_param
'''

FILES = {
    "pyproject.toml": setuptools_pyproject("calc", "0.1"),
    "calc/__init__.py": "",
    "calc/core.py": "def double(x):\n    return x + x\n",
    "tests/test_core.py": TESTS_FILE,
}
SELECTED = ["tests/test_core.py::TestCaseStyle::test_unit",
            "tests/test_core.py::TestOuter::TestInner::test_deep",
            "tests/test_core.py::test_alias[2]",
            "tests/test_core.py::test_odd_ids[a::b]",
            "tests/test_core.py::test_odd_ids[c[d]]",
            "tests/test_core.py::test_param[1]"]


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner]:
    project = ingest_path_project(make_project(tmp_path_factory.mktemp("calc"), FILES),
                                  tmp_path_factory.mktemp("cache"))
    return project.source.snapshot.root, project.verifier().runner


def _workspace(tree: Path, dest: Path) -> Path:
    shutil.copytree(tree, dest)
    return dest


def _built(ws: Path) -> set[str]:
    log = ws / "tests" / "built.log"
    return set(log.read_text().split()) if log.exists() else set()


def test_a_selecting_run_builds_only_what_it_selects_and_reports_alike(calc, tmp_path) -> None:
    tree, runner = calc
    # Positive control: a run of the whole suite builds every parametrized function (the
    # log sees it), and its outcomes for the selected tests are the reference.
    whole_ws = _workspace(tree, tmp_path / "whole")
    whole = runner.run(whole_ws)
    assert _built(whole_ws) == {"test_param", "test_unselected"}
    assert all(whole.outcomes[t] == "passed" for t in SELECTED)
    assert "tests/test_core.py::test_unselected[3]" in whole.outcomes

    ws = _workspace(tree, tmp_path / "selected")
    run = runner.run(ws, select=SELECTED)
    assert _built(ws) == {"test_param"}  # test_alias is test_param: its ids, noted so
    assert run.outcomes == {t: whole.outcomes[t] for t in SELECTED}
    assert not run.unreported and not run.collection_errors


def test_a_failing_selected_test_still_fails(calc, tmp_path) -> None:
    tree, runner = calc
    ws = _workspace(tree, tmp_path / "ws")
    (ws / "calc/core.py").write_text("def double(x):\n    return x\n")
    run = runner.run(ws, select=SELECTED)
    assert run.outcomes["tests/test_core.py::TestOuter::TestInner::test_deep"] == "failed"
    assert run.outcomes["tests/test_core.py::test_param[1]"] == "failed"
    assert not run.unreported


def test_a_selected_test_that_was_not_built_fails_the_run_closed(calc, tmp_path) -> None:
    """A selected id whose function the module no longer has at its top (a test renamed by
    a decorator, say) is never built: the run reports nothing for it, and the protocol takes
    that for a broken run, not for a failing test."""
    tree, runner = calc
    ws = _workspace(tree, tmp_path / "ws")
    missing = "tests/test_core.py::test_gone"
    run = runner.run(ws, select=[*SELECTED, missing])
    assert run.unreported == (missing,)
    with pytest.raises(Rejected) as err:
        label_tests(ws, "", [*SELECTED, missing], runner, repeats=1, reference_repeats=0)
    assert err.value.reason == "run-broken"


def test_a_grading_run_builds_every_test_as_before(calc, tmp_path) -> None:
    """The grader's runs (audited: TASKFORGE_AUDIT) are left to pytest's own collection."""
    from taskforge.languages.python.testing.runner import run_tests

    tree, runner = calc
    ws = _workspace(tree, tmp_path / "ws")
    audit = tmp_path / "audit"
    audit.mkdir()
    for name in ("solution.txt", "protected.txt"):
        (audit / name).write_text("")
    run = run_tests(runner.env, ws, runner.sandbox, timeout=120, select=SELECTED,
                    extra_env={"TASKFORGE_AUDIT": str(audit)}, writable=(audit,))
    assert all(run.outcomes[t] == "passed" for t in SELECTED)
    assert _built(ws) == {"test_param", "test_unselected"}

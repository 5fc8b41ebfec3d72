"""A failing test's report outside grading (`taskforge_pytest_plugin._crash_line`): where it
raised and what, instead of pytest's traceback report, which pytest builds for every
failure whatever `--tb` prints. Outcomes are what pytest decides either way, whatever the
failure: an assertion, a unittest failure, an exception whose message cannot be made, an
error in a fixture, an xfail."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import make_project, setuptools_pyproject
from test_sandbox import require

from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import SourceSpec
from taskforge.sources import ingest_source

FILES = {
    "pyproject.toml": setuptools_pyproject("failing", "0.1"),
    "failing/__init__.py": "def deep():\n    raise NotImplementedError('deleted')\n",
    # Counts pytest's traceback reports (its runner's code, changed: never where grading)
    "tests/conftest.py": """\
        from _pytest._code import ExceptionInfo

        made = []
        _getrepr = ExceptionInfo.getrepr


        def counting(self, *args, **kwargs):
            made.append(self.typename)
            return _getrepr(self, *args, **kwargs)


        ExceptionInfo.getrepr = counting
        crashes = []


        def pytest_runtest_logreport(report):
            # what a project's hook may read of a failure (pytest's report type has it)
            if report.failed and report.when == "call":
                assert report.longrepr.reprtraceback is not None
                crashes.append(report.longrepr.reprcrash.message.splitlines()[0])


        def pytest_sessionfinish(session):
            with open("reports.txt", "w") as f:
                f.write("\\n".join(made))
            with open("crashes.txt", "w") as f:
                f.write("\\n".join(crashes))
        """,
    "tests/test_failing.py": """\
        import unittest

        import pytest

        import failing


        class Unprintable(Exception):
            def __str__(self):
                raise RuntimeError("no message")


        @pytest.fixture
        def broken():
            raise KeyError("setup")


        def test_passes():
            assert True


        def test_asserts():
            assert [1, 2] == [1, 3]


        def test_reaches_a_stub():
            failing.deep()


        def test_unprintable():
            raise Unprintable()


        def test_fixture_errors(broken):
            pass


        @pytest.mark.xfail(strict=True)
        def test_expected_to_fail():
            failing.deep()


        class Case(unittest.TestCase):
            def test_unittest_failure(self):
                self.assertEqual(1, 2)
        """,
}
T = "tests/test_failing.py::"


def test_failures_report_where_and_what(tmp_path: Path) -> None:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    root = make_project(tmp_path / "src", FILES)
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = run_tests(env, workspace, require("none"), timeout=120)
    assert run.outcomes == {
        T + "test_passes": "passed", T + "test_asserts": "failed",
        T + "test_reaches_a_stub": "failed", T + "test_unprintable": "failed",
        T + "test_fixture_errors": "error", T + "test_expected_to_fail": "skipped",
        T + "Case::test_unittest_failure": "failed"}, run.log_tail
    # What `--tb=line` prints for each failure: the report's line.
    printed = run.log_tail.splitlines()
    test_file = str(workspace / "tests/test_failing.py")
    assert f"{test_file}:23: assert [1, 2] == [1, 3]" in printed
    assert f"{workspace / 'failing/__init__.py'}:2: NotImplementedError: deleted" in printed
    assert f"{test_file}:31: test_failing.Unprintable: <exception str() failed>" in printed
    assert any(line.endswith("AssertionError: 1 != 2") for line in printed)
    # pytest made a traceback report only for the error in a fixture; without the crash
    # line it makes five
    assert (workspace / "reports.txt").read_text().split() == ["KeyError"]
    assert (workspace / "crashes.txt").read_text().splitlines() == [
        "assert [1, 2] == [1, 3]", "NotImplementedError: deleted",
        "test_failing.Unprintable: <exception str() failed>", "AssertionError: 1 != 2"]

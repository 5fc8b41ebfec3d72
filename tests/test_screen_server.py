"""The screen's server (`pytest_plugin/taskforge_screen.py`) forks a child per job; children
report through the server's own hook, write their output nowhere and never a JUnit file, so
the plugins that only present reports hear none there: pytest's JUnit writer leaves the
server before the first fork (in every child it built an XML entry per test, and compiled
its regular expressions anew), and the terminal reporter stays registered without its
per-test hooks. What a test may use of them keeps working: the `record_*` fixtures, the
reporter's `write_line` (the server's session seconds come from its own last line:
`test_reference_run.py`'s shared-seconds test). A test that looks for the writer, or for
what the reporter counted, fails in a child; such a candidate goes no further than the
screen (the screen may only reject)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

from taskforge.languages.python.testing import zygote
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.python.testing.screen import ScreenJob, screen
from taskforge.workspace import scratch_copy

pytestmark = pytest.mark.slow  # a real environment, baseline and screen server

FILES = {
    "pyproject.toml": setuptools_pyproject("rec", "0.1"),
    "rec/__init__.py": "",
    "rec/core.py": """\
        def double(value):
            return value + value
        """,
    "tests/test_core.py": """\
        from _pytest.junitxml import LogXML

        from rec import core


        def test_records(record_property, record_xml_attribute, record_testsuite_property):
            record_property("key", "value")
            record_xml_attribute("attribute", "value")
            record_testsuite_property("suite", "value")
            assert core.double(2) == 4


        def test_the_junit_writer_listens(request):
            plugins = request.config.pluginmanager.get_plugins()
            assert any(isinstance(plugin, LogXML) for plugin in plugins)
            assert core.double(1) == 2


        def test_the_terminal_reporter_is_there(request):
            reporter = request.config.pluginmanager.get_plugin("terminalreporter")
            reporter.write_line("past the capture")
            assert core.double(3) == 6


        def test_the_terminal_reporter_heard_the_tests_before(request):
            reporter = request.config.pluginmanager.get_plugin("terminalreporter")
            assert reporter.stats.get("passed")
            assert core.double(4) == 8
        """,
}
RECORDS = "tests/test_core.py::test_records"
LISTENS = "tests/test_core.py::test_the_junit_writer_listens"
THERE = "tests/test_core.py::test_the_terminal_reporter_is_there"
HEARD = "tests/test_core.py::test_the_terminal_reporter_heard_the_tests_before"
TESTS = (RECORDS, LISTENS, THERE, HEARD)


@pytest.fixture(scope="module")
def rec(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    return ingest_path_project(make_project(tmp_path_factory.mktemp("rec"), FILES), tf_cache)


def test_children_hear_no_presenting_plugin_and_what_tests_use_of_them_works(rec) -> None:
    source, runner = rec.source, rec.verifier().runner
    job = ScreenJob(id="double\0original", modules=("rec.core",),
                    targets=(("rec/core.py", 1, "double"),), body="original", tests=TESTS)
    [result] = screen([job], source.snapshot.root, runner).values()
    # the `record_*` fixtures and the terminal reporter work in a child as in a fresh run;
    # the JUnit writer is not there, and the reporter heard no test
    assert result.runs == ({RECORDS: "passed", LISTENS: "failed", THERE: "passed",
                            HEARD: "failed"},)
    # Positive control: a fresh run of the same tree has the writer (the runner's JUnit
    # file is where its outcomes come from) and a reporter that counts the tests, so the
    # tests that look for them pass there.
    with scratch_copy(source.snapshot.root, runner.cache, prefix="fresh-") as workspace:
        fresh = run_tests(runner.env, workspace, runner.sandbox, timeout=120, select=TESTS)
    assert fresh.outcomes == dict.fromkeys(TESTS, "passed"), fresh.log_tail


def test_the_server_is_a_warm_run(rec, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server runs in a copy under the warm root, so a zygote forks it (its interpreter,
    pytest and the environment's plugins imported once per environment and worker, not once
    per server), with the outcomes a server of its own gives (`TASKFORGE_WARM_RUNS=0`)."""
    source, runner = rec.source, rec.verifier().runner
    job = ScreenJob(id="double\0original", modules=("rec.core",),
                    targets=(("rec/core.py", 1, "double"),), body="original", tests=TESTS)
    served = zygote.ZYGOTES.served
    [warm] = screen([job], source.snapshot.root, runner).values()
    assert zygote.ZYGOTES.served == served + 1
    monkeypatch.setenv("TASKFORGE_WARM_RUNS", "0")
    [cold] = screen([job], source.snapshot.root, runner).values()
    assert zygote.ZYGOTES.served == served + 1  # positive control: its own process
    assert warm.runs == cold.runs == ({RECORDS: "passed", LISTENS: "failed", THERE: "passed",
                                       HEARD: "failed"},)

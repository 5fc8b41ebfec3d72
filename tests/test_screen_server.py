"""The screen's server (`pytest_plugin/taskforge_screen.py`) forks a child per job; children
report through the server's own hook and never write a JUnit file, so pytest's JUnit writer
leaves the server before the first fork (in every child it built an XML entry per test, and
compiled its regular expressions anew). It only reports: the `record_*` fixtures a test may
use keep working (the server's session seconds come from its own last line:
`test_reference_run.py`'s shared-seconds test). A test that looks for the writer itself
fails in a child; such a candidate goes no further than the screen (the screen may only
reject)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

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
        """,
}
RECORDS = "tests/test_core.py::test_records"
LISTENS = "tests/test_core.py::test_the_junit_writer_listens"


@pytest.fixture(scope="module")
def rec(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    return ingest_path_project(make_project(tmp_path_factory.mktemp("rec"), FILES), tf_cache)


def test_children_run_without_the_junit_writer_and_its_fixtures_still_work(rec) -> None:
    source, runner = rec.source, rec.verifier().runner
    job = ScreenJob(id="double\0original", modules=("rec.core",),
                    targets=(("rec/core.py", 1, "double"),), body="original",
                    tests=(RECORDS, LISTENS))
    [result] = screen([job], source.snapshot.root, runner).values()
    # the `record_*` fixtures work in a child as in a fresh run; the writer is not there
    assert result.runs == ({RECORDS: "passed", LISTENS: "failed"},)
    # Positive control: a fresh run of the same tree has the writer (the runner's JUnit
    # file is where its outcomes come from), so the test that looks for it passes there.
    with scratch_copy(source.snapshot.root, runner.cache, prefix="fresh-") as workspace:
        fresh = run_tests(runner.env, workspace, runner.sandbox, timeout=120,
                          select=[RECORDS, LISTENS])
    assert fresh.outcomes == {RECORDS: "passed", LISTENS: "passed"}, fresh.log_tail

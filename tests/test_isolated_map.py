"""The baseline's isolated map (every test alone, in a fork of the collected session) on tests
that behave differently alone: one that hangs, one whose process dies, one that leaves a
process behind holding the measurement's pipe. The baseline still ends, the other tests are
measured, and what a test starts is ended with it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import make_project

from taskforge.ingest import ingest
from taskforge.languages.python.testing import baseline as baseline_module
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox

pytestmark = pytest.mark.slow


PYPROJECT = """\
    [project]
    name = "alone"
    version = "1.0"
    [build-system]
    requires = ["setuptools>=61"]
    build-backend = "setuptools.build_meta"
"""
# Each test knows whether it is the first test of its process: alone, it always is.
COUNTING_CONFTEST = """\
    import pytest

    RUN = []


    @pytest.fixture(autouse=True)
    def count():
        RUN.append(1)
"""


def alone_project(tmp_path: Path) -> Path:
    left_behind = tmp_path / "left-behind.pid"
    return make_project(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "alone/__init__.py": "",
        "alone/core.py": """\
            _CACHE = {}


            def table():
                if "t" not in _CACHE:
                    _CACHE["t"] = build()
                return _CACHE["t"]


            def build():
                rows = {"a": 1}
                rows["b"] = rows["a"] + 1
                return rows


            def halve(x):
                half = x / 2
                return half
        """,
        "tests/conftest.py": COUNTING_CONFTEST,
        "tests/test_alone.py": f"""\
            import os
            import threading
            import time

            from alone.core import halve, table

            from conftest import RUN


            def test_first():
                assert table()["a"] == 1


            def test_hangs_alone():
                if len(RUN) == 1:
                    threading.Event().wait()
                assert halve(4) == 2


            def test_dies_alone():
                if len(RUN) == 1:
                    os._exit(3)
                assert halve(2) == 1


            def test_leaves_a_process_alone():
                if len(RUN) == 1:
                    child = os.fork()
                    if child == 0:  # holds every descriptor the test's process has
                        time.sleep(120)
                        os._exit(0)
                    with open({str(left_behind)!r}, "w") as handle:
                        handle.write(str(child))
                assert table()["b"] == 2


            def test_middle():
                assert table()["b"] == 2


            def test_last():
                assert sorted(table()) == ["a", "b"]
        """,
    }, name="alone"), left_behind


@pytest.mark.parametrize("python", ["3.11", "3.12"])  # coverage.py, then sys.monitoring
def test_tests_that_hang_die_or_linger_alone_cost_only_themselves(
        tmp_path: Path, tf_cache: Path, python: str) -> None:
    root, left_behind = alone_project(tmp_path)
    source = ingest(SourceSpec(kind="path", location=str(root), python=python),
                    cache=tf_cache, base_dir=tmp_path, sandbox=get_sandbox("none"), repeats=2,
                    timeout=120, test_timeout=3)
    baseline = source.baseline
    tests = baseline.tests
    assert len(baseline.stable) == len(tests) == 6
    assert baseline.isolated_unmeasured == 2  # the one that hangs alone, the one that dies
    build = baseline.coverage["alone/core.py"][11]  # rows = {"a": 1}
    # Only the first test builds the table in file order, only the last in reverse order:
    # the middle users are its users only alone.
    assert {tests[i].split("::")[1] for i in build} == {
        "test_first", "test_last", "test_middle", "test_leaves_a_process_alone"}
    # The lines a test runs only alone: measured for the one whose leftover process held the
    # pipe open (its measurement is read by length, not to the pipe's end) ...
    body = root / "tests" / "test_alone.py"
    fork_line = [line.strip() for line in body.read_text().splitlines()].index(
        "child = os.fork()") + 1
    assert baseline.coverage["tests/test_alone.py"][fork_line] == (
        tests.index("tests/test_alone.py::test_leaves_a_process_alone"),)
    # ... and that process was ended with the test's fork.
    pid = int(left_behind.read_text())
    assert Path(f"/proc/{os.getpid()}").exists()  # else the check below could not fail
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (FileNotFoundError, IndexError):
        return True


def test_a_fork_does_not_outlive_the_isolated_run_cut_off_by_its_budget(
        tmp_path: Path, tf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget ends the isolated run while a test hangs alone: its fork, in a process group
    of its own (the run's end does not reach it), ends with the session."""
    monkeypatch.setattr(baseline_module, "ISOLATED_MIN_SECONDS", 3.0)
    monkeypatch.setattr(baseline_module, "ISOLATED_RUNS", 1)
    pid_file = tmp_path / "hanging.pid"
    root = make_project(tmp_path, {
        "pyproject.toml": PYPROJECT.replace("alone", "budget"),
        "budget/__init__.py": "def one():\n    return 1\n",
        "tests/conftest.py": COUNTING_CONFTEST,
        "tests/test_budget.py": f"""\
            import os
            import time

            from budget import one

            from conftest import RUN


            def test_one():
                assert one() == 1


            def test_hangs_alone():
                if len(RUN) == 1:
                    with open({str(pid_file)!r}, "w") as handle:
                        handle.write(str(os.getpid()))
                    time.sleep(600)
                assert one() == 1


            def test_two():  # the first in reverse order
                assert one() + one() == 2
        """,
    }, name="budget")
    source = ingest(SourceSpec(kind="path", location=str(root), python="3.12"),
                    cache=tf_cache, base_dir=tmp_path, sandbox=get_sandbox("none"), repeats=2,
                    timeout=120, test_timeout=60)
    assert source.baseline.isolated_unmeasured >= 1
    pid = int(pid_file.read_text())
    assert Path(f"/proc/{os.getpid()}").exists()  # else the check below could not fail
    deadline = time.monotonic() + 10  # the kernel's kill is not instant
    while Path(f"/proc/{pid}").exists() and not _zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)

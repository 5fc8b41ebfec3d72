"""A test that fails half-way may leave garbage whose collection raises: an object holding an
open file in a reference cycle, its `close()` never reached. Under `filterwarnings = error`
the file's `ResourceWarning` becomes an unraisable exception, and pytest reports it in
whatever test is running when the collector frees the object: in a whole-suite run of the
task state a test that runs nothing of the deletion errors (click 8.5.1's
`CliRunner.isolation`, where two `FloatRange` tests took turns). The confirmation run's state
watch (pytest_plugin/taskforge_state.py) tells that there is such garbage, and the candidate
is labelled on every stable test, as the whole suite labels it; a test that failed there with
nothing but the garbage is the collector's choice, and the candidate is rejected as flaky.

Here `read` is that candidate: `test_read` opens a `Handle`, the stub raises before
`close()`, and `tests/test_zlater.py::test_collects` collects garbage (deterministically
where a real suite's collector picks its moment)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.verify import confirm, protocol
from taskforge.verify.reverify import reverify

pytestmark = pytest.mark.slow  # a real environment, baseline, screen and confirmation runs

FILES = {
    "pyproject.toml": setuptools_pyproject("leak", "0.1")
    + '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
    "leak/__init__.py": "",
    "leak/core.py": """\
        import os


        class Handle:
            def __init__(self):
                self.file = open(os.devnull, "rb")
                self.me = self  # a cycle: only the collector frees it

            def close(self):
                self.file.close()
                self.me = None


        def read(handle):
            if handle.file.closed:
                raise ValueError("closed")
            return handle.file.read()


        def size(handle):
            if handle.file.closed:
                return -1
            return len(handle.file.read())
        """,
    "tests/test_core.py": """\
        from leak import core


        def test_read():
            handle = core.Handle()
            assert core.read(handle) == b""
            handle.close()


        def test_size():
            handle = core.Handle()
            try:
                assert core.size(handle) == 0
            finally:
                handle.close()
            assert core.size(handle) == -1  # (no constant passes both: `return 0` is no task)
        """,
    "tests/test_zlater.py": """\
        import gc


        def test_collects():
            gc.collect()
        """,
}
VICTIM = "tests/test_zlater.py::test_collects"


@pytest.fixture(scope="module")
def leak(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    project = ingest_path_project(make_project(tmp_path_factory.mktemp("leak"), FILES), tf_cache)
    return project


def test_the_baseline_leaves_no_garbage_that_raises(leak) -> None:
    assert "gc:unraisable" not in leak.source.baseline.state_left
    assert VICTIM in leak.source.baseline.stable


def test_garbage_that_raises_sends_the_candidate_to_the_whole_suite(leak) -> None:
    """Labelled on every stable test, the victim fails with nothing but the garbage: a
    test the collector chose, which another run may not choose. No task (fail closed)."""
    with pytest.raises(Rejected) as rejected:
        leak.task("read")
    assert rejected.value.reason == "flaky-in-task-state"
    assert rejected.value.detail.startswith(VICTIM + ": failed only with garbage")


def test_the_whole_suites_labels_hold_the_victim(leak, monkeypatch) -> None:
    """Positive control of the victim check: without it, the candidate's labels are the
    whole suite's, the victim in FAIL_TO_PASS, and audit mode agrees."""
    monkeypatch.setattr(protocol, "GARBAGE_VICTIM", "not a name the watch writes")
    record = leak.task("read")
    assert record["verification"]["leaves_state"] == ["gc:unraisable"]
    assert sorted(record["verification"]["tests_run"]) == sorted(leak.source.baseline.stable)
    assert record["FAIL_TO_PASS"] == ["tests/test_core.py::test_read", VICTIM]
    audited = leak.task("read", full_suite=True)
    assert audited["FAIL_TO_PASS"] == record["FAIL_TO_PASS"]


def test_taskforge_verify_finds_the_victim(leak, monkeypatch) -> None:
    """A record whose FAIL_TO_PASS holds a test that failed only with the garbage (as
    `generate` made it before the check: here, the check off) fails re-verification."""
    with monkeypatch.context() as unchecked:
        unchecked.setattr(protocol, "GARBAGE_VICTIM", "not a name the watch writes")
        record = leak.task("read")
    source, verifier = leak.source, leak.verifier
    assert reverify(record, source.snapshot.root, verifier().runner) == [
        "labels: failed only with garbage another test left (the collector's timing, not "
        f"the code's): ['{VICTIM}']"]
    # Positive control: re-verification without the check calls the record verified.
    monkeypatch.setattr(protocol, "GARBAGE_VICTIM", "not a name the watch writes")
    assert reverify(record, source.snapshot.root, verifier().runner) == []


def test_a_failing_test_that_cleans_up_is_no_sign(leak) -> None:
    """`size`'s test closes its handle in `finally`: nothing is left, no whole suite."""
    record = leak.task("size")
    assert record["verification"]["leaves_state"] == []
    assert record["FAIL_TO_PASS"] == ["tests/test_core.py::test_size"]


def test_without_the_sign_the_covering_tests_miss_the_victim(leak, monkeypatch) -> None:
    """Positive control: a baseline that counted such garbage as the suite's own (so no
    sign) labels `read` on its covering tests, the victim passes there, and the whole suite
    (audit mode) disagrees."""
    real = confirm.state_left_behind
    monkeypatch.setattr(confirm, "state_left_behind", lambda runs, failing, baseline: real(
        runs, failing, dataclasses.replace(baseline, state_left=("gc:unraisable",))))
    record = leak.task("read")
    assert record["verification"]["leaves_state"] == []
    assert VICTIM in record["PASS_TO_PASS"]
    with pytest.raises(Rejected) as rejected:
        leak.task("read", full_suite=True)
    assert rejected.value.reason == "audit-disagrees"
    assert VICTIM in rejected.value.detail

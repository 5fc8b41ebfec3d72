"""The screen's server does not wait for a job's child to exit before the next job starts
(`_exiting` in the plugin): the kernel frees the child's copy of the server's memory (~2.5 ms
a child) while the next job runs. The attack on that: the kernel frees a process's memory
before it closes its files, so a test that keeps a socket bound (a server fixture never
stopped) and much memory makes the next job's same test find its port still taken, an error
that is no fault of the trivial solution that job runs. A trivial solution that passes its
test when run fresh would then seem to fail it, and the candidate would become a task a
constant solves. The positive control: a naive reaper (the child reports, then exits with its
files open) loses the port to the exiting child, here, every time; the defence, the child
closing every descriptor before it reports, keeps it free. End to end, on a project whose one
test binds a port and fills half a gigabyte before it asserts `ready(1) is True`: `return
True` passes it in a fresh run, and the screen, which runs it right after `pass` failed the
same test, must reject the candidate for it."""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path

import pytest
from conftest import (
    PathProject,
    free_port,
    ingest_path_project,
    make_project,
    passes_with_body,
    setuptools_pyproject,
)

from taskforge.executors import LocalExecutor
from taskforge.languages.python.testing.runner import PLUGIN_DIR

_spec = importlib.util.spec_from_file_location("taskforge_screen_reaping_under_test",
                                               PLUGIN_DIR / "taskforge_screen.py")
taskforge_screen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(taskforge_screen)

BALLAST = 512 * 2**20  # what the exiting child frees: ~40-60 ms here, on one core or two


def files(port: int) -> dict[str, str]:
    return {
        "pyproject.toml": setuptools_pyproject("reaped", "0.1"),
        "reaped/__init__.py": "",
        "reaped/core.py": """\
            def ready(value):
                number = int(value)
                flag = number > 0
                return flag
            """,
        "tests/test_ready.py": f"""\
            import socket

            from reaped import core

            HELD = []  # never closed: the port stays bound until the process ends


            def test_ready():
                listener = socket.socket()
                listener.bind(("127.0.0.1", {port}))
                listener.listen()
                HELD.append(listener)
                HELD.append(bytearray({BALLAST}))  # written: its process's exit frees it
                assert core.ready(1) is True
            """,
    }


def _port_free_when_reported(close_first: bool) -> bool:
    """A child binds a port and fills BALLAST, reports on a pipe (with `close_first`, after
    closing every other descriptor as the server's children do) and exits; whether the port
    can be bound the moment its report ends, before it is reaped."""
    port = free_port()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            os.close(read_end)
            held = socket.socket()
            held.bind(("127.0.0.1", port))
            held.listen()
            ballast = bytearray(BALLAST)
            if close_first:
                taskforge_screen._close_all_but(write_end)
            os.write(write_end, b"done" + bytes(ballast[:1]))
            os.close(write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        while os.read(read_end, 1 << 16):
            pass
        with socket.socket() as claimant:
            try:
                claimant.bind(("127.0.0.1", port))
            except OSError:
                return False
            return True
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)


def test_a_child_that_reports_with_its_files_open_still_holds_them() -> None:
    # the positive control: what the next job would meet after a naive reaper
    assert [_port_free_when_reported(close_first=False) for _ in range(3)] == [False] * 3
    # the defence the server's children use
    assert [_port_free_when_reported(close_first=True) for _ in range(3)] == [True] * 3


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> PathProject:
    return ingest_path_project(make_project(tmp_path_factory.mktemp("reaped"),
                                            files(free_port())), tf_cache)


@pytest.mark.slow  # a real environment, baseline and screen server
def test_a_port_the_last_job_held_does_not_fail_the_next(project: PathProject,
                                                         tmp_path: Path) -> None:
    # `return True` passes the test in a fresh run: the candidate is no task
    assert passes_with_body(project, "reaped/core.py", "ready", "return True",
                            "tests/test_ready.py", tmp_path)
    candidate = project.candidates["ready"]
    verdict = project.verifier().screen([candidate], LocalExecutor(1))[candidate.key]
    assert verdict.screened, verdict
    assert verdict.rejection is not None and verdict.rejection.reason == "trivial-solution", \
        verdict
    assert "return True" in verdict.rejection.detail, verdict.rejection

"""The screen's server forks each job's child ahead, while the job before it runs
(`taskforge_screen._Parked`): a job goes to the child waiting for it, or, when that child is
gone, to one forked then; the child left waiting at the end is ended and reaped, as is
every child that ran a job (the server does not wait for their exits, `_exiting`)."""

from __future__ import annotations

import importlib.util
import os
import signal

import pytest

from taskforge.languages.python.testing.runner import PLUGIN_DIR

_spec = importlib.util.spec_from_file_location("taskforge_screen_parked_under_test",
                                               PLUGIN_DIR / "taskforge_screen.py")
taskforge_screen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(taskforge_screen)

# A job whose function is in no index: its child answers at once, without running a test.
JOB = {"id": "nowhere", "modules": [], "targets": [["/nowhere.py", 1, "gone"]],
       "body": "raise", "tests": [], "repeats": 1}
ANSWER = {"outcomes": None, "unscreenable": "function not found in memory"}


@pytest.fixture
def server():
    """The module's state as a server starts: no child waiting; none left afterwards."""
    taskforge_screen._dismiss_parked()
    yield
    taskforge_screen._dismiss_parked()


def _alive(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def _job() -> dict:
    return {key: value for key, value in
            taskforge_screen._fork_job(None, {}, {}, JOB, 10.0).items() if key != "seconds"}


def test_each_job_runs_in_the_child_forked_while_the_one_before_ran(server) -> None:
    assert _job() == ANSWER
    waiting = taskforge_screen._parked
    assert waiting is not None and _alive(waiting.pid)
    assert _job() == ANSWER
    # the waiting child took that job; another waits for the next
    assert taskforge_screen._parked is not None and taskforge_screen._parked.pid != waiting.pid
    # its exit was not waited for (`_exiting`): it is reaped once gone, at the latest with
    # the server's end
    assert waiting.pid in taskforge_screen._exiting
    taskforge_screen._dismiss_parked()
    assert taskforge_screen._exiting == []
    with pytest.raises(ChildProcessError):
        os.waitpid(waiting.pid, os.WNOHANG)  # reaped: nothing of it is left


def test_a_job_whose_waiting_child_is_gone_runs_in_a_child_forked_then(server) -> None:
    assert _job() == ANSWER
    waiting = taskforge_screen._parked
    os.kill(waiting.pid, signal.SIGKILL)
    os.waitid(os.P_PID, waiting.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
    assert _job() == ANSWER
    assert not _alive(waiting.pid)  # reaped


def test_the_child_left_waiting_ends_with_the_server(server) -> None:
    assert _job() == ANSWER
    waiting = taskforge_screen._parked
    taskforge_screen._dismiss_parked()
    assert taskforge_screen._parked is None
    with pytest.raises(ChildProcessError):
        os.waitpid(waiting.pid, os.WNOHANG)  # reaped: nothing of it is left

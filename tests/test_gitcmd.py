"""An interrupted git leaves nothing running that could still write into the repository its
caller is about to remove (a Ctrl-C during a snapshot's commit)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from taskforge.gitcmd import git, git_env


def alive_with(token: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def interrupt_after(seconds: float) -> threading.Timer:
    main = threading.main_thread().ident
    timer = threading.Timer(seconds, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    return timer


def slow_alias(token: str) -> list[str]:
    # git runs the alias through a shell: git, a shell and a sleep, like a clone's helpers
    return ["-c", f"alias.slow=!sleep 30 # {token}", "slow"]


def test_an_interrupted_git_is_gone_with_what_it_started_when_the_interrupt_arrives(
        tmp_path: Path) -> None:
    token = f"taskforge-git-{os.getpid()}-{time.monotonic_ns()}"
    timer = interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            git(*slow_alias(token), cwd=tmp_path)
    finally:
        timer.cancel()
    assert alive_with(token) == []


def test_positive_control_subprocess_run_leaves_git_s_children_running(tmp_path: Path) -> None:
    """What `git` did before: subprocess.run kills git alone, without waiting."""
    token = f"taskforge-git-{os.getpid()}-{time.monotonic_ns()}"
    timer = interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            subprocess.run(["git", *slow_alias(token)], cwd=tmp_path, env=git_env(),
                           capture_output=True)
        assert alive_with(token) != []
    finally:
        timer.cancel()
        for pid in alive_with(token):
            os.kill(pid, signal.SIGKILL)

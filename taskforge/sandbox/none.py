"""No containment: a plain subprocess in its own process group. For development only."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from taskforge.sandbox.base import ExecResult, Mounts, Sandbox

OUTPUT_TAIL = 20_000
_warned = False
_warn_lock = threading.Lock()


class NoSandbox(Sandbox):
    name = "none"

    @classmethod
    def available(cls) -> bool:
        return True

    def exec(self, argv: Sequence[str], *, workspace: Path, env: Mapping[str, str],
             timeout: float, mounts: Mounts | None = None) -> ExecResult:
        global _warned
        with _warn_lock:  # workers share the process: warn once, not once per thread
            if not _warned and os.environ.get("TASKFORGE_QUIET_SANDBOX") != "1":
                print("taskforge: warning: sandbox 'none': test suites run uncontained on this host",
                      file=sys.stderr)
            _warned = True
        start = time.monotonic()
        # A new session makes the whole process tree one group, so a timeout kills daemons too.
        proc = subprocess.Popen(list(argv), cwd=workspace, env=dict(env), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            out, _ = proc.communicate()
        finally:
            _kill_group(proc.pid)  # background processes the command left behind
        text = out.decode(errors="replace")[-OUTPUT_TAIL:]
        return ExecResult(exit_code=proc.returncode if not timed_out else -signal.SIGKILL,
                          output=text, duration_s=time.monotonic() - start, timed_out=timed_out)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)

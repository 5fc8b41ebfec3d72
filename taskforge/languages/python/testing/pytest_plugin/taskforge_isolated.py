"""Per-test line coverage with every test alone: the baseline's third map.

The forward and reverse runs measure each test where the suite's order puts it. A test that
only reuses what an earlier test built (a cache filled by its first user, a lexer built once, a
wrapper kept per stream) executes none of it there, unless it comes first in one of the two
orders; deleting that code still fails it. Here each test runs in a fork of the collected
session, which has run no test: it sets up its own fixtures, of every scope, fills its own
caches, and what it runs is measured from the fork on. The fork runs setup and call, then ends
(no teardown: the forward and reverse runs measured those, and give the outcomes; this run
reports none).

It runs inside the project's environment, loaded by taskforge_pytest_plugin, and imports
nothing from taskforge. Steered by:
- TASKFORGE_ISOLATED: the output, one JSON line per measured test
  ({"test": node id, "files": {filename: [line, ...]}}), appended as each test ends, so a run
  that is stopped keeps what it measured;
- TASKFORGE_COVER_ROOT: the tree measured;
- TASKFORGE_ISOLATED_TIMEOUT: seconds a test's fork may run; then its process group is killed
  and the test has no line here (the ordered runs' lines remain).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time

import pytest


def _start_measuring(root):
    """Measure what runs from now on under `root`; returns the function that stops and
    gives {filename: [line, ...]}. sys.monitoring where there is one (as the ordered runs),
    else coverage.py, in memory (no data file: one per test would cost more than the test)."""
    if hasattr(sys, "monitoring"):
        from taskforge_tracer import Tracer

        tracer = Tracer(root, lines=True)
        tracer.start()

        def stop():
            tracer.stop()
            return {name: sorted(lines) for name, lines in tracer.current.items() if lines}

        return stop
    import coverage

    measure = coverage.Coverage(data_file=None, config_file=False, source=[root])
    measure.start()

    def stop():
        measure.stop()
        data = measure.get_data()
        return {name: sorted(data.lines(name)) for name in data.measured_files()
                if data.lines(name)}

    return stop


class Isolated:
    def __init__(self, out: str, root: str, timeout: float) -> None:
        self.out, self.root, self.timeout = out, root, timeout

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the test's own process
            os.close(read_end)
            try:
                os.setpgid(0, 0)  # so that a timeout ends what the test started too
                self._measure(item, write_end)
            finally:
                os._exit(0)
        os.close(write_end)
        # As the fork does, whichever runs first (it may have ended already).
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        payload = self._collect(pid, read_end)
        if payload is not None:
            with open(self.out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"test": item.nodeid, "files": payload}) + "\n")
        return True  # the test ran (in its fork): pytest's own protocol does not run it again

    def _measure(self, item, write_end):
        from _pytest.runner import call_and_report

        stop = _start_measuring(self.root)
        if call_and_report(item, "setup", log=False).passed:
            call_and_report(item, "call", log=False)
        data = json.dumps(stop()).encode()
        with os.fdopen(write_end, "wb") as pipe:
            # Its length first: a process the test left behind may hold the pipe open, so
            # its end is no sign that the measurement is complete.
            pipe.write(len(data).to_bytes(8, "big") + data)

    def _collect(self, pid, read_end):
        """The fork's measurement, or None if it ran past the timeout or died first. Its
        process group (what the test started, too) is ended either way, before the fork is
        reaped: until then no other group can take its number."""
        received = bytearray()
        deadline = time.monotonic() + self.timeout
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            while len(received) < 8 or len(received) < 8 + int.from_bytes(received[:8], "big"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    received.clear()
                    break
                chunk = pipe.read(1 << 16)
                if not chunk:  # the fork ended before it wrote everything
                    received.clear()
                    break
                received += chunk
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return json.loads(received[8:]) if received else None

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
- TASKFORGE_ISOLATED: the output, one JSON line per test, appended as each test ends (a run
  that is stopped keeps what it measured): {"test": node id, "files": {filename: [line, ...]}},
  or {"test": node id, "unmeasured": "timeout" | "ended"};
- TASKFORGE_COVER_ROOT: the tree measured;
- TASKFORGE_ISOLATED_TIMEOUT: seconds a test's fork may run; then its process group is killed
  and the test has no line here (the ordered runs' lines remain).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import select
import signal
import sys
import time
import warnings

import pytest


@contextlib.contextmanager
def _quiet():
    """coverage.py's warnings ("no data was collected" before the first test) are no concern
    of the suite's, which may turn warnings into errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class _Measure:
    """What runs under `root`, started once in the session (starting coverage.py costs ~50 ms,
    more than most tests) and taken per fork: `begin()` in a fork, `lines()` at its end,
    {filename: [line, ...]} of what ran in between. sys.monitoring where there is one (as the
    ordered runs), else coverage.py with its data in memory (no file per test)."""

    def __init__(self, root):
        if hasattr(sys, "monitoring"):
            from taskforge_tracer import Tracer

            self.tracer = Tracer(root, lines=True)
            self.tracer.start()
            self.coverage = None
        else:
            import coverage

            self.tracer = None
            self.coverage = coverage.Coverage(data_file=None, config_file=False,
                                              source=[root])
            with _quiet():
                self.coverage.start()

    def flush(self):
        """Before a fork: what is measured so far moves to the data, so a fork's `lines()`
        moves only its own lines (coverage.py)."""
        if self.coverage is not None:
            with _quiet():
                self.coverage.get_data()

    def begin(self, context):
        self.context = context
        if self.tracer is not None:
            self.tracer.switch(context)
        else:
            self.coverage.switch_context(context)

    def lines(self):
        if self.tracer is not None:
            self.tracer.stop()
            return {name: sorted(lines) for name, lines in self.tracer.current.items() if lines}
        self.coverage.stop()
        with _quiet():
            data = self.coverage.get_data()
        data.set_query_contexts(["^" + re.escape(self.context) + "$"])  # regexes
        return {name: sorted(data.lines(name)) for name in data.measured_files()
                if data.lines(name)}


def _die_with_parent():
    """Out of the session's process group, a fork would outlive a session that is stopped
    (the run's timeout ends that group): the kernel ends it with its parent instead."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the run's sandbox ends what is left
    if os.getppid() == 1:  # the session ended before the request took effect
        os._exit(0)


class Isolated:
    def __init__(self, out: str, root: str, timeout: float) -> None:
        self.out, self.root, self.timeout = out, root, timeout
        self.measure = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if self.measure is None:
            self.measure = _Measure(self.root)
        self.measure.flush()
        # What exists now is never collected in a fork: its first collections do not walk
        # (and copy) every page of the session.
        gc.freeze()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the test's own process
            os.close(read_end)
            try:
                os.setpgid(0, 0)  # so that a timeout ends what the test started too
                _die_with_parent()
                self._measure(item, write_end)
            except BaseException as error:
                sys.stderr.write(f"taskforge: {item.nodeid} could not be measured alone: "
                                 f"{error!r}\n")
            finally:
                os._exit(0)
        os.close(write_end)
        # As the fork does, whichever runs first (it may have ended already).
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        payload, missing = self._collect(pid, read_end)
        entry = {"test": item.nodeid, "files": payload} if payload is not None \
            else {"test": item.nodeid, "unmeasured": missing}
        with open(self.out, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        return True  # the test ran (in its fork): pytest's own protocol does not run it again

    def _measure(self, item, write_end):
        from _pytest.runner import call_and_report

        self.measure.begin(item.nodeid)
        if call_and_report(item, "setup", log=False).passed:
            call_and_report(item, "call", log=False)
        data = json.dumps(self.measure.lines()).encode()
        with os.fdopen(write_end, "wb") as pipe:
            # Its length first: a process the test left behind may hold the pipe open, so
            # its end is no sign that the measurement is complete.
            pipe.write(len(data).to_bytes(8, "big") + data)

    def _collect(self, pid, read_end):
        """The fork's measurement and None, or None and why there is none (it ran past the
        timeout, or ended before it sent everything: the test ended its process, or the
        measurement failed, on stderr). Its process group (what the test started, too) is
        ended either way, before the fork is reaped: until then no other group can take its
        number."""
        received = bytearray()
        missing = None
        deadline = time.monotonic() + self.timeout
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            while len(received) < 8 or len(received) < 8 + int.from_bytes(received[:8], "big"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    received.clear()
                    missing = "timeout"
                    break
                chunk = pipe.read(1 << 16)
                if not chunk:
                    received.clear()
                    missing = "ended"
                    break
                received += chunk
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return (json.loads(received[8:]) if received else None), missing

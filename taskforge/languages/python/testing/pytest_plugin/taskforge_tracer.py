"""A per-test map of what ran, from sys.monitoring (Python 3.12+): the test map's tracer there.

It runs inside the project's environment (the pytest plugin and the subprocess start-up hook
import it), so it imports nothing outside the standard library.

Why not coverage.py: its sys.monitoring core cannot switch dynamic contexts (one context per
test), and its C tracer fires on every line every time. Here each event reports a location once
per test and returns DISABLE; `switch()` calls `restart_events()` when the next test starts, so
a test's cost is one callback per distinct line it runs in the measured tree. Code outside the
tree gets one PY_START per test and never any LINE events (they are enabled per code object).

`lines=False` keeps PY_START only and records (file, first line) of each function entered: the
function-level map `bench/testmap_cost.py` measures. Before 3.12 that mode falls back to
sys.setprofile; line mode needs sys.monitoring (coverage.py serves older interpreters).

The output is JSON: {context: {filename: [line, ...]}}, context "" for what ran outside any
test (imports, collection); in function mode the lines are the functions' first lines.
"""

from __future__ import annotations

import json
import os
import sys
import threading

# Tool ids 0-2 and 5 are named (debugger, coverage, profiler, optimizer): take a free one, so a
# suite that runs coverage.py's sys.monitoring core itself is not disturbed.
_TOOL_IDS = (3, 4, 2)


class Tracer:
    def __init__(self, root: str, *, lines: bool = True, context: str = "") -> None:
        self.root = os.path.realpath(root) + os.sep
        self.lines = lines
        self.current: dict[str, set[int]] = {}
        self.data: dict[str, dict[str, set[int]]] = {context: self.current}
        # Keyed by id: equal code objects (same body at the same line) can live in two files.
        # Every code object seen is kept alive, so no id is reused.
        self.mine: dict[int, bool] = {}  # id(code) -> under the root
        self.seen: list[object] = []
        self.enabled: set[int] = set()  # ids of code objects whose LINE events are on
        self.monitoring = getattr(sys, "monitoring", None)
        self.tool: int | None = None
        if lines and self.monitoring is None:
            raise RuntimeError("line tracing needs sys.monitoring (Python 3.12+)")

    def _is_mine(self, code) -> bool:
        mine = self.mine.get(id(code))
        if mine is None:
            filename = code.co_filename
            mine = self.mine[id(code)] = (not filename.startswith("<")
                                          and os.path.realpath(filename).startswith(self.root))
            self.seen.append(code)
        return mine

    def start(self) -> None:
        if self.monitoring is None:
            self._start_profile()
            return
        mon = self.monitoring
        for tool in _TOOL_IDS:
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, "taskforge")
                self.tool = tool
                break
        else:
            raise RuntimeError("no free sys.monitoring tool id")
        disable = mon.DISABLE
        line_event = mon.events.LINE
        set_local_events = mon.set_local_events
        tool = self.tool

        def on_start(code, offset):
            if self._is_mine(code):
                if self.lines:
                    if id(code) not in self.enabled:
                        self.enabled.add(id(code))
                        set_local_events(tool, code, line_event)
                else:
                    self.current.setdefault(code.co_filename, set()).add(code.co_firstlineno)
            return disable

        def on_line(code, line):
            self.current.setdefault(code.co_filename, set()).add(line)
            return disable

        mon.register_callback(tool, mon.events.PY_START, on_start)
        if self.lines:
            mon.register_callback(tool, line_event, on_line)
        mon.set_events(tool, mon.events.PY_START)

    def _start_profile(self) -> None:
        def profile(frame, event, arg):
            if event == "call":
                code = frame.f_code
                if self._is_mine(code):
                    self.current.setdefault(code.co_filename, set()).add(code.co_firstlineno)

        sys.setprofile(profile)
        threading.setprofile(profile)

    def switch(self, context: str) -> None:
        """Attribute what runs from now on to `context` (a test's node id)."""
        self.current = self.data.setdefault(context, {})
        if self.monitoring is not None:
            self.monitoring.restart_events()

    def stop(self) -> None:
        if self.monitoring is None:
            sys.setprofile(None)
            threading.setprofile(None)
        elif self.tool is not None:
            mon = self.monitoring
            mon.set_events(self.tool, 0)
            for code in self.seen:
                if id(code) in self.enabled:
                    mon.set_local_events(self.tool, code, 0)
            mon.register_callback(self.tool, mon.events.PY_START, None)
            mon.register_callback(self.tool, mon.events.LINE, None)
            mon.free_tool_id(self.tool)
            self.tool = None

    def save(self, path: str) -> None:
        data = {context: {filename: sorted(lines) for filename, lines in files.items()}
                for context, files in self.data.items() if files}
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)

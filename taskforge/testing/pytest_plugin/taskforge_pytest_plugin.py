"""Loaded into the project's own pytest with `-p taskforge_pytest_plugin`.

It must import nothing from taskforge: it runs inside the project's environment. It is
steered by environment variables so that the command line stays the project's own:
- TASKFORGE_SELECT: a file of node ids, one a line; every other item is deselected.
- TASKFORGE_REVERSE=1: run the items in reverse order (the flaky gate's second run).
- TASKFORGE_COLLECT_OUT: write the collected node ids (and `<collect-error>::path` for each
  file that failed to collect) to this file, one a line.
- TASKFORGE_TRACE: record which functions (file, first line) each test entered into this
  JSON file: a function-level test map at a fraction of line tracing's cost.
- TASKFORGE_COVERAGE / TASKFORGE_COVER_ROOT: record per-test line coverage of the files under
  the root into that coverage data file, with the node id as the context; lines run before
  the first test (imports, collection) keep the empty context.
Every test case in the JUnit XML gets a `taskforge_nodeid` property, so results are read by
node id from the XML and never parsed from console text.
"""

from __future__ import annotations

import json
import os
import sys
import threading

import pytest

_coverage = None
_tracer = None


class FunctionTracer:
    """Which functions each test entered: function-level events only, far cheaper than
    line tracing. sys.monitoring (3.12+) reports each code object once per test (DISABLE,
    then restart_events at the next test); sys.setprofile before that."""

    def __init__(self, root):
        self.root = os.path.realpath(root) + os.sep
        self.context = ""
        self.calls = {"": set()}
        self.mine = {}  # code object -> whether it belongs to the measured tree
        self.monitoring = getattr(sys, "monitoring", None)

    def _record(self, code):
        mine = self.mine.get(code)
        if mine is None:
            mine = self.mine[code] = os.path.realpath(code.co_filename).startswith(self.root)
        if mine:
            self.calls[self.context].add((code.co_filename, code.co_firstlineno))

    def start(self):
        if self.monitoring is not None:
            tool = self.monitoring.PROFILER_ID
            self.monitoring.use_tool_id(tool, "taskforge")
            disable = self.monitoring.DISABLE

            def on_start(code, offset):
                self._record(code)
                return disable

            self.monitoring.register_callback(tool, self.monitoring.events.PY_START, on_start)
            self.monitoring.set_events(tool, self.monitoring.events.PY_START)
        else:
            def profile(frame, event, arg):
                if event == "call":
                    self._record(frame.f_code)

            sys.setprofile(profile)
            threading.setprofile(profile)

    def switch(self, context):
        self.context = context
        self.calls.setdefault(context, set())
        if self.monitoring is not None:
            self.monitoring.restart_events()

    def stop(self, path):
        if self.monitoring is not None:
            self.monitoring.set_events(self.monitoring.PROFILER_ID, 0)
            self.monitoring.free_tool_id(self.monitoring.PROFILER_ID)
        else:
            sys.setprofile(None)
            threading.setprofile(None)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({c: sorted(calls) for c, calls in self.calls.items()}, handle)


def pytest_load_initial_conftests(early_config, parser, args):
    global _coverage, _tracer
    if os.environ.get("TASKFORGE_TRACE") and _tracer is None:
        _tracer = FunctionTracer(os.environ.get("TASKFORGE_COVER_ROOT", "."))
        _tracer.start()
    data_file = os.environ.get("TASKFORGE_COVERAGE")
    if data_file and _coverage is None:
        import coverage

        _coverage = coverage.Coverage(data_file=data_file, config_file=False,
                                      source=[os.environ.get("TASKFORGE_COVER_ROOT", ".")])
        _coverage.start()


def pytest_collection_modifyitems(session, config, items):
    select = os.environ.get("TASKFORGE_SELECT")
    if select:
        with open(select, encoding="utf-8") as handle:
            wanted = {line for line in handle.read().split("\n") if line}
        keep = [item for item in items if item.nodeid in wanted]
        dropped = [item for item in items if item.nodeid not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    if os.environ.get("TASKFORGE_REVERSE") == "1":
        items.reverse()
    for item in items:
        item.user_properties.append(("taskforge_nodeid", item.nodeid))


_collect_errors: list[str] = []


def pytest_collectreport(report):
    if report.failed:
        _collect_errors.append(f"<collect-error>::{report.nodeid}")


def pytest_collection_finish(session):
    target = os.environ.get("TASKFORGE_COLLECT_OUT")
    if target:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in
                                 [item.nodeid for item in session.items] + _collect_errors))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _coverage is not None:
        _coverage.switch_context(item.nodeid)
    if _tracer is not None:
        _tracer.switch(item.nodeid)
    yield


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    global _coverage, _tracer
    if _tracer is not None:
        _tracer.stop(os.environ["TASKFORGE_TRACE"])
        _tracer = None
    if _coverage is not None:
        _coverage.stop()
        _coverage.save()
        _coverage = None

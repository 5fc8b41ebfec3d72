"""Loaded into the project's own pytest with `-p taskforge_pytest_plugin`.

It must import nothing from taskforge: it runs inside the project's environment. It is
steered by environment variables so that the command line stays the project's own:
- TASKFORGE_SELECT: a file of node ids, one a line; every other item is deselected.
- TASKFORGE_REVERSE=1: run the items in reverse order (the flaky gate's second run).
- TASKFORGE_COLLECT_OUT: write the collected node ids (and `<collect-error>::path` for each
  file that failed to collect) to this file, one a line.
- TASKFORGE_COVERAGE / TASKFORGE_COVER_ROOT: record per-test line coverage of the files under
  the root into that coverage data file, with the node id as the context; lines run before
  the first test (imports, collection) keep the empty context.
Every test case in the JUnit XML gets a `taskforge_nodeid` property, so results are read by
node id from the XML and never parsed from console text.
"""

from __future__ import annotations

import os

import pytest

_coverage = None


def pytest_load_initial_conftests(early_config, parser, args):
    global _coverage
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
    yield


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    global _coverage
    if _coverage is not None:
        _coverage.stop()
        _coverage.save()
        _coverage = None

"""What state each test leaves behind: loaded by taskforge_pytest_plugin when TASKFORGE_STATE_OUT
names a file. Imports nothing from taskforge (it runs in the project's environment).

A test that fails half-way may skip its own clean-up (`set_run_validators(False)`, the call
that fails, then `set_run_validators(True)` never reached) and leave a module's global as no
passing test leaves it; a later test that reads it fails in a whole-suite run though it never
runs the deleted code, and a run of the covering tests alone never sees that. So after each
test (teardown included) the module-level bindings are compared with what they were after the
test before: those of every module loaded from under the run's root directory but the test
files and conftests (the project's own code: the test modules' many functions would make
this several times dearer, ~0.1 us a binding, and their state is rarely another test's
input), of the classes those modules define, the environment variables and the working
directory. Bindings are compared by identity (no object is kept
alive by this, or compared with `==`): a name rebound to another object, added or removed
counts, a container changed in place does not. Names with double underscores on both sides
(`__warningregistry__`, pickle's `__slotnames__`) and submodules bound on their package by
an import are the interpreter's own bookkeeping.

A failing test may also leave garbage whose collection raises (an unclosed file's
`ResourceWarning` under `filterwarnings = error`, a `__del__` that raises): pytest reports
such an unraisable exception in whatever test is running when the collector frees it, so in a
whole-suite run of the task state a test that runs nothing of the deletion errors, at a place
that moves from run to run (click 8.5.1: `CliRunner.isolation` stubbed, two `FloatRange`
tests took turns). Who made the garbage cannot be told cheaply; that there is any can: a
test phase that failed with pytest's unraisable-exception warning, or, at the session's end,
a full collection that calls `sys.unraisablehook` with what pytest would make an error of.
Then every test that did not pass is named as having left `gc:unraisable` (a failing test
skipped its clean-up), and the session as a whole (`<session>`, the baseline's record of
what the suite does anyway); a test that failed with such an exception and nothing else is
also named `gc:victim`: its outcome is the collector's timing, not the code's.

Written at the session's end: one JSON object, node id -> the names the test left changed
(`module:name`, `module.Class:name`, `os.environ:NAME`, `os.getcwd()`, `gc:unraisable`,
`gc:victim`, or `?` where it could not tell), for the tests that changed any. Which of them
matter is taskforge's to judge (the baseline's passing tests leave some names changed too:
counters, objects built on first use).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import types
import warnings

import pytest

CWD = "os.getcwd()"
# A test whose state could not be compared (a namespace that would not be read): taskforge
# counts it as state left behind, whatever the baseline's tests did (taskforge.model's
# STATE_UNKNOWN: this module runs in the project's environment and cannot import it).
UNKNOWN = "?"
# Garbage whose collection raised where pytest makes it a test's error (see the docstring).
UNRAISABLE = "gc:unraisable"
# A test that failed with such an exception and nothing else: whoever left the garbage, the
# collector chose this test, and another run may choose another.
GARBAGE_VICTIM = "gc:victim"
SESSION = "<session>"
# pytest >= 6.2 turns an unraisable exception into this warning (an error under `error`)
UNRAISABLE_WARNING = getattr(pytest, "PytestUnraisableExceptionWarning", None)


def _unraisable_parts(error: BaseException) -> tuple[bool, bool]:
    """Whether any part of this error is pytest's unraisable-exception warning, and whether
    every part is (an exception group of them: pytest >= 8.4 groups a phase's errors)."""
    if UNRAISABLE_WARNING is not None and isinstance(error, UNRAISABLE_WARNING):
        return True, True
    inner = [e for e in getattr(error, "exceptions", None) or () if isinstance(e, BaseException)]
    parts = [_unraisable_parts(e) for e in inner]
    return any(some for some, _ in parts), bool(parts) and all(every for _, every in parts)


def _fails_a_test(unraisable: object = None) -> bool:
    """Whether pytest would fail a test with this unraisable exception (None: with any): its
    warning is an error under the warning filters in force (the session's, at its end)."""
    if UNRAISABLE_WARNING is None:
        return False
    message = f"Exception ignored in: {getattr(unraisable, 'object', None)!r}"
    with warnings.catch_warnings(record=True):  # the filters in force, nothing shown
        try:
            warnings.warn(UNRAISABLE_WARNING(message), stacklevel=1)
        except Exception:
            return True
    return False


def _text(name: str | bytes) -> str:
    return name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name


def _bookkeeping(key: object, namespace: dict) -> bool:
    """A change that is the interpreter's, not a test's: a dunder (`__warningregistry__`,
    pickle's `__slotnames__`), or a submodule bound on its package by its first import (which
    this run may make in a test where another made it while collecting)."""
    if isinstance(key, str) and key.startswith("__") and key.endswith("__"):
        return True
    return isinstance(namespace.get(key), types.ModuleType)


# A module file's real path, by the path it was loaded from (what `_namespaces` compares with
# the run's root). The zygote fills it for the modules it holds (`remember_real_paths`), which
# every run it forks has and none of which is the project's: ~470 `realpath`s (an lstat of
# every component) in each humanize confirmation run, most of what watching cost there.
REAL_PATHS: dict[str, str] = {}


def real_path(path: str) -> str:
    real = REAL_PATHS.get(path)
    if real is None:
        real = REAL_PATHS[path] = os.path.realpath(path)
    return real


def remember_real_paths() -> None:
    """The real path of every module file loaded now (absolute ones: a relative path's
    depends on the working directory)."""
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isabs(path):
            real_path(path)


class StateWatch:
    def __init__(self, out: str, root: str) -> None:
        self.out = out
        self.root = os.path.realpath(root) + os.sep
        self.under_root: dict[str, bool] = {}  # module file -> the project's code
        self.test_files: set[str] = set()
        self.watched: list[tuple[str, dict]] = []  # (name, namespace) of the watched dicts
        self.modules_seen = -1  # len(sys.modules) when `watched` was made
        self.last: dict | None = None
        self.changed: dict[str, list[str]] = {}
        self.not_passed: list[str] = []  # node ids of the tests that failed or errored
        self.unraisable = False  # an unraisable exception failed a test, or would have
        self.own_failure: dict[str, bool] = {}  # failed tests: a phase failed otherwise

    def _namespaces(self) -> list[tuple[str, dict]]:
        # Made again only when modules were loaded or unloaded since (a set of modules that
        # changed at constant size would be missed until the next change: a watch, no more).
        if self.modules_seen != len(sys.modules):
            watched = []
            for name, module in list(sys.modules.items()):
                path = getattr(module, "__file__", None)
                if not isinstance(path, str):
                    continue
                inside = self.under_root.get(path)
                if inside is None:
                    real = real_path(path)
                    inside = self.under_root[path] = real.startswith(self.root) \
                        and real not in self.test_files \
                        and os.path.basename(real) != "conftest.py"
                if not inside:
                    continue
                namespace = getattr(module, "__dict__", None)
                if not isinstance(namespace, dict):
                    continue
                watched.append((name, namespace))
                for key, value in list(namespace.items()):
                    if isinstance(value, type) and getattr(value, "__module__", None) == name:
                        watched.append((f"{name}.{key}", value.__dict__))
            self.watched, self.modules_seen = watched, len(sys.modules)
        return self.watched

    def _snapshot(self) -> dict:
        # keys and the ids of their values, in the namespace's order: C loops, no Python one
        snapshot = {name: (tuple(ns), tuple(map(id, ns.values())))
                    for name, ns in self._namespaces()}
        # os.environ's own mapping of bytes (its `items()` decodes every variable in Python)
        snapshot["os.environ"] = tuple(getattr(os.environ, "_data", os.environ).items())
        snapshot[CWD] = os.getcwd()
        return snapshot

    def _differences(self, before: dict, after: dict) -> list[str]:
        if before == after:  # most tests: one comparison in C
            return []
        live = dict(self.watched)
        found = []
        for name, was in before.items():
            now = after.get(name)
            if now is None or now == was:
                continue
            if name == CWD:
                found.append(CWD)
                continue
            if name == "os.environ":
                old, new = dict(was), dict(now)
                found += [f"os.environ:{_text(key)}" for key in sorted(set(old) | set(new))
                          if old.get(key) != new.get(key)]
                continue
            # (no `strict=`: the project's Python may be older than 3.10)
            old, new = dict(zip(*was)), dict(zip(*now))  # noqa: B905
            namespace = live.get(name, {})
            found += [f"{name}:{key}" for key in sorted(set(old) | set(new), key=str)
                      if old.get(key) != new.get(key) and not _bookkeeping(key, namespace)]
        return found

    def pytest_collection_finish(self, session):
        self.test_files = {real_path(str(getattr(item, "path", None) or item.fspath))
                           for item in session.items}
        self.under_root.clear()
        self.modules_seen = -1

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        try:
            if self.last is None:
                self.last = self._snapshot()
        except Exception:
            self.last = None
        yield
        # Between two tests pytest runs nothing of the project's: the state after this test is
        # the state before the next one.
        try:
            now = self._snapshot()
            changed = self._differences(self.last, now) if self.last is not None else [UNKNOWN]
        except Exception:  # never the run's end (a hook that raises ends the session)
            now, changed = None, [UNKNOWN]
        if changed:
            self.changed[item.nodeid] = changed
        self.last = now

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            if item.nodeid not in self.own_failure:
                self.not_passed.append(item.nodeid)
            error = call.excinfo.value if call.excinfo is not None else None
            some, every = _unraisable_parts(error) if error is not None else (False, False)
            self.unraisable = self.unraisable or some
            self.own_failure[item.nodeid] = self.own_failure.get(item.nodeid, False) or not every

    def _garbage_raises(self) -> bool:
        """A full collection now: whether what it frees raises where pytest would fail a
        test (pytest's own collection at its unconfigure comes after the results)."""
        seen: list[bool] = []
        # pytest keeps the last failure for a post-mortem (`sys.last_traceback`, its frames
        # and their locals): in a whole-suite run the next failure lets it go.
        for name in ("last_type", "last_value", "last_traceback", "last_exc"):
            if hasattr(sys, name):
                delattr(sys, name)
        previous = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: seen.append(_fails_a_test(unraisable))
        try:
            gc.collect()
        finally:
            sys.unraisablehook = previous
        return any(seen)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        try:
            # Only where the session's filters make pytest's warning an error can garbage
            # change an outcome (click, humanize: `filterwarnings = error`); elsewhere the
            # collection (34-164 ms at the end of a whole suite of boltons, humanize, click)
            # would buy nothing.
            if not self.unraisable and _fails_a_test():
                self.unraisable = self._garbage_raises()
        except Exception:
            self.unraisable = True  # could not tell: fail closed
        if self.unraisable:
            for node_id in [*self.not_passed, SESSION]:
                self.changed.setdefault(node_id, []).append(UNRAISABLE)
            for node_id in self.not_passed:
                if not self.own_failure[node_id]:
                    self.changed[node_id].append(GARBAGE_VICTIM)
        with open(self.out, "w", encoding="utf-8") as handle:
            json.dump(self.changed, handle)

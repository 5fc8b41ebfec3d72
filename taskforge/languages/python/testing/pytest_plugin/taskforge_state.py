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

Written at the session's end: one JSON object, node id -> the names the test left changed
(`module:name`, `module.Class:name`, `os.environ:NAME`, `os.getcwd()`, or `?` where it
could not tell), for the tests that changed any. Which of them matter is taskforge's to judge
(the baseline's passing tests leave some names changed too: counters, objects built on first
use).
"""

from __future__ import annotations

import json
import os
import sys
import types

import pytest

CWD = "os.getcwd()"
# A test whose state could not be compared (a namespace that would not be read): taskforge
# counts it as state left behind, whatever the baseline's tests did (taskforge.model's
# STATE_UNKNOWN: this module runs in the project's environment and cannot import it).
UNKNOWN = "?"


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

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        with open(self.out, "w", encoding="utf-8") as handle:
            json.dump(self.changed, handle)

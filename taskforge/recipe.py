"""Recipes: YAML, validated strictly. Every mistake is one line naming the file and the key."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from taskforge.errors import UserError
from taskforge.languages import strategy_names
from taskforge.languages.strategy import (
    BROKEN_IMPORTS,
    STATEMENT_DETAIL,
    SelectOptions,
    TaskOptions,
)
from taskforge.model import SourceSpec
from taskforge.sandbox import NAMES as SANDBOX_NAMES
from taskforge.sources.debian import EXAMPLE as DEBIAN_EXAMPLE
from taskforge.sources.debian import pinned as debian_pinned
from taskforge.sources.license import spdx_expression


@dataclass(frozen=True)
class VerifyOptions:
    repeats: int = 2
    timeout_s: float = 300.0
    # One test (setup, call, teardown) running longer in the baseline is left out as hung,
    # and the suite runs again without it.
    test_timeout_s: float = 60.0
    full_suite: bool = False
    # A deletion that breaks collection becomes a task whose uncollected tests are FAIL_TO_PASS
    # (recorded as `verification.collateral`) instead of a `collection-breaks` rejection.
    allow_collection_breaks: bool = False


@dataclass(frozen=True)
class Recipe:
    name: str
    path: Path
    sha256: str
    seed: int
    sources: tuple[SourceSpec, ...]
    strategies: dict[str, float]
    select: SelectOptions
    max_tasks_per_source: int
    task: TaskOptions
    verify: VerifyOptions
    sandbox: str
    base_dir: Path = field(default=Path("."))
    licenses: tuple[str, ...] | None = None  # select.licenses: SPDX ids to keep; None: all
    max_source_mb: float | None = None  # select.max_source_mb: larger sources are set aside
    # select.min_stable_tests: a source whose baseline has fewer stable tests is set aside
    # (most of a suite that fails to import is a broken set-up, not a small suite)
    min_stable_tests: int = 1


class _Checker:
    def __init__(self, file: Path) -> None:
        self.file = file

    def fail(self, where: str, message: str) -> UserError:
        return UserError(f"{self.file}: {where}: {message}" if where else f"{self.file}: {message}")

    def mapping(self, value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                prefix = f"{where}." if where else ""
                raise self.fail(f"{prefix}{key}", f"unknown key (allowed: {', '.join(sorted(allowed))})")
        return value

    def typed(self, table: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...],
              default: Any) -> Any:
        value = table.get(key, default)
        name = f"{where}.{key}" if where else key
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(name, f"expected a number, got {value!r}")
        if not isinstance(value, kind):
            expected = kind.__name__ if isinstance(kind, type) else "number"
            raise self.fail(name, f"expected {expected}, got {type(value).__name__}")
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
            raise self.fail(name, "must not be negative")
        return value


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping naming a key twice (`verify: {repeats: 3, repeats: 2}`
    is a typo, and YAML would silently keep the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _DuplicateKey(key, line, seen[key])
                seen[key] = line
            except TypeError:  # an unhashable key: yaml itself reports it below
                continue
        return super().construct_mapping(node, deep=deep)


TOP_KEYS = {"name", "seed", "sources", "strategies", "select", "task", "verify", "sandbox"}
SOURCE_KEYS = {"path", "git", "pypi", "npm", "debian", "ref", "install", "test_command",
               "python", "max_tasks"}
SELECT_KEYS = {"min_covering_tests", "min_body_lines", "max_tasks_per_source", "licenses",
               "max_source_mb", "min_stable_tests", "lines", "min_lines", "max_lines", "symbols"}
TASK_KEYS = {"tests_visible", "keep_docstrings", "broken_imports", "statement"}
VERIFY_KEYS = {"repeats", "timeout_s", "test_timeout_s", "full_suite",
               "allow_collection_breaks"}


def load_recipe(path: str | Path) -> Recipe:
    file = Path(path)
    if file.is_dir():
        raise UserError(f"{file}: a directory, not a recipe file (give the .yaml file)")
    if not file.is_file():
        raise UserError(f"{file}: recipe file does not exist")
    raw_bytes = file.read_bytes()
    try:
        data = yaml.load(raw_bytes, Loader=_StrictLoader)  # a SafeLoader
    except _DuplicateKey as e:
        raise UserError(f"{file}: line {e.line}: duplicate key {e.key!r} (first on line "
                        f"{e.first}); YAML would keep only the last") from None
    except yaml.reader.ReaderError as e:
        raise UserError(f"{file}: not a YAML text file ({e.reason} at byte {e.position})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "YAML"
        raise UserError(f"{file}: {where}: not valid YAML ({getattr(e, 'problem', e)})") from None
    c = _Checker(file)
    top = c.mapping(data, "", TOP_KEYS)
    if "name" not in top:
        raise c.fail("name", "missing")
    name = c.typed(top, "name", "", str, None)
    seed = c.typed(top, "seed", "", int, 0)
    raw_sources = top.get("sources")
    if not isinstance(raw_sources, list) or not raw_sources:
        raise c.fail("sources", "expected a non-empty list of sources")
    sources = tuple(_source(c, s, f"sources[{i}]") for i, s in enumerate(raw_sources))
    strategies = _strategies(c, top.get("strategies", ["stub-function"]))
    sel = c.mapping(top.get("select"), "select", SELECT_KEYS)
    min_lines, max_lines = _lines(c, sel)
    min_symbols, max_symbols = _range(c, sel, "symbols", 1)
    select = SelectOptions(
        min_covering_tests=c.typed(sel, "min_covering_tests", "select", int, 1),
        min_body_lines=c.typed(sel, "min_body_lines", "select", int, 3),
        min_lines=min_lines, max_lines=max_lines, min_symbols=min_symbols, max_symbols=max_symbols)
    max_tasks = c.typed(sel, "max_tasks_per_source", "select", int, 50)
    licenses = _licenses(c, sel["licenses"]) if "licenses" in sel else None
    max_source_mb = float(c.typed(sel, "max_source_mb", "select", (int, float), 0)) \
        if "max_source_mb" in sel else None
    min_stable_tests = c.typed(sel, "min_stable_tests", "select", int, 1)
    if min_stable_tests < 1:
        raise c.fail("select.min_stable_tests", "must be at least 1")
    tsk = c.mapping(top.get("task"), "task", TASK_KEYS)
    task = TaskOptions(keep_docstrings=c.typed(tsk, "keep_docstrings", "task", bool, True),
                       tests_visible=c.typed(tsk, "tests_visible", "task", bool, True),
                       broken_imports=_choice(c, tsk, "broken_imports", BROKEN_IMPORTS),
                       statement=_choice(c, tsk, "statement", STATEMENT_DETAIL))
    ver = c.mapping(top.get("verify"), "verify", VERIFY_KEYS)
    verify = VerifyOptions(repeats=c.typed(ver, "repeats", "verify", int, 2),
                           timeout_s=float(c.typed(ver, "timeout_s", "verify", (int, float), 300)),
                           test_timeout_s=float(c.typed(ver, "test_timeout_s", "verify",
                                                        (int, float), 60)),
                           full_suite=c.typed(ver, "full_suite", "verify", bool, False),
                           allow_collection_breaks=c.typed(ver, "allow_collection_breaks",
                                                           "verify", bool, False))
    if verify.test_timeout_s <= 0:
        raise c.fail("verify.test_timeout_s", "must be positive")
    if verify.repeats < 1:
        raise c.fail("verify.repeats", "must be at least 1")
    sandbox = c.typed(top, "sandbox", "", str, "auto")
    if sandbox not in SANDBOX_NAMES:
        raise c.fail("sandbox", f"unknown sandbox {sandbox!r} (choose {', '.join(SANDBOX_NAMES)})")
    return Recipe(name=name, path=file, sha256=hashlib.sha256(raw_bytes).hexdigest(), seed=seed,
                  sources=sources, strategies=strategies, select=select,
                  max_tasks_per_source=max_tasks, task=task, verify=verify, sandbox=sandbox,
                  base_dir=file.resolve().parent, licenses=licenses, max_source_mb=max_source_mb,
                  min_stable_tests=min_stable_tests)


def _choice(c: _Checker, table: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
    value = c.typed(table, key, "task", str, choices[0])
    if value not in choices:
        raise c.fail(f"task.{key}", f"unknown value {value!r} (choose {', '.join(choices)})")
    return value


def _range(c: _Checker, table: dict[str, Any], key: str, least: int) -> tuple[int, int | None]:
    """`select.lines` / `select.symbols`: how many lines or symbols one deletion may take
    away, `[min, max]` (max null: no limit)."""
    raw = table.get(key)
    if raw is None:
        return least, None

    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not isinstance(raw, list) or len(raw) != 2 or not whole(raw[0]) \
            or not (raw[1] is None or whole(raw[1])):
        raise c.fail(f"select.{key}", f"expected [min, max] (whole numbers), got {raw!r}")
    low, high = raw
    if low < least or (high is not None and high < low):
        raise c.fail(f"select.{key}", f"expected {least} <= min <= max, got {raw!r}")
    return low, high


def _lines(c: _Checker, table: dict[str, Any]) -> tuple[int, int | None]:
    """`select.min_lines` / `select.max_lines` (the documented names), or `select.lines` as one
    `[min, max]` range; not both spellings at once."""
    if "lines" not in table:
        low = c.typed(table, "min_lines", "select", int, 0)
        high = c.typed(table, "max_lines", "select", int, None) if "max_lines" in table else None
        if high is not None and high < low:
            raise c.fail("select.max_lines", f"must be at least select.min_lines ({low}), got {high}")
        return low, high
    both = sorted({"min_lines", "max_lines"} & set(table))
    if both:
        raise c.fail(f"select.{both[0]}", "give either select.lines: [min, max] or "
                                          "select.min_lines/max_lines, not both")
    return _range(c, table, "lines", 0)


def _licenses(c: _Checker, raw: Any) -> tuple[str, ...]:
    """SPDX ids, as written in task records (`MIT`, `Apache-2.0`, `BSD-3-Clause` ...)."""
    if not isinstance(raw, list) or not raw:
        raise c.fail("select.licenses", "expected a non-empty list of SPDX license ids")
    ids = []
    for i, item in enumerate(raw):
        canonical = spdx_expression(item) if isinstance(item, str) else None
        if canonical is None or " " in canonical:
            raise c.fail(f"select.licenses[{i}]", f"expected an SPDX license id, got {item!r}")
        ids.append(canonical)
    return tuple(ids)


def _source(c: _Checker, raw: Any, where: str) -> SourceSpec:
    table = c.mapping(raw, where, SOURCE_KEYS)
    kinds = [k for k in ("path", "git", "pypi", "npm", "debian") if k in table]
    if len(kinds) != 1:
        raise c.fail(where, "give exactly one of path, git, pypi, npm, debian")
    kind = kinds[0]
    location = c.typed(table, kind, where, str, None)
    if kind == "debian" and debian_pinned(location) is None:
        # apt-get would take a bare name as "the newest": a corpus pins what it ingests
        raise c.fail(f"{where}.debian", f"pin an exact version, as NAME=VERSION (e.g. "
                                        f"{DEBIAN_EXAMPLE}), got {location!r}")
    if "ref" in table and kind != "git":
        raise c.fail(f"{where}.ref", "only git sources take a ref")
    ref = c.typed(table, "ref", where, (str, int), None) if "ref" in table else None
    install = table.get("install")
    if install is not None:
        if isinstance(install, str):
            install = [install]
        if not isinstance(install, list) or not all(isinstance(i, str) for i in install):
            raise c.fail(f"{where}.install", "expected a command or a list of commands")
    test_command = c.typed(table, "test_command", where, str, None) \
        if "test_command" in table else None
    python = table.get("python")
    if python is not None and not isinstance(python, str):
        # YAML reads 3.10 as the number 3.1: only a quoted version is unambiguous.
        raise c.fail(f"{where}.python", f'quote the version, e.g. "{python}"')
    max_tasks = c.typed(table, "max_tasks", where, int, None) if "max_tasks" in table else None
    return SourceSpec(kind=kind, location=location, ref=str(ref) if ref is not None else None,
                      install=tuple(install) if install is not None else None,
                      test_command=test_command, python=python, max_tasks=max_tasks,
                      origin=f"{c.file}: {where}.{kind}")


def _strategies(c: _Checker, raw: Any) -> dict[str, float]:
    items: dict[str, float] = {}
    entries = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict | str) else None
    if not entries:
        raise c.fail("strategies", "expected a list of strategy names")
    for entry in entries:
        pairs = entry.items() if isinstance(entry, dict) else [(entry, 1.0)]
        for name, weight in pairs:
            if name not in strategy_names():
                raise c.fail("strategies", f"unknown strategy {name!r} "
                                           f"(known: {', '.join(strategy_names())})")
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
                raise c.fail(f"strategies.{name}", "weight must be a positive number")
            items[name] = float(weight)
    return items

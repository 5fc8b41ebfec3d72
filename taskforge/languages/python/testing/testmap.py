"""Per-test line coverage: which tests executed which lines.

Two tracers give the same map. coverage.py (one dynamic context per test) is the reference and
the cheapest before Python 3.12; on 3.12+ sys.monitoring reports each line once per test
(`pytest_plugin/taskforge_tracer.py`), which costs far less than coverage.py's line tracing
there (its own sys.monitoring core cannot switch contexts): `bench/testmap_cost.py` measures
both, and that every candidate gets the same covering tests from either.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import coverage

# path -> line -> indexes into the baseline's tests (-1: outside any test), and
# path -> lines that tests' Python subprocesses executed
TestMap = tuple[dict[str, dict[int, tuple[int, ...]]], dict[str, tuple[int, ...]]]


def tracer_for(python: str) -> str:
    """The test map's tracer for an environment's Python ("3.12" -> "sysmon")."""
    major, minor = (int(part) for part in python.split(".")[:2])
    return "sysmon" if (major, minor) >= (3, 12) else "coverage"


@dataclass(frozen=True)
class MapProbe:
    """Where and how one test run records its test map: `out` is the coverage data file or
    the tracer's JSON file; Python subprocesses the tests start write siblings of it."""

    tracer: str  # "coverage", "sysmon", or "isolated" (each test alone, by the tracer
    out: Path    # of tracer_for(); the baseline's third map)

    def variables(self, workspace: Path) -> dict[str, str]:
        """Environment variables that switch the measurement on (our pytest plugin and the
        subprocess start-up hook read them)."""
        name = {"coverage": "TASKFORGE_COVERAGE", "isolated": "TASKFORGE_ISOLATED"}.get(
            self.tracer, "TASKFORGE_TRACE")
        return {name: str(self.out), "TASKFORGE_COVER_ROOT": str(workspace)}

    def read(self, workspace: Path, tests: tuple[str, ...]) -> TestMap:
        if self.tracer == "coverage":
            return read_coverage_map(self.out, workspace, tests)
        if self.tracer == "isolated":
            return read_isolated_map(self.out, workspace, tests)
        return read_trace_map(self.out, workspace, tests)


def context_indexes(map_file: Path, tests: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """What each context of a run's map stands for, as indexes into `tests`: a test's node id
    itself; "" (outside any test) -1; a fixture wider than a function (the plugin's
    `<fixture>` contexts, listed in `<map file>-fixtures.json`) every test that uses it. A
    context missing here is no test of the suite, and its lines count for none."""
    indexes: dict[str, tuple[int, ...]] = {test_id: (i,) for i, test_id in enumerate(tests)}
    indexes[""] = (-1,)
    users = map_file.with_name(map_file.name + "-fixtures.json")
    if users.exists():
        for context, ids in json.loads(users.read_text(encoding="utf-8")).items():
            known = tuple(sorted(i for t in ids for i in indexes.get(t, ()) if i >= 0))
            if known:
                indexes[context] = known
    return indexes


def read_trace_map(trace_file: Path, workspace: Path, tests: tuple[str, ...]) -> TestMap:
    """The same map as `read_coverage_map`, from the sys.monitoring tracer's JSON files
    (`<trace file>` and one `<trace file>.<pid>.<random>.json` per measured subprocess)."""
    if not trace_file.exists():
        return {}, {}
    parts = [trace_file, *sorted(trace_file.parent.glob(trace_file.name + ".*.json"))]
    return _lines_map(((part is not trace_file, context, files)
                       for part in parts
                       for context, files in json.loads(part.read_text(encoding="utf-8")).items()),
                      workspace, context_indexes(trace_file, tests))


def read_isolated_map(out: Path, workspace: Path, tests: tuple[str, ...]) -> TestMap:
    """The map of the run that measures every test alone (pytest_plugin/taskforge_isolated.py:
    one JSON line per test; a test it could not measure has none of its lines)."""
    return _lines_map(((False, entry["test"], entry["files"]) for entry in _alone(out)
                       if "files" in entry),
                      workspace, {test_id: (i,) for i, test_id in enumerate(tests)})


def measured_alone(out: Path) -> set[str]:
    """The tests the isolated run measured (not those whose forks ran too long or ended
    early, nor those it did not reach)."""
    return {entry["test"] for entry in _alone(out) if "files" in entry}


def _alone(out: Path) -> list[dict]:
    """The isolated run's entries, one a test it reached."""
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]


def _lines_map(parts: Iterable[tuple[bool, str, dict[str, list[int]]]], workspace: Path,
               index: dict[str, tuple[int, ...]]) -> TestMap:
    """The map of (from a subprocess, context, {filename: lines}) parts: a context missing from
    `index` counts for no test, a file outside `workspace` for nothing."""
    root = workspace.resolve()
    lines: dict[str, dict[int, set[int]]] = {}
    by_subprocesses: dict[str, set[int]] = {}
    relative: dict[str, str | None] = {}
    for from_subprocess, context, files in parts:
        ids = index.get(context)
        if ids is None:
            continue  # a context that is no test of the suite
        for filename, numbers in files.items():
            if filename not in relative:
                relative[filename] = _relative(filename, root)
            rel = relative[filename]
            if rel is None:
                continue
            by_line = lines.setdefault(rel, {})
            for line in numbers:
                by_line.setdefault(line, set()).update(ids)
            if from_subprocess:
                by_subprocesses.setdefault(rel, set()).update(numbers)
    return merge_test_maps([({p: {ln: tuple(ids) for ln, ids in by_line.items()}
                              for p, by_line in lines.items()},
                             {p: tuple(covered) for p, covered in by_subprocesses.items()})])


def read_coverage_map(data_file: Path, workspace: Path, tests: tuple[str, ...]) -> TestMap:
    """path (workspace-relative) -> line -> indexes into `tests` (-1 for the empty context),
    and path -> the lines that Python subprocesses started by tests executed.

    Subprocesses write parallel data files (`<data file>.<host>.<pid>.<random>`) whose lines
    carry the id of the test that started them; they join the map like the main process's.
    """
    if not data_file.exists():
        return {}, {}
    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    root = workspace.resolve()
    by_subprocesses: dict[str, tuple[int, ...]] = {}
    for parallel in sorted(data_file.parent.glob(data_file.name + ".*")):
        part = coverage.CoverageData(basename=str(parallel))
        part.read()
        for filename in part.measured_files():
            rel = _relative(filename, root)
            # coverage.py lists the source tree's unexecuted files too, without lines
            if rel is not None and part.lines(filename):
                lines = set(by_subprocesses.get(rel, ())) | set(part.lines(filename))
                by_subprocesses[rel] = tuple(sorted(lines))
        data.update(part)
    index = context_indexes(data_file, tests)
    result: dict[str, dict[int, tuple[int, ...]]] = {}
    for filename in sorted(data.measured_files()):
        rel = _relative(filename, root)
        if rel is None:
            continue
        by_line: dict[int, tuple[int, ...]] = {}
        for line, contexts in sorted(data.contexts_by_lineno(filename).items()):
            ids = sorted({i for c in contexts for i in index.get(c, ())})
            if ids:
                by_line[line] = tuple(ids)
        if by_line:
            result[rel] = by_line
    return result, dict(sorted(by_subprocesses.items()))


def _relative(filename: str, root: Path) -> str | None:
    path = Path(filename).resolve()
    return path.relative_to(root).as_posix() if root in path.parents else None


def merge_test_maps(maps: list[TestMap]) -> TestMap:
    """The union of several runs' test maps (same `tests` indexes)."""
    lines: dict[str, dict[int, set[int]]] = {}
    by_subprocesses: dict[str, set[int]] = {}
    for by_path, subprocess_lines in maps:
        for path, by_line in by_path.items():
            for line, ids in by_line.items():
                lines.setdefault(path, {}).setdefault(line, set()).update(ids)
        for path, covered in subprocess_lines.items():
            by_subprocesses.setdefault(path, set()).update(covered)
    return ({p: {ln: tuple(sorted(ids)) for ln, ids in sorted(by_line.items())}
             for p, by_line in sorted(lines.items())},
            {p: tuple(sorted(covered)) for p, covered in sorted(by_subprocesses.items())})

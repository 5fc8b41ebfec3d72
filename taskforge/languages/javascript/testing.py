"""Run a JavaScript project's tests in a workspace through a sandbox; the baseline with
per-test coverage.

Every run: the workspace gets a `node_modules` of links to the environment's packages
(removed after the run), the runner writes its machine-readable report outside
the workspace, and results come only from that report. A selected id that did not report
failed.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from pathlib import Path

from taskforge.cache import digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.languages.base import Runner, import_errors_line
from taskforge.languages.javascript.env import node_binary
from taskforge.languages.javascript.files import is_test_file
from taskforge.languages.javascript.runners import JsTestRunner, Report, runner_named
from taskforge.languages.javascript.runners.base import SUPPORT, file_of
from taskforge.languages.javascript.sourcemap import LineMap
from taskforge.leftovers import owned
from taskforge.model import Baseline, Environment, Snapshot, TestRun
from taskforge.sandbox import Mounts, Sandbox
from taskforge.workspace import scratch_copy, scratch_dir

# 2: vitest's coverage per test (through source maps), no more whole-suite. 3: and of the
# files Node required itself under vitest or jest (their text in the code V8 ran).
FORMAT = 3
# path -> line -> indexes into the baseline's tests (-1: outside any test)
TestMap = dict[str, dict[int, set[int]]]


def runner_of(env: Environment) -> tuple[JsTestRunner, tuple[str, ...]]:
    """The environment's runner and the arguments its test script gives it: the record's
    `test_command` is `<runner> [args...]`."""
    name, *args = env.spec.test_command
    return runner_named(name, env.venv / "node_modules"), tuple(args)


@contextlib.contextmanager
def linked_modules(workspace: Path, env: Environment) -> Iterator[None]:
    """`workspace/node_modules`, for one run: a directory of links to each of the
    environment's packages (`.bin` included), removed afterwards with whatever the run wrote
    there. A directory, not one link: tools write their caches and temporary files under
    node_modules (vite's `.vite-temp`, `.vite`), and the environment is read-only. A workspace
    with a node_modules of its own keeps it."""
    here = workspace / "node_modules"
    if here.exists() or here.is_symlink():
        yield
        return
    here.mkdir()
    try:
        source = env.venv / "node_modules"
        for entry in sorted(source.iterdir()) if source.is_dir() else ():
            (here / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        yield
    finally:
        shutil.rmtree(here, ignore_errors=True)


GUARD = SUPPORT / "taskforge-guard.cjs"


def variables(workspace: Path, home: Path) -> dict[str, str]:
    return {"PATH": f"{node_binary().parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home),
            "TMPDIR": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "CI": "true",
            "NO_COLOR": "1", "FORCE_COLOR": "0", "NODE_ENV": "test",
            "TASKFORGE_WORKSPACE": str(workspace),
            # every node process of the run, workers and test files' processes included
            "NODE_OPTIONS": f'--require "{GUARD}"'}


def run_tests(env: Environment, workspace: Path, sandbox: Sandbox, *, timeout: float,
              select: Iterable[str] | None = None, reverse: bool = False,
              coverage_dir: Path | None = None, test_timeout: float | None = None,
              collect_only: bool = False, extra_env: Mapping[str, str] | None = None,
              writable: tuple[Path, ...] = (), report_into: Path | None = None,
              files: list[str] | None = None,
              read_only: tuple[Path, ...] = ()) -> tuple[TestRun, Report]:
    """Run the suite (or only `select`, or only `files`) in `workspace`. `coverage_dir`:
    per-test coverage is written there (runners that can). `report_into`: keep the raw
    report there. `read_only`: files of the workspace the run may not change, where the
    sandbox can bind them so (the grader's restored test code)."""
    runner, args = runner_of(env)
    chosen = sorted(set(select)) if select is not None else None
    listed = runner.test_files(workspace, args) if files is None else files
    if chosen is not None:
        wanted = {file_of(t) for t in chosen}
        listed = [f for f in listed or () if f in wanted] + sorted(wanted - set(listed or ()))
        listed = [f for f in listed if f and (workspace / f).is_file()]
    # None: the runner finds its files itself (nothing was selected)
    with tempfile.TemporaryDirectory(prefix=owned("taskforge-run-")) as scratch:
        results = Path(scratch)
        report = results / "report.jsonl"
        home = results / "home"
        home.mkdir()
        env_vars = {**variables(workspace, home), **runner.report_variables(report),
                    **(extra_env or {})}
        if coverage_dir is not None:
            env_vars["TASKFORGE_COVERAGE_DIR"] = str(coverage_dir)
        argv = runner.argv(listed or [], workspace=workspace, report=report, select=chosen,
                           coverage=coverage_dir is not None,
                           reverse=reverse, test_timeout=test_timeout, collect_only=collect_only)
        mounts = Mounts(readonly=(env.venv, SUPPORT, node_binary(), *read_only),
                        writable=(results, *writable,
                                  *((coverage_dir,) if coverage_dir is not None else ())))
        if listed is None or listed:
            with linked_modules(workspace, env):
                result = sandbox.exec(argv, workspace=workspace, env=env_vars, timeout=timeout,
                                      mounts=mounts)
            exit_code, seconds, timed_out, tail = (result.exit_code, result.duration_s,
                                                   result.timed_out, result.output[-4000:])
        else:  # nothing to run (no test file holds the selected ids)
            exit_code, seconds, timed_out, tail = 0, 0.0, False, ""
        parsed = runner.read_report(report, workspace)
        if report_into is not None and report.is_file():
            report_into.write_bytes(report.read_bytes())
    outcomes = dict(parsed.outcomes)
    unreported: tuple[str, ...] = ()
    if chosen is not None:
        # Only what was asked for; a selected test that did not report (an early exit, a
        # crash, a file that no longer loads) did not pass.
        unreported = tuple(t for t in chosen if t not in outcomes)
        outcomes = {t: outcomes.get(t, "error") for t in chosen}
    return TestRun(outcomes=outcomes, exit_code=exit_code, wall_seconds=seconds,
                   pytest_seconds=round(parsed.seconds, 3), timed_out=timed_out,
                   log_tail=tail, durations=parsed.durations,
                   collection_errors=parsed.collection_errors, unreported=unreported), parsed


def collected_ids(env: Environment, workspace: Path, sandbox: Sandbox, *,
                  timeout: float) -> set[str]:
    """The test ids that load in `workspace`, without running them, plus a
    `<collect-error>::path` marker per test file that fails to load."""
    run, parsed = run_tests(env, workspace, sandbox, timeout=timeout, collect_only=True)
    if run.timed_out:
        return {"<no collection>"}
    runner, args = runner_of(env)
    if runner.loads_all_or_nothing and not parsed.finished:
        # One file that fails to load stopped the whole run: each file alone tells which.
        found: set[str] = set()
        for file in runner.test_files(workspace, args) or ():
            alone, report = run_tests(env, workspace, sandbox, timeout=timeout,
                                      collect_only=True, files=[file])
            found |= set(report.outcomes) if report.finished and not alone.timed_out \
                else {f"<collect-error>::{file}"}
        return found
    return set(parsed.outcomes) | {f"<collect-error>::{f}" for f in parsed.collection_errors}


# -- the baseline ------------------------------------------------------------------------------


def baseline_key(snapshot: Snapshot, env: Environment, repeats: int, sandbox: str,
                 test_timeout: float) -> str:
    return digest("js-baseline", FORMAT, snapshot.id, env.key, repeats, sandbox,
                  test_timeout)[:32]


def _path(cache: Path, key: str) -> Path:
    return cache / "baselines" / f"{key}.json"


def keep_baseline(cache: Path, baseline: Baseline) -> None:
    if not _path(cache, baseline.key).is_file():
        write_json(_path(cache, baseline.key), _dump(baseline))


def cached_baseline(snapshot: Snapshot, runner: Runner, *, repeats: int,
                    test_timeout: float) -> Baseline | None:
    path = _path(runner.cache, baseline_key(snapshot, runner.env, repeats,
                                                runner.sandbox.identity(), test_timeout))
    return _load(path) if path.is_file() else None


def run_baseline(snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float) -> Baseline:
    """The suite `max(2, repeats)` times, each within `runner.timeout`, the second in
    reverse file order (runners that can); the first two record per-test coverage, merged."""
    cached = cached_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)
    if cached is not None:
        return cached
    env, sandbox, timeout, cache = runner.env, runner.sandbox, runner.timeout, runner.cache
    key = baseline_key(snapshot, env, repeats, sandbox.identity(), test_timeout)
    runs: list[TestRun] = []
    measured: list[tuple[Path, Report]] = []
    with scratch_dir(cache, prefix="jscoverage-") as results:
        for i in range(max(2, repeats)):
            coverage = results / f"run{i}" if i < 2 else None
            if coverage is not None:
                coverage.mkdir()
            with scratch_copy(snapshot.root, cache, prefix="baseline-") as workspace:
                run, parsed = run_tests(env, workspace, sandbox, timeout=timeout,
                                        reverse=(i == 1), coverage_dir=coverage,
                                        test_timeout=min(test_timeout, timeout))
            if run.timed_out:
                raise UserError(f"{snapshot.source}: the test suite did not finish within "
                                f"{timeout:.0f}s")
            runs.append(run)
            if coverage is not None:
                measured.append((coverage, parsed))
        tests = tuple(sorted({t for r in runs for t in r.outcomes}))
        test_map: TestMap = {}
        for coverage, parsed in measured:
            _read_coverage(coverage, parsed.coverage_keys, tests, test_map, snapshot.root)
    broken = {f: e for r in runs for f, e in r.collection_errors.items()}
    if not tests:
        raise UserError(f"{snapshot.source}: no tests found"
                        + (f"; {import_errors_line(broken)}" if broken else _hint(runs)))
    stable = tuple(t for t in tests if all(r.outcomes.get(t) == "passed" for r in runs))
    flaky = tuple(t for t in tests if len({r.outcomes.get(t) for r in runs}) > 1)
    failing = tuple(t for t in tests if t not in stable and t not in flaky)
    if not stable:
        raise UserError(f"{snapshot.source}: no test passes in the baseline ({len(tests)} "
                        f"found, {len(failing)} failing, {len(flaky)} flaky)"
                        + (f"; {import_errors_line(broken)}" if broken else _hint(runs)))
    coverage_out = {p: {ln: tuple(sorted(ids)) for ln, ids in sorted(lines.items())}
                    for p, lines in sorted(test_map.items())}
    baseline = Baseline(key=key, tests=tests, stable=stable, flaky=flaky, failing=failing,
                        run_seconds=tuple(round(r.wall_seconds, 3) for r in runs),
                        durations={t: round(max(r.durations.get(t, 0.0) for r in runs), 4)
                                   for t in tests},
                        coverage=coverage_out,
                        tracer="v8",
                        collection_errors=broken)
    write_json(_path(cache, key), _dump(baseline))
    return baseline


def _read_coverage(directory: Path, keys: Mapping[str, str], tests: tuple[str, ...],
                   test_map: TestMap, root: Path) -> None:
    """Add one run's coverage files to `test_map`: JSON lines `{key, files: {path: [lines]}}`,
    or for transformed code `{key, raw: {scriptId: [[start, end, count]...]}}` with each
    script's file and code (`{scripts: {scriptId: [path, code]}}`): the code's source map
    gives the lines, or, with none, the file's text in it as `root` holds it (a file Node
    required itself, beside vite). A null key, or one no test reported, is outside any test
    (-1)."""
    index = {t: i for i, t in enumerate(tests)}
    for path in sorted(directory.glob("*.jsonl")):
        entries = []
        scripts: dict[str, list[str]] = {}
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if "scripts" in entry:
                scripts.update(entry["scripts"] or {})
            else:
                entries.append(entry)
        maps: dict[str, tuple[str, LineMap]] = {}
        for entry in entries:
            test_id = keys.get(entry.get("key") or "")
            idx = index.get(test_id, -1) if test_id else -1
            files = {rel: set(lines) for rel, lines in (entry.get("files") or {}).items()}
            for script, ranges in (entry.get("raw") or {}).items():
                if script not in maps and script in scripts:
                    maps[script] = _line_map(root, *scripts[script])
                if script in maps:
                    rel, lines = maps[script]
                    files.setdefault(rel, set()).update(lines.executed(ranges))
            for rel, lines in files.items():
                if is_test_file(rel):
                    continue
                by_line = test_map.setdefault(rel, {})
                for ln in lines:
                    by_line.setdefault(int(ln), set()).add(idx)


def _line_map(root: Path, rel: str, code: str) -> tuple[str, LineMap]:
    """A script's file and its line map. The file's text is read from `root` only: the name
    comes from the suite's process, which could write any."""
    lines = LineMap(code)
    file = (root / rel).resolve()
    if not lines.offsets and file.is_relative_to(root.resolve()):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            lines = LineMap.plain(code, file.read_text(encoding="utf-8"))
    return rel, lines


def _hint(runs: list[TestRun]) -> str:
    lines = [ln.strip() for r in runs for ln in r.log_tail.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return f" ({(errors or lines)[-1][:200]})" if lines else ""


def _dump(baseline: Baseline) -> dict:
    data = asdict(baseline)
    data["coverage"] = {p: {str(ln): list(ids) for ln, ids in lines.items()}
                        for p, lines in baseline.coverage.items()}
    return data


def _load(path: Path) -> Baseline:
    data = read_json(path)
    coverage = {p: {int(ln): tuple(ids) for ln, ids in lines.items()}
                for p, lines in data.pop("coverage").items()}
    subprocess_lines = {p: tuple(lines) for p, lines in data.pop("subprocess_lines").items()}
    return Baseline(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()},
                    coverage=coverage, subprocess_lines=subprocess_lines)

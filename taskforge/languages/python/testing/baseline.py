"""The baseline: the snapshot's suite run repeatedly, the first two runs (forward and
reverse) with per-test coverage, then once more with every test alone (coverage only, no
outcomes): the three maps, merged, are the test map.

Tests that pass in every run are the stable set; tests whose outcome changes between runs
(one run is in reverse order, to expose order dependence) are flaky and never used. A test
that runs past the per-test limit ends its run; the run starts again without it, and it is
left out like a flaky test (`hung`): one test that never ends costs only itself.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from taskforge.cache import digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.languages.base import TEST_TIMEOUT, Runner, import_errors_line
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.python.testing.testmap import (
    MapProbe,
    measured_alone,
    merge_test_maps,
    tracer_for,
)
from taskforge.model import STATE_UNKNOWN, Baseline, Environment, Snapshot, TestRun
from taskforge.workspace import scratch_copy, scratch_dir

# 3: subprocesses' coverage included; both orders merged. 4: sys.monitoring on 3.12+.
# 5: the test files that failed to import; tests that hung. 6: what a fixture wider than a
# function runs belongs to every test that uses it. 7: and what each test runs alone.
# 8: runs with pytest-randomly in order, hypothesis steadied and rerun plugins out (a test a
# rerun passed, or one hypothesis's deadline failed, may have another outcome now).
# 9: the module-level state the ordered runs' tests leave changed (`Baseline.state_left`).
# 10: and whether they left garbage that raises (`gc:unraisable`, taskforge_state.py).
FORMAT = 10
# The isolated run may take this many times the slowest ordered run (at least
# ISOLATED_MIN_SECONDS, at most the suite's timeout); what it measured by then stays. Forking
# and measuring each test alone costs ~20 ms a test: 3.4-13.5x a plain run on six packages
# (bench/testmap_cost.py; click's 2,459 tests 9.8x).
ISOLATED_RUNS = 30
ISOLATED_MIN_SECONDS = 120.0
# More hung tests than this: the suite, not a test, is the problem (each costs a restart).
MAX_HUNG = 5


def baseline_key(snapshot: Snapshot, env: Environment, repeats: int, sandbox: str,
                 test_timeout: float = TEST_TIMEOUT) -> str:
    # The sandbox (`Sandbox.identity`: docker's with its image) is part of the key: what
    # passes depends on it (a test that runs `less` passes on the host and fails in an
    # image without it, or in a base image rebuilt without it).
    return digest("baseline", FORMAT, snapshot.id, env.key, repeats, sandbox,
                  test_timeout)[:32]


def _path(cache: Path, key: str) -> Path:
    return cache / "baselines" / f"{key}.json"


def keep_baseline(cache: Path, baseline: Baseline) -> None:
    """Cache a baseline another machine ran (a Ray node), so this one's reruns find it."""
    if not _path(cache, baseline.key).is_file():
        write_json(_path(cache, baseline.key), _dump(baseline))


def cached_baseline(snapshot: Snapshot, runner: Runner, *, repeats: int,
                    test_timeout: float = TEST_TIMEOUT) -> Baseline | None:
    path = _path(runner.cache, baseline_key(snapshot, runner.env, repeats,
                                                runner.sandbox.identity(), test_timeout))
    return _load(path) if path.is_file() else None


def run_baseline(snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float = TEST_TIMEOUT) -> Baseline:
    """The suite `max(2, repeats)` times, each run within `runner.timeout`."""
    cached = cached_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)
    if cached is not None:
        return cached
    env, sandbox, timeout, cache = runner.env, runner.sandbox, runner.timeout, runner.cache
    key = baseline_key(snapshot, env, repeats, sandbox.identity(), test_timeout)
    path = _path(cache, key)
    runs: list[TestRun] = []
    with scratch_dir(cache, prefix="coverage-") as results:
        # Per-test coverage in both orders, merged: a test that only reuses what an earlier
        # test built (a cached object, a registry filled lazily) executes nothing in one
        # order, but builds it itself in the other.
        measured: list[tuple[MapProbe, Path]] = []
        tracer = tracer_for(env.spec.python)
        hung: list[str] = []
        for i in range(max(2, repeats)):
            probe = MapProbe(tracer, results / f"run{i}" / f"{tracer}.data")
            probe.out.parent.mkdir()
            while True:
                # A fresh workspace each attempt: the hung test may have left files behind.
                with scratch_copy(snapshot.root, cache, prefix="baseline-") as workspace:
                    run = run_tests(env, workspace, sandbox, timeout=timeout, reverse=(i == 1),
                                    test_map=probe if i < 2 else None, exclude=hung,
                                    test_timeout=min(test_timeout, timeout),
                                    watch_state=i < 2)
                if run.hung is None or run.hung in hung:
                    break
                hung.append(run.hung)
                if len(hung) > MAX_HUNG:
                    raise UserError(f"{snapshot.source}: more than {MAX_HUNG} tests each ran "
                                    f"past {test_timeout:g}s ({', '.join(hung[:3])} ...)")
            if i < 2:
                measured.append((probe, workspace))
            if run.timed_out or run.hung:
                raise UserError(f"{snapshot.source}: the test suite did not finish within "
                                f"{timeout:.0f}s")
            runs.append(run)
        # A hung test is left out of every run's results: an earlier run it finished in
        # does not make it usable.
        tests = tuple(sorted({t for r in runs for t in r.outcomes
                              if not t.startswith("<") and t not in hung}))
        budget = min(timeout, max(ISOLATED_MIN_SECONDS,
                                  ISOLATED_RUNS * max(r.wall_seconds for r in runs)))
        isolated, isolated_seconds = _isolated_map(snapshot, runner, results, hung,
                                                   min(test_timeout, timeout), budget)
        measured.append(isolated)
        alone = measured_alone(isolated[0].out)
        unmeasured = sum(t not in alone for t in tests)
        coverage, by_subprocesses = merge_test_maps(
            [probe.read(workspace, tests) for probe, workspace in measured])
    broken = {f: e for r in runs for f, e in r.collection_errors.items()}
    if not tests:
        raise UserError(f"{snapshot.source}: no tests found"
                        f"{'; ' + import_errors_line(broken) if broken else _hint(runs)}")
    stable = tuple(t for t in tests if all(r.outcomes.get(t) == "passed" for r in runs))
    flaky = tuple(t for t in tests if len({r.outcomes.get(t) for r in runs}) > 1)
    failing = tuple(t for t in tests if t not in stable and t not in flaky)
    if not stable:
        raise UserError(f"{snapshot.source}: no test passes in the baseline "
                        f"({len(tests)} collected, {len(failing)} failing, {len(flaky)} flaky)"
                        f"{_hint(runs, network_only=True)}"
                        f"{'; ' + import_errors_line(broken) if broken else ''}")
    # What the suite's own tests leave changed in either order (a counter, an object built on
    # first use): a failing test that leaves the same proves nothing (confirm.py).
    state_left = tuple(sorted({name for r in runs for names in r.state_left.values()
                               for name in names} - {STATE_UNKNOWN}))
    baseline = Baseline(key=key, tests=tests, stable=stable, flaky=flaky, failing=failing,
                        run_seconds=tuple(round(r.wall_seconds, 3) for r in runs),
                        durations={t: round(max(r.durations.get(t, 0.0) for r in runs), 4)
                                   for t in tests},
                        coverage=coverage, subprocess_lines=by_subprocesses, tracer=tracer,
                        collection_errors=broken, hung=tuple(hung),
                        isolated_seconds=round(isolated_seconds, 3),
                        isolated_unmeasured=unmeasured, state_left=state_left)
    write_json(path, _dump(baseline))
    return baseline


def _isolated_map(snapshot: Snapshot, runner: Runner, results: Path, hung: list[str],
                  test_timeout: float, budget: float) -> tuple[tuple[MapProbe, Path], float]:
    """The third map: every test alone, in a fork of the collected session
    (pytest_plugin/taskforge_isolated.py). The two orders miss a test that only reuses what
    its predecessors built in both (a cache's middle users): deleting that code fails it all
    the same. The run reports no outcomes; a test it cannot measure within `test_timeout`,
    or before the run's `budget` ends, keeps the ordered runs' lines only. Returns the probe
    and workspace to read, and the run's seconds."""
    probe = MapProbe("isolated", results / "isolated" / "isolated.jsonl")
    probe.out.parent.mkdir()
    with scratch_copy(snapshot.root, runner.cache, prefix="baseline-") as workspace:
        run = run_tests(runner.env, workspace, runner.sandbox, timeout=budget,
                        test_map=probe, exclude=hung,
                        extra_env={"TASKFORGE_ISOLATED_TIMEOUT": f"{test_timeout:g}"})
    return (probe, workspace), run.wall_seconds


# What a suite prints when it reaches for the network the sandbox denies.
_NETWORK_ERRORS = ("Temporary failure in name resolution", "Name or service not known",
                   "Network is unreachable", "nodename nor servname", "No route to host",
                   "Failed to establish a new network connection")


def _hint(runs: list[TestRun], network_only: bool = False) -> str:
    """Why a suite gave nothing, in a few words: the network it needs, else (unless
    `network_only`) the last error line pytest printed."""
    lines = [ln.strip() for r in runs for ln in r.log_tail.splitlines() if ln.strip()]
    if any(marker in ln for ln in lines for marker in _NETWORK_ERRORS):
        return ": the suite needs the network, which the sandbox denies"
    if network_only or not lines:
        return ""
    errors = [ln for ln in lines if "error" in ln.lower()]
    return f" ({(errors or lines)[-1][:200]})"


def _dump(baseline: Baseline) -> dict:
    data = asdict(baseline)
    data["coverage"] = {p: {str(ln): list(ids) for ln, ids in lines.items()}
                        for p, lines in baseline.coverage.items()}
    return data


def _load(path: Path) -> Baseline:
    data = read_json(path)
    coverage = {p: {int(ln): tuple(ids) for ln, ids in lines.items()}
                for p, lines in data.pop("coverage").items()}
    by_subprocesses = {p: tuple(lines) for p, lines in data.pop("subprocess_lines").items()}
    return Baseline(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()},
                    coverage=coverage, subprocess_lines=by_subprocesses)

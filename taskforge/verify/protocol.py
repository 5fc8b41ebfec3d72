"""The fail-before / pass-after protocol, on a real materialized workspace.

Task state: the tests run `repeats` times; a test that fails in every run is a
FAIL_TO_PASS candidate, one that passes in every run stays PASS_TO_PASS, anything else is
unstable. Reference state (`patch` applied): every test must pass in every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskforge.errors import Rejected
from taskforge.languages.base import Runner
from taskforge.model import GARBAGE_VICTIM, STATE_UNKNOWN, Baseline, TestRun
from taskforge.patches import apply_patch


@dataclass
class Labels:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    unstable: list[str]
    reference_failures: list[str]
    runs: list[dict[str, Any]] = field(default_factory=list)
    task_runs: list[TestRun] = field(default_factory=list, repr=False)  # the task state's


def _summary(state: str, run: TestRun) -> dict[str, Any]:
    return {"state": state, "seconds": round(run.wall_seconds, 3),
            "pytest_seconds": round(run.pytest_seconds, 3),
            "passed": len(run.passed()), "not_passed": len(run.not_passed()),
            "timed_out": run.timed_out}


def ran(run: TestRun, state: str) -> TestRun:
    """`run`, unless it did not run what it was given: selected tests it never reported on,
    with no file that failed to load to account for them (a session that died at start, an
    early exit). Its outcomes would read as every such test failing, in the task state a
    FAIL_TO_PASS set that proves nothing: Rejected("run-broken") instead (fail closed)."""
    if run.unreported and not run.collection_errors:
        lines = [line for line in run.log_tail.splitlines() if line.strip()]
        raise Rejected("run-broken", f"{state}: {len(run.unreported)} selected tests never "
                       f"reported (exit {run.exit_code}): {lines[-1][:200] if lines else ''}")
    return run


def label_tests(workspace: Path, patch: str, tests: list[str], runner: Runner, *,
                repeats: int, reference_repeats: int | None = None,
                reference_failing_only: bool = False,
                prior: Sequence[TestRun] = (), watch_state: bool = False) -> Labels:
    """Run `tests` in the task state, then apply `patch` and run them in the reference state
    (`reference_repeats` times, default `repeats`; 0 when the caller has established the
    reference otherwise and only needs the patch applied). `reference_failing_only`: the
    reference runs only the tests that failed in the task state (FAIL_TO_PASS), which is
    what a task needs of it: its passing tests passed on the original code in every one of
    the baseline's runs. `prior`: fresh runs of the same `tests` on the same task-state
    tree, elsewhere; they count among the `repeats`. `watch_state`: the task state's runs
    report the state each test left (`state_left_behind`)."""
    summaries: list[dict[str, Any]] = [_summary("task", run) for run in prior]
    task_runs = list(prior)
    for _ in range(repeats - len(prior)):
        run = runner.run(workspace, select=tests, watch_state=watch_state)
        if run.timed_out:
            raise Rejected("timeout", "task state")
        ran(run, "task state")
        task_runs.append(run)
        summaries.append(_summary("task", run))
    failing = [t for t in tests if all(r.outcomes.get(t) != "passed" for r in task_runs)]
    passing = [t for t in tests if all(r.outcomes.get(t) == "passed" for r in task_runs)]
    unstable = [t for t in tests if t not in failing and t not in passing]
    apply_patch(workspace, patch)
    reference_failures: set[str] = set()
    reference_tests = failing if reference_failing_only else tests
    # Nothing failed: nothing for the reference to run (an empty selection is every test).
    for _ in range(0 if not reference_tests else
                   repeats if reference_repeats is None else reference_repeats):
        run = runner.run(workspace, select=reference_tests)
        if run.timed_out:
            raise Rejected("timeout", "reference state")
        ran(run, "reference state")
        reference_failures |= {t for t in reference_tests if run.outcomes.get(t) != "passed"}
        summaries.append(_summary("reference", run))
    return Labels(fail_to_pass=failing, pass_to_pass=passing, unstable=unstable,
                  reference_failures=sorted(reference_failures), runs=summaries,
                  task_runs=task_runs)


def state_left_by(task_runs: Sequence[TestRun], fail_to_pass: Sequence[str]) -> set[str]:
    """The module-level state the FAIL_TO_PASS tests left changed in the task state's runs
    (`STATE_UNKNOWN` for a test the watch could not tell about). Empty for runs that did not
    watch."""
    return {name for run in task_runs for test in fail_to_pass
            for name in run.state_left.get(test, ())}


def state_left_behind(task_runs: Sequence[TestRun], fail_to_pass: Sequence[str],
                      baseline: Baseline) -> list[str]:
    """What of `state_left_by` no test of the baseline leaves changed: a test that fails
    half-way skipped its own clean-up (`set_run_validators(False)`, the failing call, then
    `set_run_validators(True)` never reached), and a later test that reads that state fails
    in a whole-suite run though it never runs the deleted code; a run of the covering tests
    never meets it. What the suite's own passing tests leave changed (a counter, an object
    built on first use) is no such sign. A test the watch could not tell about counts (fail
    closed: the price is a whole suite)."""
    usual = set(baseline.state_left)
    return sorted(name for name in state_left_by(task_runs, fail_to_pass)
                  if name == STATE_UNKNOWN or name not in usual)


def garbage_victims(labels: Labels) -> list[str]:
    """FAIL_TO_PASS tests that failed in a task-state run with nothing but an unraisable
    exception (`GARBAGE_VICTIM`): garbage another test left, which the collector frees in
    whatever test runs then, so another run fails another test. Empty for runs that did not
    watch."""
    return sorted({t for run in labels.task_runs for t in labels.fail_to_pass
                   if GARBAGE_VICTIM in run.state_left.get(t, ())})


def check_labels(labels: Labels) -> None:
    """Reject what must never become a task."""
    if labels.unstable:
        raise Rejected("flaky-in-task-state", labels.unstable[0])
    victims = garbage_victims(labels)
    if victims:
        raise Rejected("flaky-in-task-state", f"{victims[0]}: failed only with garbage another "
                       "test left, which the collector frees in whatever test runs then")
    if labels.reference_failures:
        raise Rejected("reference-fails", labels.reference_failures[0])
    if not labels.fail_to_pass:
        raise Rejected("no-failing-test", "every covering test passes with the feature deleted")


def collection_breaks(workspace: Path, expected: tuple[str, ...],
                      runner: Runner) -> tuple[list[str], list[str]]:
    """A deletion whose code ran at import time must leave collection as it was: the
    collection errors (`<collect-error>::path` markers) and the expected ids no longer
    collected. Both empty: nothing broke."""
    collected = runner.collect(workspace)
    errors = sorted(t for t in collected if t.startswith("<"))
    return errors, sorted(set(expected) - collected)


def audit_labels(labels: Labels, fail_to_pass: list[str]) -> list[str]:
    """Disagreements between a whole-suite run's labels and the targeted FAIL_TO_PASS."""
    problems = []
    extra = sorted(set(labels.fail_to_pass) - set(fail_to_pass))
    missing = sorted(set(fail_to_pass) - set(labels.fail_to_pass))
    if extra:
        problems.append(f"fail in the whole suite but not in the targeted run: {extra[:5]}")
    if missing:
        problems.append(f"fail in the targeted run but not in the whole suite: {missing[:5]}")
    if labels.unstable:
        problems.append(f"unstable in the whole suite: {labels.unstable[:5]}")
    if labels.reference_failures:
        problems.append(f"fail with the reference in the whole suite: {labels.reference_failures[:5]}")
    return problems

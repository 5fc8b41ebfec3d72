"""Re-verification of an emitted task from scratch (`taskforge verify`): every gate `generate`
ran, on fresh materializations of the record: the leak scan, the collection check and the
labels on one (in that order: the scan reads it as the agent gets it, then searches the
environment while the tests run), each trivial solution on its own. Like `generate`'s
verification workspaces, these get what the language adds for verification runs (Python:
the snapshot's bytecode for the files the deletion left alone), after the scan.

With `grade`, one gate more, which `generate` never runs per task: the grader itself, as an
RL loop meets the task (the oracle run of SWE-bench's validation and Harbor's): its reference
solution scores 1.0 with nothing reported, its start state 0. The labels' runs use the
runner; the grader adds canaries, its integrity checks and every PASS_TO_PASS test, so a
record whose PASS_TO_PASS the targeted labels never ran, or an environment where the
grader's checks trip over the suite, fails here and nowhere else."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from taskforge.errors import Rejected
from taskforge.grade import grade_workspace
from taskforge.languages.base import Runner
from taskforge.materialize import materialize_record
from taskforge.model import TaskRecord, record_snapshot
from taskforge.patches import apply_patch, created_files, named_paths
from taskforge.sanitize import Fingerprints, PendingScan, ScanRemoves, fingerprint_record
from taskforge.verify.gates import (
    begin_scan_gate,
    collection_gate,
    null_rejection,
    restore_tests,
    scan_gate,
    score_null_solutions,
)
from taskforge.verify.protocol import (
    collection_breaks,
    garbage_victims,
    label_tests,
    state_left_by,
)
from taskforge.workspace import warm_dir


def reverify(record: TaskRecord, snapshot_root: Path, runner: Runner, *,
             full_suite: bool = False, grade: bool = False) -> list[str]:
    """The problems found, each `gate: what` (empty: verified). `full_suite`: the labels of
    every FAIL_TO_PASS and PASS_TO_PASS test, not only the tests verification ran. `grade`:
    the grader's gate too (the reference solution and the start state graded)."""
    try:
        return _reverify(record, snapshot_root, runner, full_suite, grade, scan_meanwhile=True)
    except ScanRemoves:  # after the runs: all again, the scan's rounds before them
        return _reverify(record, snapshot_root, runner, full_suite, grade, scan_meanwhile=False)


def _reverify(record: TaskRecord, snapshot_root: Path, runner: Runner, full_suite: bool,
              grade: bool, *, scan_meanwhile: bool) -> list[str]:
    check = _Reverify(dict(record), snapshot_root, runner)
    found: dict[str, list[str]] = {}

    def gate(name: str, run: Callable[[], list[str]]) -> None:
        try:
            found[name] = run()
        except Rejected as why:
            found[name] = [str(why)]

    with warm_dir(runner.cache, prefix="reverify-") as scratch, \
            contextlib.ExitStack() as scans:
        # One fresh materialization, exactly as the agent gets it: the leak scan reads it
        # before anything has run there (and searches the environment while the tests
        # run, as `generate` does); then, its hidden tests back, the collection check and
        # the labels run in it (a collect-only run changes nothing a test sees).
        workspace, removed = materialize_record(record, snapshot_root, scratch / "workspace")
        pending: PendingScan | None = None
        if scan_meanwhile:
            try:
                pending = scans.enter_context(check.begin_leak_scan(workspace, removed))
            except Rejected as why:
                found["leak-scan"] = [str(why)]
        else:
            gate("leak-scan", lambda: check.leak_scan(workspace, removed))
        try:
            restore_tests(workspace, record.get("test_patch") or "", snapshot_root)
        except Rejected as why:  # the tests graders would run are not the verified ones
            found["collection-breaks"] = found["labels"] = [str(why)]
        else:
            # the hidden tests are the snapshot's again, byte for byte: their bytecode stands
            check.set_up(workspace, (check.edited | named_paths(record["patch"]))
                         - set(created_files(record.get("test_patch") or "")))
            gate("collection-breaks", lambda: check.collection(workspace))
            gate("labels", lambda: check.labels(workspace, full_suite))
        if pending is not None:
            try:
                pending.finish(removals=False)  # or ScanRemoves: start over
                found["leak-scan"] = []
            except Rejected as why:
                found["leak-scan"] = [str(why)]
    gate("trivial-solution", check.trivial)
    if grade:
        gate("grader", check.grader)
    return [f"{name}: {problem}" for name in GATES for problem in found.get(name, [])]


GATES = ("labels", "trivial-solution", "collection-breaks", "leak-scan", "grader")  # in reports


class _Reverify:
    def __init__(self, record: TaskRecord, snapshot_root: Path, runner: Runner) -> None:
        self.record, self.root, self.runner = record, snapshot_root, runner
        # what the deletion touched (sources, hidden tests): no snapshot bytecode beside it
        self.edited = named_paths(record["deletion_patch"])

    def set_up(self, workspace: Path, changed: set[str]) -> None:
        """Ready a materialized workspace for verification runs, as `generate` readies its
        own; `changed`: the files that differ from the snapshot's."""
        self.runner.language.set_up_workspace(workspace, record_snapshot(self.record, self.root),
                                              changed, self.runner)

    def labels(self, workspace: Path, full_suite: bool) -> list[str]:
        record = self.record
        f2p = set(record["FAIL_TO_PASS"])
        stable = f2p | set(record["PASS_TO_PASS"])
        tests = sorted(stable) if full_suite else list(record["verification"]["tests_run"])
        # Over a part of the suite, as `generate` does: what the failing tests leave behind
        # matters (later tests of the suite may read it, `state_left_behind`). Every run
        # watches: a test failing only with another's garbage is named in any of them.
        watch = set(tests) != stable
        # The reference runs FAIL_TO_PASS once, as `generate`'s does; `--full-suite` (the
        # whole-suite method, strict) runs every test in it `repeats` times.
        labels = label_tests(workspace, record["patch"], tests, self.runner,
                             repeats=record["verification"]["repeats"],
                             reference_repeats=None if full_suite else 1,
                             reference_failing_only=not full_suite, watch_state=True)
        problems = []
        # What the suite's passing tests leave changed too, `generate` recorded (the
        # baseline knows it, the record is all this has); a record without it, from before
        # the watch, has every leftover counted (fail closed).
        usual = set(record["verification"].get("state_usual") or ())
        left = sorted(state_left_by(labels.task_runs, sorted(f2p)) - usual) if watch else []
        if left:
            problems.append(f"a FAIL_TO_PASS test left {left[:5]} changed, which later tests "
                            f"of the suite may read: its labels need every stable test")
        if set(labels.fail_to_pass) != f2p:
            extra = sorted(set(labels.fail_to_pass) - f2p)
            missing = sorted(f2p - set(labels.fail_to_pass))
            problems.append(f"FAIL_TO_PASS differs: now failing but not listed {extra[:5]}, "
                            f"listed but not failing {missing[:5]}")
        if labels.unstable:
            problems.append(f"unstable in the task state: {labels.unstable[:5]}")
        victims = garbage_victims(labels)
        if victims:
            problems.append(f"failed only with garbage another test left (the collector's "
                            f"timing, not the code's): {victims[:5]}")
        if labels.reference_failures:
            problems.append(f"fail with the reference: {labels.reference_failures[:5]}")
        return problems

    def trivial(self) -> list[str]:
        """Each trivial body where the deletion put its stubs, on FAIL_TO_PASS: those the
        language's fast path can score in one process (`Language.screen_trivial`) there, the
        others fresh, each on its own."""
        language = self.runner.language
        known = language.screen_trivial(self.record, self.root, self.runner)
        test_patch = self.record.get("test_patch") or ""

        def workspace_for(body: str, dest: Path) -> tuple[Path, set[str]]:
            null = {**self.record,
                    "deletion_patch": language.with_null_body(self.record["deletion_patch"], body)}
            workspace, _removed = materialize_record(null, self.root, dest)
            apply_patch(workspace, test_patch)
            self.set_up(workspace, self.edited | named_paths(test_patch))
            return workspace, self.edited

        nulls = score_null_solutions(language, list(self.record["FAIL_TO_PASS"]), self.runner,
                                     workspace_for, prefix="reverify-null-", known=known)
        rejection = null_rejection(nulls, language.null_bodies)
        return [rejection.detail] if rejection else []

    def grader(self) -> list[str]:
        """The grader on two fresh materializations, as `Task.grade` grades an agent's
        workspace: the reference solution (`patch` applied) must score 1.0 with nothing
        reported, the start state as the agent gets it 0."""
        problems = []
        with warm_dir(self.runner.cache, prefix="reverify-grade-") as scratch:
            reference, _removed = materialize_record(self.record, self.root,
                                                     scratch / "reference")
            apply_patch(reference, self.record["patch"])
            graded = grade_workspace(self.record, reference, self.root, self.runner)
            if graded.reward != 1.0 or graded.tampered:
                problems.append(f"the reference solution scores {graded.reward}"
                                + _outcomes(graded.failed, graded.errors, graded.tampered))
            start, _removed = materialize_record(self.record, self.root, scratch / "start")
            graded = grade_workspace(self.record, start, self.root, self.runner)
            if graded.reward != 0.0:
                problems.append(f"the start state scores {graded.reward}: no FAIL_TO_PASS "
                                f"test fails under the grader")
        return problems

    def collection(self, workspace: Path) -> list[str]:
        """Collection in the task state against the stable tests (FAIL_TO_PASS and
        PASS_TO_PASS); breaks must be allowed and be the ones recorded. Where `generate`
        ran no such check (`collection_checked` false: the test map saw none of the deleted
        code run at import or collection, so the deletion cannot change what collects),
        neither does this: a collect-only run of the whole suite is a fresh process per task
        (0.16 s of cachetools' 1.1 s) that could only find what the labels' runs of the
        tests the deletion reaches would find. A record without the field is checked."""
        if not self.record["verification"].get("collection_checked", True):
            return []
        stable = sorted(set(self.record["FAIL_TO_PASS"]) | set(self.record["PASS_TO_PASS"]))
        recorded = self.record["verification"].get("collateral") or {}
        errors, missing = collection_breaks(workspace, tuple(stable), self.runner)
        collateral = collection_gate(errors, missing, stable,
                                     allowed=bool(recorded.get("allowed")))
        found = (sorted(collateral["collection_errors"]), sorted(collateral["uncollected"]))
        listed = (sorted(recorded.get("collection_errors", [])),  # generate also listed
                  sorted(set(recorded.get("uncollected", [])) & set(stable)))  # unstable ones
        if found != listed:
            return [f"collateral differs: now {found}, recorded {listed}"]
        return []

    def leak_scan(self, workspace: Path, removed: dict[str, list[str]]) -> list[str]:
        scan_gate(workspace, removed, self.root, self.runner.env.venv, self.fingerprints())
        return []

    def begin_leak_scan(self, workspace: Path, removed: dict[str, list[str]]) -> PendingScan:
        return begin_scan_gate(workspace, removed, self.root, self.runner.env.venv,
                               self.fingerprints())

    def fingerprints(self) -> Fingerprints:
        return fingerprint_record(self.record, self.root)  # of the code, not hidden tests


def _outcomes(failed: tuple[str, ...], errors: tuple[str, ...], tampered: tuple[str, ...]) -> str:
    """What a grade that fell short says, its lists cut short."""
    parts = [f"{name} {list(tests[:3])}{' ...' if len(tests) > 3 else ''}"
             for name, tests in (("failed", failed), ("errors", errors),
                                 ("reported", tampered)) if tests]
    return (": " + "; ".join(parts)) if parts else ""

"""One grading run of a Java solution: the clean copy (`grading/__init__.py`), the record's
tests compiled and run by the record's environment in the sandbox, outcomes from the signed
channel, canaries, and with the checks the expectation copies' run (`expectations.py`): a
second clean copy at the first one's very path, with the same selection and the channel at
the same path, where a few FAIL_TO_PASS tests expect another value. One that passes
disqualifies, unless it passes on the original code as well; a test passes where it passed
in both runs (the changed ones: in the first), so a stub that cheats in one run of two gains
nothing from the tests left as they are."""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.base import GradedRun, Runner, report_rewritten
from taskforge.languages.grading_copy import (
    Judged,
    digests,
    graded_with_copies,
    judged_on_the_original,
    remove_escaping_links,
    rewritten_during_run,
)
from taskforge.languages.java.files import is_test_file
from taskforge.languages.java.grading import (
    canary_findings,
    copy_solution,
    plant_canaries,
    restore_protected,
    runner_tampering,
    tree_files,
)
from taskforge.languages.java.grading.expectations import (
    agrees_with_the_original,
    draw_expectation_copies,
    fails_as_honest_code_does,
    run_on_the_original,
)
from taskforge.languages.java.testing import file_of, read_channel, run_tests
from taskforge.model import Finding, Outcome, TaskRecord
from taskforge.patches import created_files
from taskforge.workspace import scratch_dir


def grade_run(record: TaskRecord, solution: Path, snapshot_root: Path, runner: Runner, *,
              checks: bool) -> GradedRun:
    """Run FAIL_TO_PASS and PASS_TO_PASS on a clean copy of `solution` (left untouched);
    with `checks` and a test that qualifies, the expectation copies' run too."""
    expected = sorted(set(record["FAIL_TO_PASS"]) | set(record["PASS_TO_PASS"]))
    with scratch_dir(runner.cache, prefix="grade-") as scratch:
        copy = scratch / "workspace"
        snapshot_files = tree_files(snapshot_root)
        test_code = sorted(rel for rel in snapshot_files if is_test_file(rel))
        tampered = copy_solution(solution, copy, snapshot_files)
        tampered += remove_escaping_links(copy)
        tampered += restore_protected(copy, snapshot_root,
                                      set(created_files(record.get("test_patch", ""))))
        findings = runner_tampering(copy)
        copies, changed = draw_expectation_copies(copy, record["FAIL_TO_PASS"], expected) \
            if checks else ([], {})

        def judge(first: _Checked, again: _Checked) -> Judged:
            return judged_on_the_original(
                copies, first.outcomes, again.outcomes, again.compared, fails_as_honest_code_does,
                agrees_with_the_original, lambda found: run_on_the_original(
                    found, changed, snapshot_root, runner, scratch / "original"))

        graded = graded_with_copies(
            copy, scratch, copies, changed,
            lambda _copies: _checked_run(copy, expected, test_code, runner, scratch / "run",
                                         checks=checks), judge)
    return GradedRun(outcomes=graded.outcomes, timed_out=graded.timed_out,
                     tampered=tuple(tampered), findings=(*findings, *graded.findings))


@dataclass(frozen=True)
class _Checked:
    outcomes: dict[str, Outcome]
    timed_out: bool
    findings: tuple[Finding, ...]
    compared: dict[str, list]  # what the assertion that failed a test compared, by its id


def _checked_run(copy: Path, expected: list[str], test_code: list[str], runner: Runner,
                 scratch: Path, *, checks: bool) -> _Checked:
    """One run of `expected` in the restored `copy`, canaries planted afresh (`checks`), its
    outcomes from the signed channel, keyed anew, at the same path in every run. The test
    code (`test_code`, the snapshot's, and the canaries' files) as it was before the run is
    compared with what the run left: the sources are compiled before any test runs, but a
    test file the solution changed meanwhile is what a later reader of the copy would take
    for the test (the run on the original code did, in the review of this change)."""
    shutil.rmtree(scratch, ignore_errors=True)  # the run before, at the same paths
    scratch.mkdir()
    canaries = plant_canaries(copy, expected) if checks else []
    channel = scratch / "channel"
    channel.mkdir()
    key = secrets.token_bytes(32)
    (channel / "key").write_bytes(key)
    selected = expected + [c.test_id for c in canaries]
    before = digests(copy, sorted({*test_code, *(file_of(c.test_id) for c in canaries)}))
    run = run_tests(runner.env, copy, runner.sandbox, timeout=runner.timeout,
                    select=selected, channel=channel)
    signed, compared = read_channel(channel, key)
    # What the tests did, as they did it: the launcher's report is written by the JVM the
    # solution runs in, after the tests, and could be rewritten before it is read.
    outcomes = {t: signed.get(t, "error") for t in selected}
    findings: list[Finding] = [*rewritten_during_run(copy, before)]
    if not run.timed_out:
        findings += report_rewritten(run.outcomes, signed, selected)
        if checks:
            findings += canary_findings(canaries, outcomes)
    return _Checked({t: outcomes[t] for t in expected}, run.timed_out, tuple(findings),
                    compared)

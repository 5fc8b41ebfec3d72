"""One grading run of a JavaScript solution: the clean copy, the record's runner in the
sandbox with the environment's packages linked in, and what the solution tried.

The runner and its arguments come from the record's environment (never from the solution's
package.json, which is restored anyway); its report is written outside the workspace and read
back here. With `checks`, canaries whose outcome the grader knows run in the same run
(`canaries.py`), and the solution's own code is read for test frameworks it reaches for
(`static.py`). Every run has node:assert guarded (support/taskforge-guard.cjs); what the
solution tried to replace there is reported. Under node's runner each test's outcome also
comes over a signed channel from inside its file's process (support/taskforge-channel.cjs,
`read_channel`): a test passes only where the report and the channel agree, and a report that
says more passed than the channel is named rewritten.
"""

from __future__ import annotations

import functools
import secrets
from pathlib import Path

from taskforge.languages.base import GradedRun, Runner, report_rewritten
from taskforge.languages.javascript.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.javascript.grading.files import copy_solution, restore_protected, tree_files
from taskforge.languages.javascript.grading.static import framework_findings
from taskforge.languages.javascript.runners.nodetest import NodeTestRunner, read_channel
from taskforge.languages.javascript.testing import run_tests, runner_of
from taskforge.model import Finding, TaskRecord
from taskforge.patches import created_files
from taskforge.workspace import scratch_dir


@functools.lru_cache(maxsize=16)
def _snapshot_files(root: Path) -> frozenset[str]:
    """A snapshot never changes (content-addressed): list it once per process."""
    return frozenset(tree_files(root))


def grade_run(record: TaskRecord, solution: Path, snapshot_root: Path, runner: Runner, *,
              checks: bool) -> GradedRun:
    """Run FAIL_TO_PASS and PASS_TO_PASS on a clean copy of `solution` (left untouched)."""
    env = runner.env
    expected = sorted(set(record["FAIL_TO_PASS"]) | set(record["PASS_TO_PASS"]))
    with scratch_dir(runner.cache, prefix="grade-") as scratch:
        copy = scratch / "workspace"
        tampered = copy_solution(solution, copy)
        files = tree_files(copy)
        tampered += restore_protected(copy, snapshot_root, set(_snapshot_files(snapshot_root)),
                                      files, hidden=created_files(record.get("test_patch", "")))
        static = framework_findings(copy, snapshot_root, files) if checks else []
        canaries = plant_canaries(copy, expected, env.spec.test_command[0]) if checks else []
        guarded = scratch / "guard"
        guarded.mkdir()
        replaced = guarded / "replaced.txt"
        selected = expected + [c.test_id for c in canaries]
        variables = {"TASKFORGE_GUARD_OUT": str(replaced)}
        # node:test: every test's outcome also comes over a signed channel from inside its
        # file's process (support/taskforge-channel.cjs), keyed afresh for each grading.
        channel = scratch / "channel" if runner_of(env)[0].name == NodeTestRunner.name else None
        key = secrets.token_bytes(32) if channel is not None else b""
        if channel is not None:
            channel.mkdir()
            (channel / "key").write_bytes(key)
            variables["TASKFORGE_CHANNEL"] = str(channel)
        run, _report = run_tests(env, copy, runner.sandbox, timeout=runner.timeout,
                                 select=selected, extra_env=variables,
                                 writable=(guarded, *((channel,) if channel else ())))
        tried = sorted(set(replaced.read_text(errors="replace").splitlines())) \
            if replaced.is_file() else []
        signed = read_channel(channel, key, copy, selected) if channel is not None else None
    outcomes = dict(run.outcomes)
    findings: list[Finding] = []
    if signed is not None:
        # A test passed where the runner's report and the channel both say so.
        if not run.timed_out:
            findings += report_rewritten(run.outcomes, signed, selected)
        outcomes = {t: "failed" if o == "passed" and signed.get(t) != "passed" else o
                    for t, o in outcomes.items()}
    if checks and not run.timed_out:
        findings += canary_findings(canaries, outcomes, set(run.collection_errors))
    findings += [_refused(line) for line in tried[:20]]
    findings += [Finding(line, True) for line in static]
    return GradedRun(outcomes=outcomes, timed_out=run.timed_out,
                     tampered=tuple(tampered), findings=tuple(findings))


def _refused(line: str) -> Finding:
    """What the guard refused (support/taskforge-guard.cjs, taskforge-channel.cjs): a
    replacement of node:assert or node:test, or a call into the runner's insides."""
    if line.startswith("called "):
        return Finding(f"{line} (refused: the test runner's insides are out of reach)", True)
    return Finding(f"replaced {line} (refused: its assertions stand)", True)

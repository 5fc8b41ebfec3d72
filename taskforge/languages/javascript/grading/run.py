"""One grading run of a JavaScript solution: the clean copy, the record's runner in the
sandbox with the environment's packages linked in, and what the solution tried.

The runner and its arguments come from the record's environment (never from the solution's
package.json, which is restored anyway); its report is written outside the workspace and read
back here. With `checks`, canaries whose outcome the grader knows run in the same run
(`canaries.py`), and the solution's own code is read for test frameworks it reaches for
(`static.py`). Every run has node:assert guarded (support/taskforge-guard.cjs); what the
solution tried to replace there is reported.
"""

from __future__ import annotations

import functools
from pathlib import Path

from taskforge.languages.base import GradedRun, Runner
from taskforge.languages.javascript.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.javascript.grading.files import copy_solution, restore_protected, tree_files
from taskforge.languages.javascript.grading.static import framework_findings
from taskforge.languages.javascript.testing import run_tests
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
        run, _report = run_tests(env, copy, runner.sandbox, timeout=runner.timeout,
                                 select=expected + [c.test_id for c in canaries],
                                 extra_env={"TASKFORGE_GUARD_OUT": str(replaced)},
                                 writable=(guarded,))
        tried = sorted(set(replaced.read_text(errors="replace").split())) \
            if replaced.is_file() else []
    findings = canary_findings(canaries, run.outcomes, set(run.collection_errors)) \
        if checks and not run.timed_out else []
    findings += [Finding(f"replaced {name} (refused: its assertions stand)", True)
                 for name in tried[:20]]
    findings += [Finding(line, True) for line in static]
    return GradedRun(outcomes=dict(run.outcomes), timed_out=run.timed_out,
                     tampered=tuple(tampered), findings=tuple(findings))

"""Grade a solution workspace: the record's language runs its tests on a clean copy, and the
reward follows from what they did and what the solution tried.

Every expected test must be reported and pass: a skip, an xfail, a missing id or an early
exit is a failure. `tampered` lists what the solution tried. Restored and removed files
cannot change the reward (the tests run without them); what the solution's code does inside
the test process cannot be undone, so it makes the reward 0.

The report itself is not taken on trust (`checks=True`, the default): canaries whose outcome
the grader knows run in the same session, and an observer started before any project code
compares the runner with a snapshot (for Python: `languages/python/grading/`). A wrong
canary, a changed runner, or an integrity channel missing or garbled makes the reward 0.
`checks=False` grades without them (bench/grade_latency.py's baseline).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from taskforge.errors import UserError
from taskforge.languages.base import Runner
from taskforge.model import GradeResult, TaskRecord

Mode = Literal["binary", "fraction"]
MODES = ("binary", "fraction")


def grade_workspace(record: TaskRecord, solution: Path, snapshot_root: Path, runner: Runner, *,
                    mode: Mode = "binary", checks: bool = True) -> GradeResult:
    """Grade `solution` (left untouched) with `runner`: the record's language and
    environment, the sandbox, the time limit of the run (`Task.runner` makes it) and the cache
    the grading copy is made in. `mode="fraction"`: the share of FAIL_TO_PASS that passes when
    every PASS_TO_PASS test passes, else 0. `checks=False`: no canaries and no integrity
    observer (only to measure what they cost)."""
    if mode not in MODES:
        raise UserError(f"grade mode {mode!r}: unknown; choose one of {', '.join(MODES)}")
    start = time.monotonic()
    f2p, p2p = list(record["FAIL_TO_PASS"]), list(record["PASS_TO_PASS"])
    expected = sorted(set(f2p) | set(p2p))
    run = runner.language.grade_run(record, solution, snapshot_root, runner, checks=checks)
    outcomes = run.outcomes
    disqualified = any(f.disqualifies for f in run.findings)
    passed = tuple(t for t in expected if outcomes.get(t) == "passed")
    failed = tuple(t for t in expected if outcomes.get(t) in ("failed", "skipped"))
    errors = tuple(t for t in expected if outcomes.get(t) in ("error", None))
    clean = not run.timed_out and not disqualified
    resolved = clean and len(passed) == len(expected)
    if mode == "binary":
        reward = 1.0 if resolved else 0.0
    else:
        all_p2p = all(outcomes.get(t) == "passed" for t in p2p)
        share = sum(outcomes.get(t) == "passed" for t in f2p) / len(f2p) if f2p else 0.0
        reward = round(share, 6) if clean and all_p2p else 0.0
    messages = list(dict.fromkeys([*run.tampered, *(f.message for f in run.findings)]))
    return GradeResult(reward=reward, resolved=resolved, passed=passed, failed=failed,
                       errors=errors, tampered=tuple(messages),
                       duration_s=round(time.monotonic() - start, 3))

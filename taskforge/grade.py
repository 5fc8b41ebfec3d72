"""Grade a solution workspace: a clean copy, the tests run in the sandbox, a reward.

The grader works on a copy of the solution, never in place (taskforge.languages.python.grading.files builds
it: tests and pytest configuration restored, injections removed). pytest runs with plugin
autoloading off and only the environment's own plugins, results come from the JUnit XML
pytest writes outside the workspace, and an audit hook in the test process reports what the
solution's code does there (taskforge_pytest_plugin). Every expected test must be reported
and pass: a skip, an xfail, a missing id or an early exit is a failure.

`tampered` lists what the solution tried. Restored and removed files cannot change the
reward (the tests run without them); what the solution's code does inside the test process
(pytest internals, test code, the results file, planted bytecode) cannot be undone, so it
makes the reward 0.

The report itself is not taken on trust (`checks=True`, the default): canaries whose outcome
the grader knows run in the same session (languages.python.grading.canaries), and an observer started
before any project code compares the runner with a snapshot and records what each test raised,
over a signed channel (languages.python.grading.integrity). A wrong canary, a changed runner, a test
the XML calls passed that raised, or a channel missing or garbled makes the reward 0.
`checks=False` grades as before (bench/grade_latency.py's baseline).
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import Any, Literal

from taskforge.errors import UserError
from taskforge.grading.findings import Finding
from taskforge.languages.python.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.python.grading.files import (
    copy_solution,
    is_protected,
    remove_injections,
    restore_protected,
    tree_files,
)
from taskforge.languages.python.grading.installed import installed_modules, pytest_plugins
from taskforge.languages.python.grading.integrity import channel_findings, new_key, read_channel
from taskforge.languages.python.grading.static import scan_solution
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Environment, GradeResult, TestRun
from taskforge.patches import created_files
from taskforge.sandbox import Sandbox
from taskforge.workspace import scratch_dir

Mode = Literal["binary", "fraction"]
MODES = ("binary", "fraction")


@functools.lru_cache(maxsize=16)
def _snapshot_files(root: Path) -> frozenset[str]:
    """A snapshot never changes (content-addressed): list it once per process."""
    return frozenset(tree_files(root))


def grade_workspace(record: dict[str, Any], solution: Path, snapshot_root: Path,
                    env: Environment, sandbox: Sandbox, cache: Path,
                    timeout: float = 300.0, mode: Mode = "binary",
                    checks: bool = True) -> GradeResult:
    """Grade `solution` (left untouched). `mode="fraction"`: the share of FAIL_TO_PASS that
    passes when every PASS_TO_PASS test passes, else 0. `checks=False`: no canaries and no
    integrity observer (only to measure what they cost)."""
    if mode not in MODES:
        raise UserError(f"grade mode {mode!r}: unknown; choose one of {', '.join(MODES)}")
    start = time.monotonic()
    f2p, p2p = list(record["FAIL_TO_PASS"]), list(record["PASS_TO_PASS"])
    expected = sorted(set(f2p) | set(p2p))
    snapshot_files = set(_snapshot_files(snapshot_root))
    with scratch_dir(cache, prefix="grade-") as scratch:
        copy = scratch / "workspace"
        tampered = copy_solution(solution, copy)
        tampered += restore_protected(copy, snapshot_root, snapshot_files, tree_files(copy),
                                      hidden=created_files(record.get("test_patch", "")))
        tampered += remove_injections(copy, snapshot_files, tree_files(copy), env.pythonpath,
                                      installed_modules(env.venv))
        files = tree_files(copy)
        changed = sorted(rel for rel in files if rel.endswith(".py") and not is_protected(rel)
                         and _differs(copy / rel, snapshot_root / rel))
        findings = scan_solution(copy, snapshot_root, changed)
        canaries = plant_canaries(copy, expected) if checks else []
        audit = scratch / "audit"
        audit.mkdir()
        (audit / "solution.txt").write_text("".join(f"{rel}\n" for rel in changed))
        (audit / "protected.txt").write_text(
            "".join(f"{rel}\n" for rel in sorted(tree_files(copy)) if is_protected(rel)))
        variables = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                     "TASKFORGE_PLUGINS": ",".join(pytest_plugins(env.venv)),
                     "TASKFORGE_AUDIT": str(audit)}
        if checks:
            key = new_key(audit)
            variables["TASKFORGE_INTEGRITY"] = str(audit)
        selected = expected + [c.node_id for c in canaries]
        run = run_tests(env, copy, sandbox, timeout=timeout, select=selected,
                        extra_env=variables, writable=(audit,))
        findings += _runtime_findings(audit / "findings.jsonl", run)
        if checks and not run.timed_out:
            channel = read_channel(audit, key)
            findings += channel_findings(channel, run.outcomes, selected)
            findings += canary_findings(canaries, run.outcomes,
                                        None if channel.broken else channel.raised)
    disqualified = any(f.disqualifies for f in findings)
    passed = tuple(t for t in expected if run.outcomes.get(t) == "passed")
    failed = tuple(t for t in expected if run.outcomes.get(t) in ("failed", "skipped"))
    errors = tuple(t for t in expected if run.outcomes.get(t) in ("error", None))
    clean = not run.timed_out and not disqualified
    resolved = clean and len(passed) == len(expected)
    if mode == "binary":
        reward = 1.0 if resolved else 0.0
    else:
        all_p2p = all(run.outcomes.get(t) == "passed" for t in p2p)
        share = sum(run.outcomes.get(t) == "passed" for t in f2p) / len(f2p) if f2p else 0.0
        reward = round(share, 6) if clean and all_p2p else 0.0
    messages = list(dict.fromkeys([*tampered, *(f.message for f in findings)]))
    return GradeResult(reward=reward, resolved=resolved, passed=passed, failed=failed,
                       errors=errors, tampered=tuple(messages),
                       duration_s=round(time.monotonic() - start, 3))


def _differs(path: Path, original: Path) -> bool:
    if not original.is_file() or path.is_symlink():
        return True
    return path.stat().st_size != original.stat().st_size or \
        path.read_bytes() != original.read_bytes()


def _runtime_findings(path: Path, run: TestRun) -> list[Finding]:
    """What the audit hook recorded, and whether pytest finished and its results stayed as
    it wrote them."""
    findings: list[Finding] = []
    hashes: dict[str, str | None] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if "message" in entry:
            findings.append(Finding(str(entry["message"]), bool(entry.get("disqualifies", True))))
        else:
            for key, value in entry.items():
                hashes.setdefault(key, value)  # the first: written before any exit handler
    if run.timed_out:
        return findings
    if "junit_sha256" not in hashes or "exit_junit_sha256" not in hashes:
        findings.append(Finding(f"early exit: the test process ended before pytest finished "
                                f"(exit code {run.exit_code})", True))
    elif hashes["junit_sha256"] != hashes["exit_junit_sha256"]:
        findings.append(Finding("rewrote the test results after pytest wrote them", True))
    return findings

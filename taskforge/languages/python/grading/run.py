"""One grading run of a Python solution: the clean copy, pytest in the sandbox with only the
environment's own plugins, and what the solution tried.

The grader works on a copy of the solution, never in place (`files.py` builds it: tests and
pytest configuration restored, injections removed). pytest runs with plugin autoloading off
and only the environment's own plugins, results come from the JUnit XML pytest writes outside
the workspace, and an audit hook in the test process reports what the solution's code does
there (taskforge_pytest_plugin). With `checks`, canaries whose outcome the grader knows run
in the same session (`canaries.py`; copies of FAIL_TO_PASS tests expecting another value,
which only an answer read from the test passes, `expectations.py`), and an observer started
before any project code compares the runner with a snapshot and records what each test
raised, over a signed channel (`integrity.py`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from taskforge.languages.base import GradedRun, Runner
from taskforge.languages.grading_copy import (
    digests,
    read_only_binds,
    remove_escaping_links,
    rewritten_during_run,
)
from taskforge.languages.python.files import is_protected
from taskforge.languages.python.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.python.grading.expectations import (
    passing_on_the_original,
    plant_expectation_copies,
)
from taskforge.languages.python.grading.files import (
    copy_solution,
    remove_injections,
    restore_protected,
    tree_files,
)
from taskforge.languages.python.grading.installed import installed_modules, pytest_plugins
from taskforge.languages.python.grading.integrity import channel_findings, new_key, read_channel
from taskforge.languages.python.grading.static import scan_solution, takes_frames
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Finding, TaskRecord, TestRun
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
    snapshot_files = set(_snapshot_files(snapshot_root))
    with scratch_dir(runner.cache, prefix="grade-") as scratch:
        copy = scratch / "workspace"
        tampered = copy_solution(solution, copy)
        tampered += remove_escaping_links(copy)
        tampered += restore_protected(copy, snapshot_root, snapshot_files, tree_files(copy),
                                      hidden=created_files(record.get("test_patch", "")))
        tampered += remove_injections(copy, snapshot_files, tree_files(copy), env.pythonpath,
                                      installed_modules(env.venv))
        files = tree_files(copy)
        changed = sorted(rel for rel in files if rel.endswith(".py") and not is_protected(rel)
                         and _differs(copy / rel, snapshot_root / rel))
        findings = scan_solution(copy, snapshot_root, changed)
        # The copies first: they are made from the test files as the task has them.
        copies = plant_expectation_copies(copy, record["FAIL_TO_PASS"]) if checks else []
        canaries = copies + plant_canaries(
            copy, expected, hypothesis="hypothesis" in installed_modules(env.venv)) \
            if checks else []
        audit = scratch / "audit"
        audit.mkdir()
        (audit / "solution.txt").write_text("".join(f"{rel}\n" for rel in changed))
        (audit / "frames.txt").write_text("".join(
            f"{rel}\n" for rel in changed
            if (snapshot_root / rel).is_file() and takes_frames(snapshot_root / rel)))
        (audit / "protected.txt").write_text(
            "".join(f"{rel}\n" for rel in sorted(tree_files(copy)) if is_protected(rel)))
        variables = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                     "TASKFORGE_PLUGINS": ",".join(pytest_plugins(env.venv)),
                     "TASKFORGE_AUDIT": str(audit)}
        if checks:
            key = new_key(audit)
            variables["TASKFORGE_INTEGRITY"] = str(audit)
        selected = expected + [c.node_id for c in canaries]
        test_code = digests(copy, sorted(rel for rel in tree_files(copy)
                                         if is_protected(rel) and rel.endswith(".py")))
        bound, pinned = read_only_binds(copy, test_code)
        run = run_tests(env, copy, runner.sandbox, timeout=runner.timeout, select=selected,
                        extra_env=variables, writable=(audit, *pinned), read_only=bound,
                        last=[c.node_id for c in copies])
        findings += rewritten_during_run(copy, test_code)
        findings += _runtime_findings(audit / "findings.jsonl", run)
        if checks and not run.timed_out:
            channel = read_channel(audit, key)
            findings += channel_findings(channel, run.outcomes, selected)
            # A copy that passes on the original code too says nothing of the solution.
            honest = passing_on_the_original(
                [c for c in copies if run.outcomes.get(c.node_id) == "passed"], copy,
                snapshot_root, runner, scratch,
                {k: variables[k] for k in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "TASKFORGE_PLUGINS")},
                selected)
            findings += canary_findings([c for c in canaries if c.node_id not in honest],
                                        run.outcomes, None if channel.broken else channel.raised)
    return GradedRun(outcomes=dict(run.outcomes), timed_out=run.timed_out,
                     tampered=tuple(tampered), findings=tuple(findings))


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

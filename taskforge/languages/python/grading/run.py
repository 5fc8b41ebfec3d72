"""One grading of a Python solution: the clean copy, pytest in the sandbox with only the
environment's own plugins, and what the solution tried.

The grader works on a copy of the solution, never in place (`files.py` builds it: tests and
pytest configuration restored, injections removed). pytest runs with plugin autoloading off
and only the environment's own plugins, results come from the JUnit XML pytest writes outside
the workspace, and an audit hook in the test process reports what the solution's code does
there (taskforge_pytest_plugin). With `checks`, canaries whose outcome the grader knows run
in the same session (`canaries.py`), and an observer started before any project code
compares the runner with a snapshot and records what each test raised, over a signed channel
(`integrity.py`). With the checks, a second run on a second clean copy of the solution holds
the expectation copies (`expectations.py`): a few FAIL_TO_PASS tests expecting another value,
changed in place. One that passes disqualifies, unless it passes on the original code as
well, and so does one that passed in the first run and fails in the second otherwise than
honest code does (comparing the value expected before with the one expected now) or the
original code does; a test passes where it passed in both runs.
"""

from __future__ import annotations

import functools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.base import GradedRun, Runner
from taskforge.languages.grading_copy import (
    Copy,
    Judged,
    digests,
    doubtful_copies,
    graded_with_copies,
    read_only_binds,
    remove_escaping_links,
    rewritten_during_run,
    unlike_the_original,
)
from taskforge.languages.python.files import is_protected
from taskforge.languages.python.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.python.grading.expectations import (
    agrees_with_the_original,
    draw_expectation_copies,
    fails_as_honest_code_does,
    run_on_the_original,
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
from taskforge.model import Finding, Outcome, TaskRecord, TestRun
from taskforge.patches import created_files
from taskforge.workspace import scratch_dir


@functools.lru_cache(maxsize=16)
def _snapshot_files(root: Path) -> frozenset[str]:
    """A snapshot never changes (content-addressed): list it once per process."""
    return frozenset(tree_files(root))


def grade_run(record: TaskRecord, solution: Path, snapshot_root: Path, runner: Runner, *,
              checks: bool) -> GradedRun:
    """Run FAIL_TO_PASS and PASS_TO_PASS on a clean copy of `solution` (left untouched); with
    `checks` and a test that qualifies, the expectation copies' run too (`expectations.py`).

    That second run looks like the first from inside (`graded_with_copies`): at its path,
    with the same selection, variables and mounts (the audit directory at the same path, a
    new key)."""
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
        copies, changed_tests = draw_expectation_copies(
            copy, record["FAIL_TO_PASS"], also_run=record["PASS_TO_PASS"]) \
            if checks else ([], {})

        def judge(first: _Checked, again: _Checked) -> Judged:
            return _on_the_original(copies, expected, first.outcomes, again, copy,
                                    snapshot_root, runner, scratch / "run")

        graded = graded_with_copies(
            copy, scratch, copies, changed_tests,
            lambda held: _checked_run(copy, expected, snapshot_root, runner, scratch / "run",
                                      changed, checks=checks, copies=held), judge)
    return GradedRun(outcomes=graded.outcomes, timed_out=graded.timed_out,
                     tampered=tuple(tampered), findings=(*findings, *graded.findings))


@dataclass(frozen=True)
class _Checked:
    outcomes: dict[str, Outcome]  # by the task's ids
    timed_out: bool
    findings: tuple[Finding, ...]
    selected: list[str]  # as run: a changed case under the id it runs as
    plugins: dict[str, str]  # the variables that choose pytest's plugins
    compared: dict[str, list]  # by the task's ids: what a failing comparison compared


def _on_the_original(copies: list[Copy], expected: list[str], first: dict[str, Outcome],
                     again: _Checked, copy: Path, snapshot_root: Path, runner: Runner,
                     scratch: Path) -> Judged:
    """Of the changed tests passing in the copies' run, those that pass on the original code
    too (forgiven: a matcher equal to anything); of the tests not changed by name that
    passed in the grading run and not in the copies' run, those that fail on the original
    code too (excused: they share a changed function); of the changed tests that passed in
    the grading run and not in the copies' run, those that did not fail as honest code
    does, comparing the value expected before with the one expected now, nor as the
    original code does (unlike: a stub that read the answer in the grading run and did not
    in the copies' run, a coin's luck, where one FAIL_TO_PASS test is all the task has).
    One run of the original code with the changed test files, made only where any is found
    (`run_on_the_original`); where it cannot run, nothing is forgiven or excused and
    everything unlike stays so (fail closed)."""
    changed = {c.test_id for c in copies}
    passing = [c for c in copies if again.outcomes.get(c.test_id) == "passed"]
    # (the task's tests: each run draws canaries of its own)
    flipped = [t for t in expected if first.get(t) == "passed" and t not in changed
               and again.outcomes.get(t) != "passed"]
    doubtful = doubtful_copies(copies, first, again.outcomes, again.compared,
                               fails_as_honest_code_does)
    if not passing and not flipped and not doubtful:
        return Judged()
    original = run_on_the_original(copies, copy, snapshot_root, runner, scratch,
                                   again.plugins, again.selected)
    unlike = unlike_the_original(doubtful, again.compared, original, agrees_with_the_original)
    if original is None:
        return Judged(unlike=unlike)
    return Judged(
        forgiven={c.test_id for c in passing if original.outcomes.get(c.run_id) == "passed"},
        unlike=unlike,
        excused={t for t in flipped if original.outcomes.get(t) not in ("passed", None)})


def _checked_run(copy: Path, expected: list[str], snapshot_root: Path, runner: Runner,
                 scratch: Path, changed: list[str], *, checks: bool,
                 copies: list[Copy] | None = None) -> _Checked:
    """One run of `expected` in the restored `copy` (where `copies` were changed in place),
    with canaries (`checks`), the audit hook and the observer, the test code bound
    read-only; its outcomes and what it found. `changed`: the solution's source files."""
    env = runner.env
    copies = copies or []
    shutil.rmtree(scratch, ignore_errors=True)  # the run before, at the same paths
    scratch.mkdir()
    canaries = plant_canaries(copy, expected, hypothesis="hypothesis" in installed_modules(
        env.venv)) if checks else []
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
    # A changed case whose id pytest makes from its values runs under its new id.
    ran_as = {c.test_id: c.run_id for c in copies}
    selected = [ran_as.get(t, t) for t in expected] + [c.node_id for c in canaries]
    test_code = digests(copy, sorted(rel for rel in tree_files(copy)
                                     if is_protected(rel) and rel.endswith(".py")))
    bound, pinned = read_only_binds(copy, test_code)
    run = run_tests(env, copy, runner.sandbox, timeout=runner.timeout, select=selected,
                    extra_env=variables, writable=(audit, *pinned), read_only=bound)
    findings = rewritten_during_run(copy, test_code)
    findings += _runtime_findings(audit / "findings.jsonl", run)
    by_task_id = {ran: test_id for test_id, ran in ran_as.items()}
    outcomes = {by_task_id.get(t, t): o for t, o in run.outcomes.items()}
    compared: dict[str, list] = {}
    if checks and not run.timed_out:
        channel = read_channel(audit, key)
        compared = {by_task_id.get(t, t): sides for t, sides in channel.compared.items()}
        findings += channel_findings(channel, run.outcomes, selected)
        findings += canary_findings(canaries, run.outcomes,
                                    None if channel.broken else channel.raised)
    plugins = {k: variables[k] for k in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "TASKFORGE_PLUGINS")}
    return _Checked(outcomes, run.timed_out, tuple(findings), selected, plugins, compared)


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

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
says more passed than the channel is named rewritten. With the checks, a second run on a second
clean copy of the solution holds the expectation copies (`expectations.py`): a few FAIL_TO_PASS
tests expecting another value, changed in place. One that passes disqualifies, unless it passes
on the original code as well, and so does one that passed in the first run and fails in the
second otherwise than honest code does (comparing the value expected before with the one
expected now) or the original code does; a test passes where it passed in both runs.

What the run may not change, checked after it (`taskforge/languages/grading_copy.py`): the
test code restored before it (a test file not loaded yet can be rewritten by code an earlier
file loaded), and the number of tests of an expected test's name in its file: a second one
(`name [2]` beside `name`) that the task does not have and that did not pass means another
test took the name ahead of the file's own (`registered_again`).
"""

from __future__ import annotations

import functools
import secrets
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.base import GradedRun, Runner, report_rewritten
from taskforge.languages.grading_copy import (
    Judged,
    digests,
    graded_with_copies,
    judged_on_the_original,
    read_only_binds,
    remove_escaping_links,
    rewritten_during_run,
)
from taskforge.languages.javascript.files import SOURCE_SUFFIXES, is_protected, is_runner_config
from taskforge.languages.javascript.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.javascript.grading.expectations import (
    agrees_with_the_original,
    draw_expectation_copies,
    fails_as_honest_code_does,
    run_on_the_original,
)
from taskforge.languages.javascript.grading.files import copy_solution, restore_protected, tree_files
from taskforge.languages.javascript.grading.static import framework_findings
from taskforge.languages.javascript.runners.base import file_of
from taskforge.languages.javascript.runners.nodetest import (
    NUMBERED,
    NodeTestRunner,
    Signed,
    read_signed,
    signed_outcomes,
)
from taskforge.languages.javascript.testing import run_tests, runner_of
from taskforge.model import Finding, Outcome, TaskRecord
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
    with the same selection, the guard's and the channel's directories at the same paths."""
    expected = sorted(set(record["FAIL_TO_PASS"]) | set(record["PASS_TO_PASS"]))
    name = runner.env.spec.test_command[0]
    with scratch_dir(runner.cache, prefix="grade-") as scratch:
        copy = scratch / "workspace"
        tampered = copy_solution(solution, copy)
        tampered += remove_escaping_links(copy)
        files = tree_files(copy)
        tampered += restore_protected(copy, snapshot_root, set(_snapshot_files(snapshot_root)),
                                      files, hidden=created_files(record.get("test_patch", "")))
        static = framework_findings(copy, snapshot_root, files) if checks else []
        copies, changed_files = draw_expectation_copies(
            copy, record["FAIL_TO_PASS"], name, runner.env.spec.test_command[1:]) \
            if checks else ([], {})

        def judge(first: _Checked, again: _Checked) -> Judged:
            return judged_on_the_original(
                copies, first.outcomes, again.outcomes, again.compared, fails_as_honest_code_does,
                agrees_with_the_original, lambda _found: run_on_the_original(
                    copies, copy, snapshot_root, runner, scratch / "run", again.selected))

        graded = graded_with_copies(
            copy, scratch, copies, changed_files,
            lambda _copies: _checked_run(copy, expected, snapshot_root, runner, scratch / "run",
                                         checks=checks), judge)
    return GradedRun(outcomes=graded.outcomes, timed_out=graded.timed_out,
                     tampered=tuple(tampered),
                     findings=(*graded.findings, *(Finding(line, True) for line in static)))


@dataclass(frozen=True)
class _Checked:
    outcomes: dict[str, Outcome]
    timed_out: bool
    findings: tuple[Finding, ...]
    selected: list[str]
    compared: dict[str, list]  # what the assertion that failed a test compared, by its id


def _checked_run(copy: Path, expected: list[str], snapshot_root: Path, runner: Runner,
                 scratch: Path, *, checks: bool) -> _Checked:
    """One run of `expected` in the restored `copy` (the changed tests in it, in the copies' run),
    with canaries in their files (`checks`), the guard, node's signed channel and the test
    code bound read-only; its outcomes (a test passed where the report and the channel
    agree) and what it found."""
    env = runner.env
    name = env.spec.test_command[0]
    shutil.rmtree(scratch, ignore_errors=True)  # the run before, at the same paths
    scratch.mkdir()
    canaries = plant_canaries(copy, expected, name) if checks else []
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
    # The test code as restored (canaries planted, copies changed), to compare with after
    # the run.
    test_code = digests(copy, sorted(
        {rel for rel in _snapshot_files(snapshot_root) if _is_test_code(rel)}
        | {file_of(c.test_id) for c in canaries}))
    bound, pinned = read_only_binds(copy, test_code)
    run, report = run_tests(env, copy, runner.sandbox, timeout=runner.timeout,
                            select=selected, extra_env=variables,
                            writable=(guarded, *((channel,) if channel else ()), *pinned),
                            read_only=bound)
    rewritten = rewritten_during_run(copy, test_code)
    tried = sorted(set(_within(copy, replaced.read_text(errors="replace")).splitlines())) \
        if replaced.is_file() else []
    bodies = read_signed(channel, key, copy) if channel is not None else None
    signed = signed_outcomes(bodies, selected) if bodies is not None else None
    outcomes = dict(run.outcomes)
    if signed is not None:
        # A test passed where the runner's report and the channel both say so.
        outcomes = {t: "failed" if o == "passed" and signed.get(t) != "passed" else o
                    for t, o in outcomes.items()}
    findings: list[Finding] = [*rewritten]
    if not run.timed_out:
        findings += registered_again(expected, report.outcomes, bodies)
    if signed is not None and not run.timed_out:
        findings += report_rewritten(run.outcomes, signed, selected)
    if checks and not run.timed_out:
        findings += canary_findings(canaries, outcomes, set(run.collection_errors))
    findings += [_refused(line) for line in tried[:20]]
    return _Checked(outcomes, run.timed_out, tuple(findings), selected, dict(report.compared))


def _refused(line: str) -> Finding:
    """What the guard refused (support/taskforge-guard.cjs, taskforge-channel.cjs): a
    replacement of node:assert or node:test, a call into the runner's insides, or a test
    registered under its file's name by code that is not that file."""
    if line.startswith("called "):
        return Finding(f"{line} (refused: the test runner's insides are out of reach)", True)
    if line.startswith("registered "):  # support/taskforge-channel.cjs: a test's forged file
        return Finding(f"a test was {line} (refused: it counts as not passed)", True)
    return Finding(f"replaced {line} (refused: its assertions stand)", True)


def _within(copy: Path, text: str) -> str:
    """`text` with the grading copy's paths made relative to it (a line names them)."""
    for root in dict.fromkeys((copy, copy.resolve())):
        text = text.replace(f"{root.as_uri()}/", "").replace(f"{root}/", "")
    return text


def _is_test_code(rel: str) -> bool:
    """A restored file whose change would change what the tests do: test code and runner
    configuration, not test data."""
    return is_protected(rel) and (rel.endswith(SOURCE_SUFFIXES) or is_runner_config(rel))


def registered_again(expected: Iterable[str], reported: Mapping[str, Outcome],
                     signed: Signed | None) -> list[Finding]:
    """Expected tests whose name was taken by more tests in their file than the task has.

    Two tests of one path in a file get `name` and `name [2]` in the order registered, in the
    report (`unique_id`) and on node's signed channel (`nth`). Session 64's red team had the
    solution, imported by the test file, load a copy of that file first (its tests wrapped to
    pass, and named after the real file with `//# sourceURL`): the copy's tests took the plain
    names, and the file's own tests ran after them as `name [2]`, failing, ignored.

    The record's ids say how many tests of each path the task counts on (`name [2]` is in
    FAIL_TO_PASS or PASS_TO_PASS where the project itself repeats a name). Any other test of
    an expected test's path must have passed, said so by node's channel where there is one
    (else by the report): a repetition the task leaves out for not reaching the deleted code
    passes, while the file's own test, pushed back by another, fails where the feature is
    missing. A repeated name the project's own suite fails or skips on the original code is
    named too, fail-closed: the self-grade sets such a source aside rather than grade it
    wrongly."""
    wanted: dict[str, set[int]] = {}  # a path's id (without ` [n]`) -> the n the task has
    for test_id in expected:
        wanted.setdefault(test_id, set()).add(1)
        numbered = NUMBERED.fullmatch(test_id)
        if numbered:
            wanted.setdefault(numbered.group(1), set()).add(int(numbered.group(2)))
    seen: dict[str, set[int]] = {}
    for test_id in reported:
        numbered = NUMBERED.fullmatch(test_id)
        if numbered and numbered.group(1) in wanted:
            seen.setdefault(numbered.group(1), set()).add(int(numbered.group(2)))
        if test_id in wanted:
            seen.setdefault(test_id, set()).add(1)
    for rel, path, nth in signed or {}:
        if f"{rel}::{path}" in wanted:
            seen.setdefault(f"{rel}::{path}", set()).add(nth)
    extra = []  # (the expected test, its repetition that did not pass)
    for base in sorted(seen):
        rel, _, path = base.partition("::")
        for nth in sorted(seen[base] - wanted[base]):
            test_id = base if nth == 1 else f"{base} [{nth}]"
            passed = reported.get(test_id, "passed") == "passed" and (
                signed.get((rel, path, nth)) is True if signed is not None
                else test_id in reported)
            if not passed:
                extra.append(test_id)
    if not extra:
        return []
    return [Finding(f"tests of expected tests' names ran more often in their files than the "
                    f"task has them, and did not pass: {', '.join(_quoted(extra))} (another "
                    f"test may have taken the expected name ahead of the file's own)", True)]


def _quoted(ids: list[str]) -> list[str]:
    return [f"`{t}`" for t in ids[:3]] + ([f"{len(ids) - 3} more"] if len(ids) > 3 else [])

"""Before any task is made from a source, the grader grades the source's original code.

Every task of a source is graded in the same environment, with the same checks (canaries,
the runner's integrity, the audit hook), over PASS_TO_PASS tests drawn from the same stable
set. So the original tree, graded with every stable test as PASS_TO_PASS, must score 1.0
with no finding that zeroes a reward; where it does not, the grader would fail correct solutions of every task
this source gives. Session 36 found such a case after the fact: hypothesis' own pytest
plugin changed a runner class as grading imported it, the integrity observer named it, and
every grade in any environment with hypothesis was 0, the reference's too; verification
never grades with the checks, so nothing in `generate` saw it.

What the self-grade decides (`SelfGrade`):
- a finding, a timeout, or a file the grader says was tampered with on the unchanged tree:
  nothing of this source can be graded, so the source is set aside with that line;
- stable tests that do not pass under the grader (with its plugins only, its canaries
  beside them): left out of PASS_TO_PASS like flaky ones (`Baseline.ungradable`), since
  every task would require them.

A self-grade that lets the source go on is cached, with the tests it left out, by what it
depends on: the snapshot, the environment, the sandbox, the stable tests, and taskforge's
own files (a changed grader grades again).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from taskforge.cache import build_digest, digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.ingest import SOURCE_FAILURES, IngestedSource, source_failure
from taskforge.languages import Language
from taskforge.languages.base import Runner
from taskforge.model import Environment, Snapshot
from taskforge.sandbox import Sandbox

# Tests named in a log line or a set-aside reason; the rest are counted.
NAMED = 3
# How long the one graded run may take at least: a task's grade has the same default
# (Task.grade); a suite whose whole run took longer in the baseline gets twice that.
GRADE_TIMEOUT = 300.0


@dataclass(frozen=True)
class SelfGrade:
    """What the grader made of a source's original code."""

    ungradable: tuple[str, ...]  # stable tests it did not pass
    unusable: str | None  # why nothing of the source can be graded, or None
    seconds: float
    cached: bool = False


@dataclass(frozen=True)
class GradedSource:
    """What the self-grade of one source reads: not the whole `IngestedSource` (its test
    map and parsed project stay where they are when the job runs on a Ray node)."""

    snapshot: Snapshot
    env: Environment
    language: Language
    stable: tuple[str, ...]
    slowest_run: float  # the baseline's slowest whole-suite run, seconds

    @classmethod
    def of(cls, source: IngestedSource) -> GradedSource:
        return cls(source.snapshot, source.env, source.language, source.baseline.stable,
                   max(source.baseline.run_seconds, default=0.0))


def _cache_path(source: GradedSource, sandbox: Sandbox, cache: Path) -> Path:
    key = digest("self-grade", source.snapshot.id, source.env.key, sandbox.identity(),
                 sorted(source.stable), build_digest())[:32]
    return cache / "self-grades" / f"{key}.json"


def cached_self_grade(source: GradedSource, sandbox: Sandbox, cache: Path) -> SelfGrade | None:
    """The kept verdict, looked up where the run's cache is (before any job: a Ray node's
    cache is its own); a damaged entry counts as none."""
    path = _cache_path(source, sandbox, cache)
    try:
        kept = read_json(path)
        return SelfGrade(tuple(kept["ungradable"]), None, 0.0, cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def self_grade(source: GradedSource, sandbox: Sandbox, cache: Path) -> SelfGrade:
    """Grade `source`'s original tree with every stable test as PASS_TO_PASS, checks on
    (nothing is read from the cache or written there: `cached_self_grade`,
    `keep_self_grade`). A failure of the source's own (a command that fails, a file that
    cannot be written) is a verdict that sets it aside, as at ingest."""
    started = time.monotonic()
    try:
        return _graded(source, sandbox, cache)
    except UserError as e:
        return SelfGrade((), f"the self-grade failed: {e}", round(time.monotonic() - started, 3))
    except SOURCE_FAILURES as e:
        return SelfGrade((), f"the self-grade failed: {source_failure(e)}",
                         round(time.monotonic() - started, 3))


def _graded(source: GradedSource, sandbox: Sandbox, cache: Path) -> SelfGrade:
    started = time.monotonic()
    stable = source.stable
    record = {"FAIL_TO_PASS": [], "PASS_TO_PASS": list(stable), "test_patch": ""}
    timeout = max(GRADE_TIMEOUT, 2 * source.slowest_run)
    runner = Runner(source.language, source.env, sandbox, timeout, cache=cache)
    run = source.language.grade_run(record, source.snapshot.root,  # type: ignore[arg-type]
                                    source.snapshot.root, runner, checks=True)
    seconds = round(time.monotonic() - started, 3)
    if run.timed_out:
        return SelfGrade((), f"the grader's run of the unchanged code timed out ({timeout:.0f}s; "
                         f"the baseline's slowest run took {source.slowest_run:.0f}s)", seconds)
    wrong = [*run.tampered, *(f.message for f in run.findings if f.disqualifies)]
    if wrong:
        return SelfGrade((), f"the grader does not pass the unchanged code: {_named(wrong)}",
                         seconds)
    ungradable = tuple(t for t in stable if run.outcomes.get(t) != "passed")
    if len(ungradable) == len(stable):
        return SelfGrade(ungradable, "the grader passes none of the stable tests of the "
                         f"unchanged code ({_named(ungradable)})", seconds)
    return SelfGrade(ungradable, None, seconds)


def keep_self_grade(source: GradedSource, sandbox: Sandbox, cache: Path,
                    grade: SelfGrade) -> None:
    """Cache a self-grade that lets the source go on, in the run's own cache (the job may
    have run on a Ray node with a cache of its own): the next run on the same source,
    environment and taskforge skips it and leaves out the same tests (as a cached baseline
    keeps its flaky ones), so shards and resumed runs sharing the cache agree. A source
    set aside is graded again next time (a timeout may be the machine's)."""
    path = _cache_path(source, sandbox, cache)
    if not grade.cached and not grade.unusable and \
            cached_self_grade(source, sandbox, cache) is None:  # none yet, or damaged
        write_json(path, {"snapshot": source.snapshot.id, "stable": len(source.stable),
                          "ungradable": list(grade.ungradable), "seconds": grade.seconds})


def without_ungradable(source: IngestedSource, grade: SelfGrade) -> IngestedSource:
    """`source` with the tests the grader did not pass left out of its stable set."""
    if not grade.ungradable:
        return source
    left_out = set(grade.ungradable)
    baseline = dataclasses.replace(
        source.baseline, stable=tuple(t for t in source.baseline.stable if t not in left_out),
        ungradable=grade.ungradable)
    return dataclasses.replace(source, baseline=baseline)


def ungradable_line(name: str, grade: SelfGrade) -> str:
    """The log line for stable tests the grader did not pass."""
    return (f"{name}: {len(grade.ungradable)} stable tests do not pass when the unchanged code "
            f"is graded, left out like flaky ones: {_named(grade.ungradable)}")


def _named(items: tuple[str, ...] | list[str]) -> str:
    more = f" (and {len(items) - NAMED} more)" if len(items) > NAMED else ""
    return "; ".join(items[:NAMED]) + more

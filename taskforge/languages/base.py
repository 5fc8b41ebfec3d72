"""The language boundary: every question a stage may ask of a language, and nothing more.

A language is one package under `taskforge/languages/` with one `Language` subclass, listed in
`taskforge/languages/__init__.py`. The stages (ingest, verify, grade, export, the pipeline) ask
only these questions; nothing outside `taskforge/languages/` imports a language's modules (a
contract in `make lint` keeps it so). Adding a language is adding a package, not editing stages.

The questions, in the order a run asks them:
- detection: does a snapshot hold this language's code and tests (`detect`);
- environment: build and cache what its tests need (`prepare`), record it in a task and rebuild
  it from the record elsewhere (`environment_record`, `environment_from_record`);
- tests: run test ids with results read from a machine-readable report (`run_tests`), list what
  collects (`collect`), the baseline with per-test coverage (`baseline`, `cached_baseline`,
  `keep_baseline`);
- deletion: the parsed project and the strategies that delete from it (`project`,
  `strategies`), and what stands where code was deleted for the trivial solutions
  (`null_bodies`, `with_null_body`);
- verification: an optional fast path (`screen`) and what a verification workspace needs
  besides the materialized task (`set_up_workspace`);
- grading and files: which files are tests (`is_test_file`), which the grader restores
  (`is_protected`), and a graded run that does not trust the test process (`grade_run`).

A question that runs tests beyond one run (the baseline, a verification workspace, a graded
run) takes a `Runner`: the language and environment, the sandbox, the time limit of a run and
the cache, one object instead of the same arguments in every signature.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from taskforge.errors import Rejected, UserError
from taskforge.languages.strategy import Project, Strategy
from taskforge.model import (
    Baseline,
    Candidate,
    Environment,
    Finding,
    Outcome,
    Snapshot,
    SourceSpec,
    TaskRecord,
    TestRun,
)
from taskforge.sandbox import Sandbox

# Seconds one test (setup, call, teardown) may run in the baseline before it counts as hung.
TEST_TIMEOUT = 60.0


@dataclass(frozen=True)
class Screened:
    """What a fast path learned about one candidate before its confirmation."""

    screened: bool  # False: the fast path could not model it; confirm the slow way
    fail_to_pass: tuple[str, ...] = ()  # covering tests failing in every screened run
    task_runs: int = 0
    null_solutions: dict[str, dict[str, int]] | None = None  # None: check in confirmation
    reference_runs: int = 0  # runs of FAIL_TO_PASS on the original code, all passed
    rejection: Rejected | None = None
    seconds: float = 0.0  # this candidate's jobs in the fast path, forks included
    pytest_seconds: float = 0.0  # what its tests took there (the runner's own figure)


NOT_SCREENED = Screened(screened=False)


# What a test costs at least in a run (its setup, call and report), whatever the baseline
# measured: suites of instant tests are then weighed by their counts, the same every time.
MIN_TEST_SECONDS = 0.001


def verification_tests(candidate: Candidate, baseline: Baseline, repeats: int) -> tuple[str, ...]:
    """The tests that verify `candidate` (the fast path's and the confirmation's alike): its
    covering tests, or every stable test when those are most of the suite and running the
    rest `repeats` times in the task state costs at most half of what its reference run may.

    Why: over a subset of the suite, the FAIL_TO_PASS tests must also run once on the
    original code, in that subset (a test may pass in the whole suite only because of what
    earlier tests left behind); over every stable test, the baseline's runs of the original
    tree are that reference run already. A function most tests reach (sqlparse's lexer: 474
    of 538 tests) then costs its covering tests twice and most of the suite once more on the
    original code, more than the whole suite twice; with every stable test it costs the whole
    suite `repeats` times and nothing more. Only the cost is at stake (both selections prove
    the same labels), so the baseline's durations decide: the covering tests' stand for the
    reference run's, the most it can cost (FAIL_TO_PASS may be fewer, hence the half)."""
    covering = candidate.covering_tests
    stable = baseline.stable
    if len(covering) == len(stable) or 2 * len(covering) <= len(stable):
        return covering
    ran = set(covering)

    def cost(tests: Iterable[str]) -> float:
        return sum(max(baseline.durations.get(t, 0.0), MIN_TEST_SECONDS) for t in tests)

    rest = cost(t for t in stable if t not in ran)
    return tuple(sorted(stable)) if 2 * repeats * rest <= cost(covering) else covering


@dataclass(frozen=True)
class Prepared:
    """A snapshot made ready for its tests: the snapshot as the build leaves it (files the
    build generates added), its environment, and what a user should read about both."""

    snapshot: Snapshot
    env: Environment
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class GradedRun:
    """One grading run of a solution, before the reward: what each expected test did, and
    what the solution tried (`tampered`: files restored or removed, which cannot change the
    reward; `findings`: what the checks saw, some of which disqualify)."""

    outcomes: Mapping[str, Outcome]
    timed_out: bool
    tampered: tuple[str, ...]
    findings: tuple[Finding, ...]


def report_rewritten(reported: Mapping[str, str], signed: Mapping[str, str],
                     selected: Iterable[str]) -> list[Finding]:
    """Tests the runner's report says passed that did not pass as they ran, by a signed
    channel the solution cannot write (Java's ResultChannel, node:test's
    taskforge-channel.cjs): the report was changed inside the test process, during the tests
    or after them. Disqualifying."""
    changed = sorted(t for t in selected
                     if reported.get(t) == "passed" and signed.get(t) != "passed")
    if not changed:
        return []
    return [Finding(f"the test report was rewritten: {len(changed)} test(s) it says passed "
                    f"did not pass as they ran ({', '.join(changed[:3])}"
                    f"{', ...' if len(changed) > 3 else ''})", True)]


@dataclass(frozen=True)
class ScreenRequest:
    """Everything a fast path may read about one source's candidates."""

    snapshot: Snapshot
    env: Environment
    baseline: Baseline
    project: Project
    candidates: Sequence[Candidate]
    repeats: int
    timeout: float
    sandbox: Sandbox
    cache: Path
    pool: Any  # the run's executor: map_unordered(fn, items, needs=...) and .workers


@dataclass(frozen=True)
class Runner:
    """How one environment's tests run: its language, the sandbox, the time limit of a run,
    and the cache that holds what the runs keep (baselines, bytecode) and their scratch
    directories. What every step that runs tests passes along instead of the same four or
    five arguments (the baseline, verification, grading)."""

    language: Language
    env: Environment
    sandbox: Sandbox
    timeout: float
    cache: Path = field(kw_only=True)

    def run(self, workspace: Path, select: Iterable[str] | None = None, *,
            first_failure: bool = False, watch_state: bool = False) -> TestRun:
        return self.language.run_tests(self.env, workspace, self.sandbox, timeout=self.timeout,
                                       select=select, first_failure=first_failure,
                                       watch_state=watch_state)

    def collect(self, workspace: Path) -> set[str]:
        return self.language.collect(self.env, workspace, self.sandbox, timeout=self.timeout)


class Language(abc.ABC):
    """One language's answers. Instances hold no state: one per process is enough."""

    name: ClassVar[str]
    #: The trivial solutions by name: the text each puts where the task's stub stands.
    null_bodies: ClassVar[Mapping[str, str]]

    @property
    @abc.abstractmethod
    def strategies(self) -> Mapping[str, type[Strategy]]:
        """The language's deletion strategies by registered name (a recipe's `strategies`)."""

    # -- detection -------------------------------------------------------------------------

    @abc.abstractmethod
    def detect(self, root: Path) -> bool:
        """Whether the tree at `root` holds this language's code with tests to run."""

    # -- environment -----------------------------------------------------------------------

    @abc.abstractmethod
    def prepare(self, spec: SourceSpec, snapshot: Snapshot, cache: Path,
                log: Callable[[str], None]) -> Prepared:
        """Build (or take from the cache) the environment the snapshot's tests run in."""

    def versioned_by_git(self, root: Path) -> bool:
        """Whether the build of the tree at `root` reads its version from git and has nothing
        to fall back on: then a git source describes the commit by its tags, which the
        snapshot (no `.git`) would otherwise lose. No by default."""
        return False

    @abc.abstractmethod
    def environment_record(self, env: Environment) -> dict[str, Any]:
        """The task record's `environment`: enough to rebuild it on another machine."""

    @abc.abstractmethod
    def environment_from_record(self, record: Mapping[str, Any], snapshot: Snapshot,
                                cache: Path) -> Environment:
        """The environment a record names, rebuilt (or found in the cache) for `snapshot`."""

    # -- tests -----------------------------------------------------------------------------

    @abc.abstractmethod
    def run_tests(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                  timeout: float, select: Iterable[str] | None = None,
                  first_failure: bool = False, watch_state: bool = False) -> TestRun:
        """Run the suite, or only the test ids in `select`, in `workspace`; results come from
        the runner's machine-readable report. A selected id that did not report failed.
        `first_failure`: the caller only needs to know whether every test passes, so a runner
        that can stop at the first test that does not pass may (the rest then did not pass).
        `watch_state`: report in `TestRun.state_left` the module-level state each test left
        changed, where the language can (Python; the others report none: a task whose
        failing test leaves state for later tests is then labelled on its covering tests)."""

    @abc.abstractmethod
    def collect(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                timeout: float) -> set[str]:
        """The test ids that collect (load) in `workspace`, plus `<...>` markers for files
        that fail to load: what a deletion that breaks module loading changes."""

    def warm_up(self, env: Environment, sandbox: Sandbox, cache: Path, runs: int = 1) -> None:
        """Start, in the background, what the first `runs` verification runs at once of
        `env` in `cache`'s scratch place would each start first (Python: a warm process,
        `testing/zygote.py`), so that it is ready when they come; the caller meanwhile does
        other work (finding the candidates). Only a start moves earlier: what any run does
        is unchanged. Nothing by default."""
        return None

    @abc.abstractmethod
    def baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float) -> Baseline:
        """The snapshot's suite, run repeatedly with per-test coverage (cached in
        `runner.cache`); `runner.timeout` bounds one whole-suite run, `test_timeout` one test."""

    @abc.abstractmethod
    def cached_baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                        test_timeout: float) -> Baseline | None:
        """The baseline `baseline` would return, when the cache holds it."""

    @abc.abstractmethod
    def keep_baseline(self, cache: Path, baseline: Baseline) -> None:
        """Cache a baseline another machine ran."""

    # -- deletion --------------------------------------------------------------------------

    @abc.abstractmethod
    def project(self, snapshot: Snapshot, env: Environment) -> Project:
        """The snapshot's source files (tests excluded), parsed for the strategies."""

    def strategy(self, name: str) -> Strategy | None:
        """The strategy registered under `name`, or None when this language has none."""
        cls = self.strategies.get(name)
        return cls() if cls else None

    @abc.abstractmethod
    def with_null_body(self, deletion_patch: str, body: str) -> str:
        """A record's deletion with the trivial solution `body` (a key of `null_bodies`) where
        the deletion put its stubs."""

    # -- verification ----------------------------------------------------------------------

    def screen(self, request: ScreenRequest) -> dict[str, Screened]:
        """A fast path's verdicts by candidate key; a language without one screens nothing
        and every candidate runs the whole protocol in fresh processes."""
        return {c.key: NOT_SCREENED for c in request.candidates}

    def behaviour_key(self, workspace: Path, paths: Collection[str]) -> str | None:
        """A key of what the files `paths` of `workspace` do when run: two trivial solutions
        of one deletion whose keys are equal pass and fail the same tests, so one run scores
        both (`verify.gates.score_null_solutions`). None, by default: unknown, each runs."""
        return None

    def screen_trivial(self, record: TaskRecord, snapshot_root: Path,
                       runner: Runner) -> dict[str, dict[str, int]]:
        """Scores (`{"passed": n, "of": m}`, each run stopping at its first failure) of trivial
        bodies on the record's FAIL_TO_PASS tests that the language's fast path gives, by
        body, where it can model the record's deletion; re-verification runs the others
        fresh. Rejected("timeout") where one hangs. Nothing by default."""
        return {}

    def set_up_workspace(self, workspace: Path, snapshot: Snapshot, changed: Collection[str],
                         runner: Runner, tests: Collection[str] | None = None) -> None:
        """Make a materialized task workspace ready for verification runs (no agent sees it;
        `changed`: the files the deletion changed; `tests`: the ids of every test its runs
        will run, where known, so that only what they need is readied): nothing by
        default."""
        return None

    # -- files and grading -----------------------------------------------------------------

    @abc.abstractmethod
    def is_test_file(self, rel: str) -> bool:
        """Whether the path (relative, posix) is a test file or test helper."""

    @abc.abstractmethod
    def is_protected(self, rel: str) -> bool:
        """Whether the grader puts this file back as the snapshot has it: tests, their data
        and helpers, and the test runner's configuration."""

    @abc.abstractmethod
    def grade_run(self, record: TaskRecord, solution: Path, snapshot_root: Path,
                  runner: Runner, *, checks: bool) -> GradedRun:
        """Run the record's tests on a clean copy of `solution` (left untouched) and report
        what the test process did; `checks`: canaries and the runner's integrity. The copy is
        made under `runner.cache`; `runner.timeout` bounds the run."""


def files_key(workspace: Path, paths: Collection[str],
              what_it_does: Callable[[str, bytes], bytes | None]) -> str | None:
    """A digest of `paths` (relative POSIX paths in `workspace`), each by its name and
    `what_it_does(path, bytes)` (a missing file by a marker of its own): a language's
    `behaviour_key`. None where `what_it_does` gives None for a file (it cannot tell)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        file = workspace / path
        data = what_it_does(path, file.read_bytes()) if file.is_file() else b"\0absent"
        if data is None:
            return None
        digest.update(f"{path}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def null_rejection(null_solutions: Mapping[str, Mapping[str, int]],
                   bodies: Mapping[str, str]) -> Rejected | None:
    """The trivial-solution rejection, if a trivial body (`bodies`: its text by name) passes
    every FAIL_TO_PASS test."""
    for body, counts in null_solutions.items():
        if counts["of"] and counts["passed"] == counts["of"]:
            return Rejected("trivial-solution",
                            f"a `{bodies[body]}` body passes every FAIL_TO_PASS test")
    return None


def unknown_language(name: str, known: Iterable[str]) -> UserError:
    return UserError(f"unknown language {name!r}; known: {', '.join(sorted(known))}")

def import_errors_line(errors: dict[str, str], shown: int = 3) -> str:
    """`2 test files fail to import: tests.test_a (ModuleNotFoundError: ...), ...`."""
    items = [f"{name} ({error})" for name, error in sorted(errors.items())]
    more = f" (+{len(items) - shown} more)" if len(items) > shown else ""
    return (f"{len(items)} test file{'s' if len(items) != 1 else ''} fail"
            f"{'s' if len(items) == 1 else ''} to import: {', '.join(items[:shown])}{more}")

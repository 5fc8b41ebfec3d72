"""The immutable records every stage shares. Stages talk only through these."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, get_type_hints

from taskforge.errors import UserError

SourceKind = Literal["path", "git", "pypi", "npm", "debian"]
Outcome = Literal["passed", "failed", "error", "skipped"]


@dataclass(frozen=True)
class SourceSpec:
    """One entry of a recipe's `sources`: where the code comes from and per-source overrides."""

    kind: SourceKind
    location: str
    ref: str | None = None
    install: tuple[str, ...] | None = None
    test_command: str | None = None
    python: str | None = None
    # This source's cap on tasks, in place of the recipe's select.max_tasks_per_source (a
    # source whose tasks cost minutes each, beside sources whose tasks cost seconds).
    max_tasks: int | None = None
    # Where the recipe gave it ("recipe.yaml: sources[0].path"), for messages only.
    origin: str | None = field(default=None, compare=False)

    def describe(self) -> str:
        if self.kind in ("pypi", "npm", "debian"):
            return f"{self.kind}:{self.location}"
        if self.kind == "git" and self.ref:
            return f"{self.location}@{self.ref}"
        return self.location


@dataclass(frozen=True)
class Snapshot:
    """One source at one commit. `id` is the git tree hash of its files (content address)."""

    id: str
    name: str
    source: str
    commit: str
    root: Path
    license: str | None
    # A git source's `git describe --tags --long` of the commit (`v1.2.3-0-gabc1234`), None
    # without a tag or when not asked: a build that reads its version from git needs it, and
    # the snapshot has no .git (env/scm.py).
    describe: str | None = None


@dataclass(frozen=True)
class EnvSpec:
    """What an environment is built from; recorded in every task so it can be rebuilt elsewhere."""

    python: str  # the interpreter's version (JavaScript: the Node.js version)
    project_install: str | None  # extras spec for an editable install, e.g. ".[test]"; None: no build
    requirements: tuple[str, ...]  # extra requirement strings (test deps, tools)
    install: tuple[str, ...]  # recipe override: shell commands run inside the venv
    test_command: tuple[str, ...]  # argv of the test runner, before taskforge's own options
    decisions: tuple[str, ...] = ()  # human-readable notes on how this spec was detected
    # The version the repository's tags give a build that reads it from git (env/scm.py);
    # None: the build gets none, or 0.0.0 when it needs one.
    scm_version: str | None = None


@dataclass(frozen=True)
class Environment:
    key: str
    spec: EnvSpec
    venv: Path  # the environment's directory: a virtualenv (Python), the home of node_modules (JavaScript)
    pythonpath: tuple[str, ...]  # workspace-relative import roots
    frozen: tuple[str, ...]  # resolved package versions
    build_seconds: float
    # files the build wrote into the project's tree (workspace-relative), kept in outputs_dir
    outputs: tuple[str, ...] = ()
    outputs_dir: Path | None = None
    build_notes: tuple[str, ...] = ()  # what the build's outputs left out, and why


# a test whose leftover state could not be told, counted as left (pytest_plugin/
# taskforge_state.py writes the same mark)
STATE_UNKNOWN = "?"
# A test that failed only with garbage another test left (an unraisable exception: its
# outcome is the collector's timing; pytest_plugin/taskforge_state.py names it so)
GARBAGE_VICTIM = "gc:victim"


@dataclass(frozen=True)
class TestRun:
    """The results of one pytest invocation, read from its JUnit XML."""

    outcomes: dict[str, Outcome]
    exit_code: int
    wall_seconds: float
    pytest_seconds: float
    timed_out: bool = False
    log_tail: str = ""
    durations: dict[str, float] = field(default_factory=dict)  # seconds per test
    # test file (as pytest names it) -> the last error line, for files that failed to collect
    collection_errors: dict[str, str] = field(default_factory=dict)
    hung: str | None = None  # the test that ran past the per-test limit and ended the run
    # selected tests the run never reported on (counted as errors in `outcomes`): a file that
    # no longer loads (see `collection_errors`), an early exit, or a run that never started
    unreported: tuple[str, ...] = ()
    # runs that watched it (Python): per test, the module-level state it left changed
    # (`module:name`, ...; STATE_UNKNOWN where the watch could not tell), tests that left
    # none absent
    state_left: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def passed(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o == "passed"}

    def not_passed(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o != "passed"}


@dataclass(frozen=True)
class Baseline:
    """The snapshot's suite in its environment: what passes reliably and what runs which lines."""

    key: str
    tests: tuple[str, ...]
    stable: tuple[str, ...]
    flaky: tuple[str, ...]
    failing: tuple[str, ...]
    run_seconds: tuple[float, ...]
    durations: dict[str, float] = field(default_factory=dict)  # slowest seconds seen per test
    # path -> line -> indexes into `tests`; index -1 marks lines run outside any test (import time)
    coverage: dict[str, dict[int, tuple[int, ...]]] = field(repr=False, default_factory=dict)
    # path -> lines executed by Python subprocesses the tests started (also in `coverage`)
    subprocess_lines: dict[str, tuple[int, ...]] = field(repr=False, default_factory=dict)
    tracer: str = "coverage"  # what recorded `coverage`: coverage.py, or sysmon (3.12+)
    # test files that failed to import in the baseline, with the error: their tests are lost
    collection_errors: dict[str, str] = field(default_factory=dict)
    hung: tuple[str, ...] = ()  # tests that ran past the per-test limit: left out, like flaky
    # the run that measures each test alone (Python: the third map); 0 where there is none
    isolated_seconds: float = 0.0
    isolated_unmeasured: int = 0  # tests it could not measure (too slow alone, ended, cut off)
    # stable tests the grader did not pass on the unchanged code (verify/self_grade.py): left
    # out of `stable`, like flaky ones, since every task would require them
    ungradable: tuple[str, ...] = ()
    # module-level state (`module:name`, ...) the suite's own tests leave changed when they
    # pass (counters, objects built on first use); languages that do not watch: none
    state_left: tuple[str, ...] = ()

    def tests_covering(self, path: str, lines: range) -> tuple[set[str], bool]:
        """Tests that executed any of `lines` of `path`, and whether they also ran at import time."""
        by_line = self.coverage.get(path, {})
        tests: set[str] = set()
        import_time = False
        for line in lines:
            for idx in by_line.get(line, ()):
                if idx < 0:
                    import_time = True
                else:
                    tests.add(self.tests[idx])
        return tests, import_time

    def reached_by_subprocess(self, path: str, lines: range) -> bool:
        """Whether a subprocess some test started executed any of `lines` of `path`."""
        return not set(lines).isdisjoint(self.subprocess_lines.get(path, ()))


@dataclass(frozen=True)
class Candidate:
    """A deletable unit, found by a strategy, with the stable tests that executed it."""

    strategy: str
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    body_lines: int
    covering_tests: tuple[str, ...]
    import_time: bool = False
    # Code objects the fast path swaps for a stub: (path, first line incl. decorators, name).
    # Empty for deletions that are not function bodies; those skip the screen.
    targets: tuple[tuple[str, int, str], ...] = ()
    # Reached by a test through a Python subprocess, which a swap in memory cannot model.
    subprocess: bool = False
    symbols: int = 1  # definitions (or branches) the deletion takes away

    @property
    def key(self) -> str:
        return f"{self.strategy}:{self.path}::{self.symbol}"


@dataclass(frozen=True)
class DeletedSymbol:
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Deletion:
    """The result of applying a strategy: new file texts and what was removed."""

    strategy: str
    deleted: tuple[DeletedSymbol, ...]
    new_texts: dict[str, str]  # path -> text in the task state
    statement_facts: dict[str, Any]  # signature, docstring, module: what a statement may say


@dataclass(frozen=True, order=True)
class Finding:
    """One thing a solution tried, as the grader reports it in `GradeResult.tampered`.
    `disqualifies`: the grader cannot undo it (it acts inside the test process), so the reward
    is 0 whatever the tests say. Files the grader restores or removes do not disqualify: the
    tests run without them."""

    message: str
    disqualifies: bool = False


@dataclass(frozen=True)
class GradeResult:
    reward: float
    resolved: bool
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    errors: tuple[str, ...]
    tampered: tuple[str, ...]
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- the task record ------------------------------------------------------------------------
# One JSON object per line of a shard, and `Task.record` for a loader: a mapping (what
# SWE-bench users and `datasets` expect), typed here once for every writer and reader. The
# sections a language shapes (`environment`) or that grow with the pipeline (`difficulty`,
# `sanitizer`) stay open mappings; `validate_record` checks every field's presence and type
# where records come in from disk.


class DeletedEntry(TypedDict):
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int


class GeneratorEntry(TypedDict):
    version: str
    recipe_sha256: str
    seed: int


class _SinceTheStateWatch(TypedDict, total=False):
    """Written by `generate` since the state watch; records made before it lack them and load
    all the same (`taskforge verify` then counts every leftover: verify/reverify.py)."""

    leaves_state: list[str]  # what a FAIL_TO_PASS test left, for which every stable test ran
    state_usual: list[str]  # what they left that the suite's passing tests leave too


class Verification(_SinceTheStateWatch):
    mode: str
    repeats: int
    tests_run: list[str]
    screen: dict[str, Any]
    collection_checked: bool
    collateral: dict[str, Any]
    null_solutions: dict[str, dict[str, int]]
    audit: dict[str, Any]
    runs: list[dict[str, Any]]
    scan_seconds: float


class TaskRecord(TypedDict):
    instance_id: str
    repo: str
    source: str
    base_commit: str
    snapshot: str
    license: str | None
    language: str
    strategy: str
    deleted: list[DeletedEntry]
    deletion_patch: str
    patch: str
    test_patch: str
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    problem_statement: str
    environment: dict[str, Any]
    difficulty: dict[str, Any]
    verification: Verification
    sanitizer: dict[str, Any]
    created_at: str
    generator: GeneratorEntry


def record_snapshot(record: TaskRecord, root: Path) -> Snapshot:
    """The snapshot `record` was made from, its files at `root`."""
    return Snapshot(id=record["snapshot"], name=record["repo"], source=record["source"],
                    commit=record["base_commit"], root=root, license=record["license"])


def _checks(typed: type) -> dict[str, tuple[type, ...]]:
    """The runtime types each field of a TypedDict may hold (JSON's: str, int, float, bool,
    list, dict, None)."""
    out: dict[str, tuple[type, ...]] = {}
    for name, hint in get_type_hints(typed).items():
        args = getattr(hint, "__args__", None)
        options = args if hint.__class__.__name__ == "UnionType" else (hint,)
        kinds: list[type] = []
        for option in options:
            origin = getattr(option, "__origin__", option)
            if option is type(None):
                kinds.append(type(None))
            elif hasattr(origin, "__annotations__") or (isinstance(origin, type)
                                                         and issubclass(origin, dict)):
                kinds.append(dict)
            elif origin is float:
                kinds += [float, int]
            else:
                kinds.append(origin)
        out[name] = tuple(kinds)
    return out


def validate_record(record: Any, where: str) -> TaskRecord:
    """`record` as a TaskRecord, or a UserError that names the first field missing or of the
    wrong type, and `where` it was read."""
    if not isinstance(record, dict):
        raise UserError(f"{where}: not a task record (a JSON object)")
    for section, typed in (("", TaskRecord), ("verification.", Verification),
                           ("generator.", GeneratorEntry)):
        data = record if not section else record[section[:-1]]
        for name, kinds in _checks(typed).items():
            if name not in data:
                if name in typed.__optional_keys__:  # a total=False key an older record lacks
                    continue
                raise UserError(f"{where}: task record without `{section}{name}`")
            value = data[name]
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise UserError(f"{where}: task record field `{section}{name}` is "
                                f"{type(value).__name__}, expected "
                                f"{' or '.join(k.__name__ for k in kinds)}")
    return record  # type: ignore[return-value]

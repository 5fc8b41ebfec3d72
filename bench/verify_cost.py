"""Targeted vs whole-suite verification, and the physical limit, on several real packages.

For each pinned PyPI sdist of `--packages` (default: six of recipes/pypi-corpus.yaml, 465 to
2,459 tests, pytest and unittest style, fast tests and slow ones; see DEFAULT_PACKAGES), the
first `--candidates` of the seeded order of `--strategies` (mixed as `generate` mixes them),
import-time candidates included (no screen: the whole protocol in fresh processes, which is
part of the cost). One package after another, one worker, in one run:

- targeted: taskforge's pipeline as `generate` runs it (the forking screen over the covering
  tests, then `make_task`: the confirmation's fresh runs on the materialized workspace, the
  leak scan, the record); as there, the screen's warm process (`Language.warm_up`) starts
  while the candidates are found, which is not timed;
- whole-suite: the peers' method, one fresh process running every test per candidate in the
  task state, `repeats` times (materialization included).

Per package (s/candidate: median and mean over the candidates):
- targeted s/candidate: the candidate's share of the screen's wall clock (a screened candidate
  gets its jobs' seconds plus an equal part of the rest of the server's session: start-up,
  collection, forking; the others get nothing) plus `make_task`'s wall clock;
- of which verification: the screen share plus every fresh test process `make_task` started
  (task and reference runs, trivial solutions, collect-only), timed around the runner;
- whole-suite s/candidate; ratios whole/targeted and whole/verification, of the medians and
  of the means;
- label agreement: the targeted FAIL_TO_PASS (the record's, else the screen's) and PASS_TO_PASS
  (the other stable tests) identical to the whole suite's (failing, resp. passing, in every
  run). A candidate rejected before any label was known (not screened and rejected by the
  collection check, say, or a hung task state) or rejected because its labels were not labels
  (`flaky-in-task-state`: outcomes that changed from run to run, or a test that failed only with
  another's garbage) is counted apart ("n/a"), not as agreeing;
- orchestration overhead: targeted wall / the seconds pytest reports for the same runs (a
  session's time, collection included, for fresh runs and the screen server alike);
- physical limit per candidate: `repeats` x the per-test durations summed over its covering
  tests (the task state) + the durations of its FAIL_TO_PASS (the reference, once): running
  exactly those tests and nothing else, no start-up, no collection. An import-time
  candidate's covering tests are every stable test. FAIL_TO_PASS: the whole suite's (the truth;
  the targeted one where labels agree). Two versions: from the baseline's durations (the
  slowest seen over its runs, which record the test map with a tracer on: coverage.py before
  Python 3.12, several times slower per test, so this limit can exceed the whole suite itself),
  and "untraced", from durations measured without a tracer: the covering tests' in this
  candidate's whole-suite runs (task state, `repeats` runs) and the FAIL_TO_PASS' in one run of
  the original tree (one more suite per package, untimed). Printed: the limit's median and
  mean, whole/limit (the best any targeted method could reach) and targeted/limit (the
  distance left), ratios of medians and of means; the table gives the untraced ones. A
  test's durations leave out what pytest does around it (hooks, reports, capture, logging,
  warnings, the JUnit report: about a millisecond a test on humanize, several times the
  tests' own seconds), which a targeted method pays for each test it runs as the whole suite
  does; so a third limit, "at pytest's pace", adds that to the untraced one for each test
  run, measured per package as the original run's session less a collect-only run's (its
  collection) less its tests' durations, over its tests. whole/paced limit is what a method
  running the candidate's protocol through pytest, with no start-up or collection at all,
  could reach;
- re-verification: the first `--reverify` tasks the targeted pass emitted, each re-verified as
  `taskforge verify` does (`Task.reverify`: the environment rebuilt from the record, the
  snapshot from the cache, `reverify()` with its runner; here the runner is timed), then as
  `taskforge verify --full-suite` does: seconds a task (median, mean), the ratio
  full/targeted (of medians, of means), how many tasks each found a problem with (must be 0),
  and where each mode's seconds went (labels runs, trivial-solution runs, collect-only, rest);
- where targeted time goes, summed over the candidates: the screen shares; the confirmation's
  fresh runs (the records' `verification.runs`); the trivial solutions' fresh runs (a run in a
  `null-` scratch workspace: tasks the screen did not model) and collect-only runs (import-time
  tasks); the leak scan (`verification.scan_seconds`); the rest of `make_task` for the tasks
  (materialization, bytecode, apply, statement, record); and `make_task` of the candidates it
  rejected, its fresh processes apart;
- the fresh-run floor: the confirmation's one fresh run of each screened task (min, median):
  what a method that proves each candidate in a process of its own cannot go below however few
  tests it runs (the interpreter is forked warm, but the project is imported and its covering
  test files collected anew); whole/floor is the best such a method's ratio can be;
- the task floor: the cheapest screened task's whole targeted cost (its screen share, the
  confirmation run, two materializations, the leak scan, the record): what every task pays
  however few and fast its tests, so whole/floor bounds the median ratio from above.

With --audit, every task the targeted pass emitted is then built again in audit mode
(`verify.full_suite: true`: the whole suite in both states, compared with the targeted labels),
outside the timed figures, and the bench prints how many agree.

Last, a Markdown table, one row per package, with the machine (cores, Python), the load
average, the date and the command: what README's table is pasted from. Progress: stderr.

    python bench/verify_cost.py [--packages click==8.5.1 ...] [--candidates 40] [--repeats 2]
        [--strategies stub-function] [--reverify 5] [--sandbox none] [--cache DIR] [--audit]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from taskforge.cache import cache_root
from taskforge.errors import Rejected, UserError
from taskforge.executors import LocalExecutor
from taskforge.generate import order_candidates
from taskforge.ingest import IngestedSource, ingest
from taskforge.languages import language_of
from taskforge.languages.base import Runner, Screened
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.strategy import SelectOptions, Strategy, TaskOptions
from taskforge.materialize import materialize_record
from taskforge.model import Candidate, SourceSpec, TestRun
from taskforge.patches import diff_texts
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.tasks import Task
from taskforge.verify.confirm import Verifier, run_timeout
from taskforge.verify.reverify import reverify
from taskforge.workspace import scratch_copy, scratch_dir

# A spread, not the fastest (docs/corpus.md): click 2,459 tests (pytest, CliRunner, a ~6 s
# suite), attrs 1,386 (pytest with hypothesis: slow tests), humanize 908 (parametrized, fast),
# sqlparse 540, boltons 519 (unittest-style files), cachetools 465 (unittest.TestCase, threads).
# About an hour on 2 quiet cores without --audit (which adds two whole suites a task).
DEFAULT_PACKAGES = ("click==8.5.1", "attrs==26.1.0", "humanize==4.17.0", "sqlparse==0.6.1",
                    "boltons==26.2.0", "cachetools==8.0.1")
REVERIFY_TIMEOUT = 300.0  # `taskforge verify`'s default --timeout


def log(message: str) -> None:
    print(f"# {message}", file=sys.stderr, flush=True)


Note = tuple[str, float, float]  # (kind, wall seconds, pytest seconds) of one fresh process


@dataclasses.dataclass(frozen=True)
class TimedRunner(Runner):
    """The runner, noting each fresh process it starts. Kinds: "collect" (collect-only),
    "trivial" (a trivial solution's run: its workspace is in a `null-` scratch directory, as
    `make_task` and `reverify` make it), "run" (any other run: the labels')."""

    notes: list[Note] = dataclasses.field(default_factory=list)

    def run(self, workspace: Path, select: Iterable[str] | None = None, *,
            first_failure: bool = False, watch_state: bool = False) -> TestRun:
        started = time.monotonic()
        run = super().run(workspace, select, first_failure=first_failure,
                          watch_state=watch_state)
        kind = "trivial" if "null-" in workspace.parent.name else "run"
        self.notes.append((kind, time.monotonic() - started, run.pytest_seconds))
        return run

    def collect(self, workspace: Path) -> set[str]:
        started = time.monotonic()
        collected = super().collect(workspace)
        self.notes.append(("collect", time.monotonic() - started, 0.0))
        return collected


@dataclasses.dataclass(frozen=True)
class TimedVerifier(Verifier):
    """`Verifier` whose every fresh test process goes through a `TimedRunner` writing `notes`."""

    notes: list[Note] = dataclasses.field(default_factory=list)

    @property
    def runner(self) -> Runner:
        return TimedRunner(self.source.language, self.source.env, self.sandbox, self.timeout,
                           self.notes, cache=self.cache)


@dataclasses.dataclass
class Targeted:
    """One candidate's cost in the targeted pipeline."""

    status: str = "screen"
    screen: float = 0.0  # its share of the screen's wall clock
    make_task: float = 0.0  # make_task's wall clock (0: rejected by the screen)
    label_runs: float = 0.0  # the record's verification.runs seconds (tasks)
    fresh: float = 0.0  # every fresh process make_task started, timed around the runner
    trivial: float = 0.0  # of which the trivial solutions' runs
    collect: float = 0.0  # of which collect-only runs
    scan: float = 0.0  # the record's verification.scan_seconds (tasks)
    pytest: float = 0.0  # what pytest reported for its screen share and fresh runs
    fail_to_pass: set[str] | None = None  # None: no label known
    record: dict[str, Any] | None = None
    verdict: Screened | None = None  # the screen's

    @property
    def wall(self) -> float:
        return self.screen + self.make_task

    @property
    def verification(self) -> float:
        return self.screen + self.fresh


@dataclasses.dataclass
class Whole:
    """One candidate's cost and labels with the whole suite, `repeats` fresh runs."""

    wall: float
    pytest: float
    fail_to_pass: set[str]
    pass_to_pass: set[str]
    durations: list[dict[str, float]]  # per run: test -> seconds (no tracer)


def seconds_by_kind(notes: Iterable[Note]) -> Counter[str]:
    seconds: Counter[str] = Counter(dict.fromkeys(("run", "trivial", "collect"), 0.0))
    for kind, wall, _pytest in notes:
        seconds[kind] += wall
    return seconds


def med_mean(values: Sequence[float]) -> tuple[float, float]:
    return (statistics.median(values), statistics.mean(values)) if values else (0.0, 0.0)


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("inf")


def candidate_strategy(source: IngestedSource, candidate: Candidate) -> Strategy:
    strategy = source.language.strategy(candidate.strategy)
    assert strategy is not None  # its candidates came from this language
    return strategy


def choose_candidates(source: IngestedSource, strategies: list[str], count: int
                      ) -> tuple[list[Candidate], int]:
    """The first `count` of the seeded order (seed 0) of every strategy's candidates, import-time
    ones included, and how many were found."""
    found: list[Candidate] = []
    for name in strategies:
        strategy = source.language.strategy(name)
        if strategy is None:
            raise UserError(f"{source.snapshot.name}: no strategy {name!r} for "
                            f"{source.language.name}")
        found += strategy.candidates(source.project, source.baseline, SelectOptions())
    ordered = order_candidates(found, dict.fromkeys(strategies, 1.0), 0, source.snapshot.id)
    return ordered[:count], len(found)


def screenable(candidate: Candidate) -> bool:
    """What the screen takes (as `screen_candidates` decides): the others cost it nothing."""
    return bool(candidate.targets) and not candidate.import_time and not candidate.subprocess


def targeted_pass(source: IngestedSource, verifier: TimedVerifier, chosen: list[Candidate]
                  ) -> dict[str, Targeted]:
    """The screen for all, then `make_task` for every candidate it did not reject."""
    started = time.monotonic()
    verdicts = verifier.screen(chosen, LocalExecutor(1))
    screen_wall = time.monotonic() - started
    screened = [c for c in chosen if screenable(c)]
    shared = (screen_wall - sum(verdicts[c.key].seconds for c in screened)) / max(1, len(screened))
    log(f"{source.snapshot.name}: screen {screen_wall:.1f} s for {len(screened)} of "
        f"{len(chosen)} candidates")
    costs: dict[str, Targeted] = {}
    for n, c in enumerate(chosen, 1):
        v = verdicts[c.key]
        cost = Targeted(screen=(shared + v.seconds) if screenable(c) else 0.0,
                        pytest=v.pytest_seconds, verdict=v,
                        fail_to_pass=set(v.fail_to_pass) if v.screened else None)
        if v.rejection:
            cost.status = v.rejection.reason
        else:
            verifier.notes.clear()
            t0 = time.monotonic()
            try:
                record = verifier.make_task(candidate_strategy(source, c), c, v)
                cost.status, cost.record = "task", record
                cost.fail_to_pass = set(record["FAIL_TO_PASS"])
                cost.label_runs = sum(r["seconds"] for r in record["verification"]["runs"])
                cost.scan = record["verification"]["scan_seconds"]
            except Rejected as why:
                cost.status = why.reason
            cost.make_task = time.monotonic() - t0
            seconds = seconds_by_kind(verifier.notes)
            cost.fresh = sum(seconds.values())
            cost.trivial, cost.collect = seconds["trivial"], seconds["collect"]
            cost.pytest += sum(p for _kind, _s, p in verifier.notes)
        if cost.status == "no-failing-test":
            cost.fail_to_pass = set()
        elif cost.status in ("timeout", "flaky-in-task-state"):
            # a hung run's outcomes are no labels, nor are outcomes that changed from run to
            # run (or a test failing only with another's garbage, `garbage_victims`)
            cost.fail_to_pass = None
        costs[c.key] = cost
        log(f"{source.snapshot.name} targeted [{n}/{len(chosen)}] {c.symbol}"
            f"{' (import time)' if c.import_time else ''}: {cost.status} {cost.wall:.2f} s "
            f"(screen {cost.screen:.2f}, fresh runs {cost.fresh:.2f}, scan {cost.scan:.2f}, "
            f"rest {cost.make_task - cost.fresh:.2f}; pytest {cost.pytest:.2f}; "
            f"{len(c.covering_tests)} covering, {len(cost.fail_to_pass or ())} failing)"
            + (f"; every stable test: a failing test left {', '.join(widened(cost)[:3])}"
               if widened(cost) else ""))
    return costs


def whole_suite_pass(source: IngestedSource, chosen: list[Candidate], box: Sandbox, cache: Path,
                     repeats: int, timeout: float) -> dict[str, Whole]:
    """The peers' way: a fresh process running every test, `repeats` times per candidate."""
    stable = set(source.baseline.stable)
    options = TaskOptions()
    results: dict[str, Whole] = {}
    for n, c in enumerate(chosen, 1):
        deletion = candidate_strategy(source, c).apply(source.project, c, options)
        texts = {p: (source.project.text(p), t) for p, t in deletion.new_texts.items()}
        t0 = time.monotonic()
        runs = []
        with scratch_dir(cache, prefix="bench-") as scratch:
            workspace, _ = materialize_record({"deletion_patch": diff_texts(texts)},
                                              source.snapshot.root, scratch / "workspace")
            for _ in range(repeats):
                runs.append(run_tests(source.env, workspace, box, timeout=timeout))
        results[c.key] = Whole(
            wall=time.monotonic() - t0, pytest=sum(r.pytest_seconds for r in runs),
            fail_to_pass={t for t in stable if all(r.outcomes.get(t) != "passed" for r in runs)},
            pass_to_pass={t for t in stable if all(r.outcomes.get(t) == "passed" for r in runs)},
            durations=[r.durations for r in runs])
        log(f"{source.snapshot.name} whole suite [{n}/{len(chosen)}] {c.symbol}: "
            f"{results[c.key].wall:.2f} s")
    return results


def widened(cost: Targeted) -> list[str]:
    """What a failing test of this task left behind, for which it was labelled on every
    stable test (`verification.leaves_state`); empty for the rest."""
    return list((cost.record or {}).get("verification", {}).get("leaves_state") or ())


def original_run(source: IngestedSource, box: Sandbox, cache: Path, timeout: float) -> TestRun:
    """One run of the untouched tree, no tracer: the reference state's per-test durations."""
    with scratch_copy(source.snapshot.root, cache, prefix="bench-original-") as workspace:
        return run_tests(source.env, workspace, box, timeout=timeout)


def collect_only_run(source: IngestedSource, box: Sandbox, cache: Path, timeout: float
                     ) -> TestRun:
    """One collect-only run of the untouched tree: what a run spends before any test."""
    with scratch_copy(source.snapshot.root, cache, prefix="bench-collect-") as workspace:
        return run_tests(source.env, workspace, box, timeout=timeout,
                         extra_args=["--collect-only"])


def pytest_pace(original: TestRun, collect: TestRun) -> float:
    """Seconds pytest spends on each test outside the test's own setup, call and teardown
    (hooks, reports, capture, logging, warnings, the JUnit report): the original tree's
    session less its collection (a collect-only run) less the tests' durations, per test.
    Every method that runs a test through pytest pays it, a targeted one too."""
    own = original.pytest_seconds - collect.pytest_seconds - sum(original.durations.values())
    return max(0.0, own / max(1, len(original.durations)))


def paced_limit(untraced: float, covering: Iterable[str], fail_to_pass: Iterable[str],
                repeats: int, pace: float) -> float:
    """The untraced limit plus pytest's `pace` for each test it runs (the covering tests
    `repeats` times, the FAIL_TO_PASS once): the same tests run through pytest, still with no
    start-up, collection or anything else."""
    return untraced + pace * (repeats * len(set(covering)) + len(set(fail_to_pass)))


def physical_limit(covering: Iterable[str], fail_to_pass: Iterable[str],
                   task_runs: Sequence[dict[str, float]], reference: dict[str, float]) -> float:
    """The tests themselves and nothing else: the covering tests once per task-state run in
    `task_runs` (durations by test), the FAIL_TO_PASS once with the reference."""
    covering = tuple(covering)
    return (sum(run.get(t, 0.0) for run in task_runs for t in covering)
            + sum(reference.get(t, 0.0) for t in fail_to_pass))


def agreement(source: IngestedSource, chosen: list[Candidate], targeted: dict[str, Targeted],
              whole: dict[str, Whole]) -> tuple[int, int]:
    """(agreeing, with labels known): targeted and whole-suite labels identical."""
    stable = set(source.baseline.stable)
    agree = known = 0
    for c in chosen:
        t, w = targeted[c.key], whole[c.key]
        if t.fail_to_pass is None:
            continue
        known += 1
        same = t.fail_to_pass == w.fail_to_pass and stable - t.fail_to_pass == w.pass_to_pass
        agree += same
        if not same:
            # neither label in the whole suite: not passing in every run, nor failing in every one
            neither = stable - w.fail_to_pass - w.pass_to_pass
            log(f"disagree {c.symbol}: targeted-only {sorted(t.fail_to_pass - w.fail_to_pass)[:3]}"
                f" whole-only {sorted(w.fail_to_pass - t.fail_to_pass)[:3]}"
                f" unstable in the whole suite {sorted(neither)[:3]}")
    return agree, known


@dataclasses.dataclass
class Reverified:
    """One task re-verified, by mode (False: `taskforge verify`, True: `--full-suite`)."""

    seconds: dict[bool, float] = dataclasses.field(default_factory=dict)
    problems: dict[bool, list[str]] = dataclasses.field(default_factory=dict)
    fresh: dict[bool, Counter[str]] = dataclasses.field(default_factory=dict)  # kind -> seconds


def reverify_pass(records: list[dict[str, Any]], box: Sandbox, cache: Path) -> list[Reverified]:
    """Each record re-verified as `taskforge verify` does it (`Task.reverify`: the environment
    rebuilt from the record, the snapshot root, a runner; here the runner is timed), then as
    `--full-suite` does."""
    results = []
    with scratch_dir(cache, prefix="bench-tasks-") as directory:
        # The snapshot is found in the cache, as on the machine that generated the tasks.
        for n, record in enumerate(records, 1):
            result = Reverified()
            for full_suite in (False, True):
                notes: list[Note] = []
                t0 = time.monotonic()
                task = Task(record=record, directory=directory, cache=cache)
                runner = TimedRunner(language_of(record), task.environment(), box,
                                     REVERIFY_TIMEOUT, notes, cache=cache)
                result.problems[full_suite] = reverify(record, task.snapshot_root(), runner,
                                                       full_suite=full_suite)
                result.seconds[full_suite] = time.monotonic() - t0
                result.fresh[full_suite] = seconds_by_kind(notes)
                for problem in result.problems[full_suite]:
                    log(f"verify{' --full-suite' if full_suite else ''} "
                        f"{record['instance_id']}: {problem}")
            results.append(result)
            log(f"reverify [{n}/{len(records)}] {record['instance_id']}: "
                f"{result.seconds[False]:.2f} s, full suite {result.seconds[True]:.2f} s")
    return results


def reverify_breakdown(reverified: list[Reverified], full_suite: bool) -> str:
    """Where one mode's seconds went, summed over the tasks."""
    total = sum(r.seconds[full_suite] for r in reverified)
    fresh = sum((r.fresh[full_suite] for r in reverified), Counter())
    rest = total - sum(fresh.values())
    return (f"labels runs {fresh['run']:.1f}, trivial-solution runs {fresh['trivial']:.1f}, "
            f"collect-only {fresh['collect']:.1f}, rest {rest:.1f} (environment, "
            f"materializations, leak scan) of {total:.1f} s")


def audit_pass(source: IngestedSource, verifier: TimedVerifier, chosen: list[Candidate],
               targeted: dict[str, Targeted]) -> tuple[int, int]:
    """(agreeing, tasks): every emitted task built again in audit mode."""
    tasks = [c for c in chosen if targeted[c.key].status == "task"]
    audit = dataclasses.replace(verifier, full_suite=True)
    agreeing = 0
    for c in tasks:
        verdict = targeted[c.key].verdict
        assert verdict is not None
        try:
            record = audit.make_task(candidate_strategy(source, c), c, verdict)
            agreeing += record["verification"]["audit"]["disagreements"] == 0
        except Rejected as why:
            log(f"audit {c.symbol}: {why.reason}: {why.detail}")
    return agreeing, len(tasks)


def statuses_line(targeted: dict[str, Targeted]) -> str:
    counts = Counter(t.status for t in targeted.values())
    return ", ".join(f"{status} {n}" for status, n in counts.most_common())


def breakdown(targeted: dict[str, Targeted]) -> list[tuple[str, float, str]]:
    """Where the targeted seconds went, summed over the candidates: (what, seconds, note)."""
    tasks = [t for t in targeted.values() if t.status == "task"]
    rejected = [t for t in targeted.values() if t.status != "task" and t.make_task > 0]
    labels = sum(t.label_runs for t in tasks)
    trivial = sum(t.trivial for t in tasks)
    collect = sum(t.collect for t in tasks)
    rest = sum(t.make_task - t.label_runs - t.trivial - t.collect - t.scan for t in tasks)
    return [
        ("screen (shares)", sum(t.screen for t in targeted.values()), "the forking server"),
        ("confirmation fresh runs", labels, "tasks' verification.runs"),
        ("trivial-solution runs", trivial, "tasks the screen did not model"),
        ("collect-only runs", collect, "tasks at import time"),
        ("leak scan", sum(t.scan for t in tasks), "tasks' verification.scan_seconds"),
        ("rest of make_task", rest, "tasks: materialize, bytecode, apply, statement, record"),
        ("make_task, rejected", sum(t.make_task for t in rejected),
         f"{len(rejected)} candidates, of which fresh processes "
         f"{sum(t.fresh for t in rejected):.1f} s"),
    ]


def measure_package(package: str, args: argparse.Namespace, cache: Path, box: Sandbox
                    ) -> dict[str, Any]:
    """Every figure of one package, printed; the final table's row returned."""
    source = ingest(SourceSpec(kind="pypi", location=package), cache=cache, base_dir=Path.cwd(),
                    sandbox=box, repeats=args.repeats, timeout=900, log=log)
    # As `generate` does: the screen's warm process starts while the candidates are found.
    source.language.warm_up(source.env, box, cache)
    chosen, found = choose_candidates(source, args.strategies, args.candidates)
    if not chosen:
        raise UserError(f"{package}: no candidate")
    stable = source.baseline.stable
    timeout = run_timeout(source, 900)
    log(f"{package}: {len(source.baseline.tests)} tests, {len(stable)} stable, {found} "
        f"candidates, measuring {len(chosen)} ({sum(c.import_time for c in chosen)} at import time)")
    verifier = TimedVerifier(source, box, cache, timeout, args.repeats, TaskOptions(),
                             recipe_sha256="bench")
    targeted = targeted_pass(source, verifier, chosen)
    whole = whole_suite_pass(source, chosen, box, cache, args.repeats, timeout)
    log(f"{package}: one run of the original tree (reference durations, no tracer)")
    original = original_run(source, box, cache, timeout)
    pace = pytest_pace(original, collect_only_run(source, box, cache, timeout))
    baseline = source.baseline.durations
    limit = [physical_limit(c.covering_tests, whole[c.key].fail_to_pass,
                            [baseline] * args.repeats, baseline) for c in chosen]
    untraced = [physical_limit(c.covering_tests, whole[c.key].fail_to_pass,
                               whole[c.key].durations, original.durations) for c in chosen]
    paced = [paced_limit(u, c.covering_tests, whole[c.key].fail_to_pass, args.repeats, pace)
             for u, c in zip(untraced, chosen, strict=True)]
    records = [t.record for t in targeted.values() if t.record is not None]
    reverified = reverify_pass(records[:args.reverify], box, cache) if args.reverify else []
    audit = audit_pass(source, verifier, chosen, targeted) if args.audit else None

    t_med, t_mean = med_mean([t.wall for t in targeted.values()])
    v_med, v_mean = med_mean([t.verification for t in targeted.values()])
    w_med, w_mean = med_mean([w.wall for w in whole.values()])
    l_med, l_mean = med_mean(limit)
    u_med, u_mean = med_mean(untraced)
    p_med, p_mean = med_mean(paced)
    overhead = ratio(sum(t.wall for t in targeted.values()),
                     sum(t.pytest for t in targeted.values()))
    # A candidate sent to every stable test (a failing test's leftovers) runs whole suites,
    # mostly the tests' own seconds: it flatters the figure, so it is shown without them too.
    covering = [t for t in targeted.values() if not widened(t)]
    widened_count = len(targeted) - len(covering)
    overhead_covering = ratio(sum(t.wall for t in covering), sum(t.pytest for t in covering))
    agree, known = agreement(source, chosen, targeted, whole)
    r_med, r_mean = med_mean([r.seconds[False] for r in reverified])
    f_med, f_mean = med_mean([r.seconds[True] for r in reverified])
    r_bad = sum(bool(r.problems[False]) for r in reverified)
    f_bad = sum(bool(r.problems[True]) for r in reverified)
    statuses = statuses_line(targeted)

    print(f"package                      {package}  ({len(source.baseline.tests)} tests, "
          f"{len(stable)} stable; Python {source.env.spec.python})")
    base = source.baseline
    print(f"baseline (once a package)    {sum(base.run_seconds):.1f} s for "
          f"{len(base.run_seconds)} runs in order, {base.isolated_seconds:.1f} s with each test "
          f"alone ({ratio(base.isolated_seconds, max(base.run_seconds)):.1f}x a run)")
    # (IngestedSource.seconds calls the snapshot's stage "ingest")
    stages = ", ".join(f"{'snapshot' if stage == 'ingest' else stage} {seconds:.1f} s"
                       for stage, seconds in source.seconds.items())
    print(f"ingest (once a package)      {stages}  (baseline: its runs and the snapshot's "
          "bytecode; 0 where cached)")
    print(f"candidates                   {len(chosen)} of {found}, "
          f"{sum(c.import_time for c in chosen)} at import time  ({statuses})")
    print(f"targeted    s/candidate      median {t_med:.3f}  mean {t_mean:.3f}")
    print(f"  of which verification      median {v_med:.3f}  mean {v_mean:.3f}  "
          "(screen + fresh test processes)")
    print(f"whole-suite s/candidate      median {w_med:.3f}  mean {w_mean:.3f}")
    print(f"ratio whole/targeted         median {ratio(w_med, t_med):.1f}x  "
          f"mean {ratio(w_mean, t_mean):.1f}x")
    print(f"ratio whole/verification     median {ratio(w_med, v_med):.1f}x  "
          f"mean {ratio(w_mean, v_mean):.1f}x")
    print(f"label agreement              {agree}/{known}"
          f" ({100 * agree / max(1, known):.0f}%; n/a {len(chosen) - known}: rejected before "
          "any label, or its labels unstable)")
    print(f"orchestration overhead       {overhead:.2f}x  (targeted wall / pytest-reported seconds)"
          + (f"; {overhead_covering:.2f}x without the {widened_count} sent to every stable test"
             if widened_count else ""))
    print(f"physical limit s/candidate   median {l_med:.3f}  mean {l_mean:.3f}  "
          "(baseline durations, traced)")
    print(f"  whole/limit                median {ratio(w_med, l_med):.1f}x  "
          f"mean {ratio(w_mean, l_mean):.1f}x  (the best a targeted method could reach)")
    print(f"  targeted/limit             median {ratio(t_med, l_med):.1f}x  "
          f"mean {ratio(t_mean, l_mean):.1f}x  (the distance left)")
    print(f"limit, untraced s/candidate  median {u_med:.3f}  mean {u_mean:.3f}  "
          "(durations without a tracer)")
    print(f"  whole/limit                median {ratio(w_med, u_med):.1f}x  "
          f"mean {ratio(w_mean, u_mean):.1f}x")
    print(f"  targeted/limit             median {ratio(t_med, u_med):.1f}x  "
          f"mean {ratio(t_mean, u_mean):.1f}x")
    print(f"limit at pytest's pace       median {p_med:.3f}  mean {p_mean:.3f}  (untraced, "
          f"+ {1000 * pace:.2f} ms a test: pytest's own work around each test)")
    print(f"  whole/limit                median {ratio(w_med, p_med):.1f}x  "
          f"mean {ratio(w_mean, p_mean):.1f}x  (the best a method running the tests through "
          "pytest could reach)")
    print(f"  targeted/limit             median {ratio(t_med, p_med):.1f}x  "
          f"mean {ratio(t_mean, p_mean):.1f}x")
    if reverified:
        print(f"reverify s/task              median {r_med:.3f}  mean {r_mean:.3f}  "
              f"({len(reverified)} of {len(records)} tasks; problems: {r_bad})")
        print(f"reverify --full-suite s/task median {f_med:.3f}  mean {f_mean:.3f}  "
              f"(problems: {f_bad})")
        print(f"  ratio full/targeted        median {ratio(f_med, r_med):.1f}x  "
              f"mean {ratio(f_mean, r_mean):.1f}x")
        print(f"  verify: {reverify_breakdown(reverified, False)}")
        print(f"  --full-suite: {reverify_breakdown(reverified, True)}")
    if audit is not None:
        print(f"audit mode agrees            {audit[0]}/{audit[1]} tasks  "
              "(verify.full_suite: whole suite in both states)")
    fresh = sorted(t.label_runs for t in targeted.values() if t.status == "task" and t.screen)
    if fresh:
        floor = fresh[0]
        print(f"fresh-run floor s/task       min {floor:.3f}  median {statistics.median(fresh):.3f}  "
              f"whole/min {ratio(w_med, floor):.1f}x  (one screened task's confirmation run)")
        cheapest = min(t.wall for t in targeted.values() if t.status == "task" and t.screen)
        print(f"task floor s/task            min {cheapest:.3f}  whole/min "
              f"{ratio(w_med, cheapest):.1f}x  (the cheapest screened task, all included)")
    total = sum(t.wall for t in targeted.values())
    print(f"where targeted time goes     {total:.1f} s over {len(chosen)} candidates")
    for what, seconds, note in breakdown(targeted):
        print(f"  {what:<26} {seconds:8.1f} s  {100 * seconds / max(total, 1e-9):5.1f}%  ({note})")
    print(flush=True)
    return {
        "package": package, "tests": len(source.baseline.tests), "candidates": len(chosen),
        "import_time": sum(c.import_time for c in chosen), "statuses": statuses,
        "targeted": f"{t_med:.2f} / {t_mean:.2f}", "whole": f"{w_med:.2f} / {w_mean:.2f}",
        "ratio": f"{ratio(w_med, t_med):.1f}x / {ratio(w_mean, t_mean):.1f}x",
        "limit": f"{ratio(w_med, u_med):.1f}x / {ratio(w_mean, u_mean):.1f}x",
        "distance": f"{ratio(t_med, u_med):.1f}x / {ratio(t_mean, u_mean):.1f}x",
        "paced": f"{ratio(w_med, p_med):.1f}x / {ratio(w_mean, p_mean):.1f}x",
        "paced_distance": f"{ratio(t_med, p_med):.1f}x / {ratio(t_mean, p_mean):.1f}x",
        "overhead": f"{overhead:.2f}x" + (f" ({overhead_covering:.2f}x without {widened_count} "
                                          "widened)" if widened_count else ""),
        "agreement": f"{agree}/{known}",
        "reverify": (f"{ratio(f_med, r_med):.1f}x / {ratio(f_mean, r_mean):.1f}x"
                     f"{'' if not (r_bad or f_bad) else f' ({r_bad}+{f_bad} failed)'}"
                     if reverified else "-"),
        "audit": f"{audit[0]}/{audit[1]}" if audit is not None else "-",
        "python": source.env.spec.python,
    }


TABLE = (("package", "package"), ("tests", "tests"), ("candidates (import time)", "candidates"),
         ("statuses", "statuses"), ("targeted s med / mean", "targeted"),
         ("whole s med / mean", "whole"), ("whole/targeted med / mean", "ratio"),
         ("whole/limit med / mean", "limit"), ("targeted/limit med / mean", "distance"),
         ("whole/paced limit med / mean", "paced"),
         ("targeted/paced limit med / mean", "paced_distance"),
         ("overhead", "overhead"), ("agreement", "agreement"),
         ("verify full/targeted med / mean", "reverify"), ("audit", "audit"))


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace, started: str,
                load: tuple[float, float]) -> None:
    print("| " + " | ".join(title for title, _key in TABLE) + " |")
    print("|" + "---|" * len(TABLE))
    for row in rows:
        if "error" in row:
            print(f"| {row['package']} | set aside: {row['error']} |" + " |" * (len(TABLE) - 2))
            continue
        cells = {**row, "candidates": f"{row['candidates']} ({row['import_time']})"}
        print("| " + " | ".join(str(cells[key]) for _title, key in TABLE) + " |")
    pythons = sorted({row["python"] for row in rows if "python" in row})
    print()
    print(f"{started}, {os.cpu_count()} cores ({platform.machine()}), Python "
          f"{platform.python_version()} (environments: {', '.join(pythons)}), load average "
          f"{load[0]:.1f} at the start, {load[1]:.1f} at the end; repeats {args.repeats}, "
          f"sandbox {args.sandbox}, strategies {','.join(args.strategies)}, "
          f"{args.candidates} candidates a package, {args.reverify} tasks re-verified a package; "
          "limits untraced.")
    print(f"`python bench/verify_cost.py --packages {' '.join(args.packages)} "
          f"--candidates {args.candidates} --repeats {args.repeats} "
          f"--strategies {','.join(args.strategies)} --reverify {args.reverify} "
          f"--sandbox {args.sandbox}{' --audit' if args.audit else ''}`")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES),
                        metavar="NAME==VERSION")
    parser.add_argument("--candidates", type=int, default=40, help="a package")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--strategies", default="stub-function",
                        type=lambda s: [n.strip() for n in s.split(",") if n.strip()],
                        help="comma-separated Python strategy names, mixed as generate does")
    parser.add_argument("--reverify", type=int, default=5, metavar="N",
                        help="re-verify the first N tasks of each package, targeted and "
                             "--full-suite (0: none; --full-suite costs 4 suites a task)")
    parser.add_argument("--sandbox", default="none")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--audit", action="store_true",
                        help="then rebuild every emitted task in audit mode (untimed)")
    args = parser.parse_args()

    cache = cache_root(args.cache)
    box = get_sandbox(args.sandbox)
    started = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    load_start = os.getloadavg()[0]
    rows = []
    for n, package in enumerate(args.packages, 1):
        log(f"[{n}/{len(args.packages)}] {package}")
        t0 = time.monotonic()
        try:
            rows.append(measure_package(package, args, cache, box))
        except UserError as why:
            log(f"{package}: set aside: {why}")
            rows.append({"package": package, "error": (str(why) or "error").splitlines()[0][:120]})
        log(f"{package}: {time.monotonic() - t0:.0f} s")
    print_table(rows, args, started, (load_start, os.getloadavg()[0]))


if __name__ == "__main__":
    main()

"""The fast path: screen many candidates in one pytest process that forks a child per job.

Interpreter start, imports and collection are paid once per batch instead of once per
candidate. The screen may only reject: whatever it lets through is confirmed in a fresh
process on the task's real, materialized workspace (see `taskforge.verify.confirm`).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from taskforge.errors import Rejected
from taskforge.languages.base import (
    NOT_SCREENED,
    Runner,
    Screened,
    ScreenRequest,
    null_rejection,
    verification_tests,
)
from taskforge.languages.python import NULL_BODIES
from taskforge.languages.python.delete.project import PythonProject
from taskforge.languages.python.testing.bytecode import seed_bytecode, snapshot_bytecode
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Candidate, Outcome, TaskRecord, record_snapshot
from taskforge.workspace import warm_copy, warm_dir

# The trivial solutions (the language's NULL_BODIES) the screen runs, each with the bodies
# its run scores: as the server compiles them (a function of its own whose body is `pass`,
# or `return None`), those two stubs are the same bytecode, so one run's outcomes are the
# other's; each constant runs on its own. The confirmation, on real files, runs each unless
# they compile alike there too (`behaviour_key`).
SCREENED_NULL = "pass"
# (the constants are also what re-verification scores in a server: `screen_record_constants`)
CONSTANTS = tuple(body for body in NULL_BODIES if body not in ("pass", "return-none"))
SCREENED_NULLS = {SCREENED_NULL: ("pass", "return-none"), **{body: (body,) for body in CONSTANTS}}

SCREEN_PLUGIN = "taskforge_screen"
BODIES = ("raise", *NULL_BODIES, "original")


@dataclass(frozen=True)
class ScreenJob:
    id: str
    modules: tuple[str, ...]
    targets: tuple[tuple[str, int, str], ...]  # (workspace-relative path, first line, name)
    body: str  # one of BODIES
    tests: tuple[str, ...]
    repeats: int = 1
    timeout: float | None = None  # per run; None: the screen's default
    stop_on_failure: bool = False  # report only the tests up to the first that does not pass
    # (id, body) of jobs the server runs next on the tests that failed in every run, each
    # stopping at its first test that does not pass: a trivial solution in the order of
    # `order` (quickest first), the original code in collection order (the task state's:
    # the server runs every job's tests in the order a fresh run selecting them would)
    then: tuple[tuple[str, str], ...] = ()
    order: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScreenResult:
    runs: tuple[dict[str, Outcome], ...]
    unscreenable: str | None = None
    pytest_seconds: float = 0.0  # its part of the seconds pytest reports for the server
    wall_seconds: float = 0.0  # the job's time in the server, forks included
    # a trivial solution the server settled without a run: a test that only compares the
    # function's result with a value it does not equal (the server's `_settled_by_comparison`)
    compared: bool = False

    @property
    def timed_out(self) -> bool:
        return self.unscreenable == "timeout"

    def passed_before_failing(self) -> int:
        """The tests its first run passed (one that stops at its first failure: the tests
        before it)."""
        return sum(o == "passed" for o in self.runs[0].values()) if self.runs else 0

    def failing_in_every_run(self) -> list[str]:
        tests = sorted(self.runs[0]) if self.runs else []
        return [t for t in tests if all(r.get(t) != "passed" for r in self.runs)]

    def unstable(self) -> list[str]:
        tests = sorted(self.runs[0]) if self.runs else []
        return [t for t in tests if len({r.get(t) == "passed" for r in self.runs}) > 1]


def screen(jobs: Sequence[ScreenJob], snapshot_root: Path, runner: Runner, *,
           bytecode: Path | None = None) -> dict[str, ScreenResult]:
    """Run every job in one forking pytest process over a copy of the original tree (with
    the snapshot's `bytecode`, when given: see `taskforge.languages.python.testing.bytecode`);
    `runner.timeout` is a job's run time when the job gives none."""
    if not jobs:
        return {}
    timeout, cache = runner.timeout, runner.cache
    # Under the warm root, so that the server is forked from a zygote as verification's
    # fresh runs are (its interpreter, pytest and the environment's plugins imported once
    # per environment and worker, not once per server).
    with warm_copy(snapshot_root, cache, prefix="screen-") as workspace, \
            warm_dir(cache, prefix="screen-io-") as io:
        if bytecode is not None:
            seed_bytecode(workspace, bytecode, changed=())
        jobs_file, out_file = io / "jobs.jsonl", io / "results.jsonl"
        jobs_file.write_text("".join(json.dumps({
            "id": job.id, "modules": list(job.modules), "body": job.body,
            "targets": [[str(workspace / path), line, name] for path, line, name in job.targets],
            "tests": list(job.tests), "repeats": job.repeats,
            "stop_on_failure": job.stop_on_failure, "then": [list(t) for t in job.then],
            "order": list(job.order),
            "timeout": job.timeout or timeout}) + "\n" for job in jobs))
        tests = sorted({t for job in jobs for t in job.tests})
        total = sum((job.timeout or timeout) * (job.repeats + len(job.then))
                    for job in jobs) + 60
        server = run_tests(runner.env, workspace, runner.sandbox, timeout=total, select=tests,
                  extra_args=["-p", SCREEN_PLUGIN],
                  extra_env={"TASKFORGE_SCREEN": str(jobs_file),
                             "TASKFORGE_SCREEN_OUT": str(out_file),
                             "TASKFORGE_SCREEN_TIMEOUT": str(timeout)},
                  writable=(io,))
        lines = out_file.read_text().splitlines() if out_file.exists() else []
    reported = [json.loads(line) for line in lines]
    # The server's session seconds, its last line (it writes no JUnit file); a server that
    # ended early said nothing: its JUnit seconds, if any
    session = next((d["session_seconds"] for d in reported if "session_seconds" in d),
                   server.pytest_seconds)
    reported = [d for d in reported if "id" in d]
    # The seconds pytest reports for the server's session (as for any run: collection
    # included) are shared out: each job gets what its tests took in the children, and each
    # of `jobs` (not their follow-ups, which are a candidate's too) an equal part of the
    # rest of the session (collecting, importing, forking), so the figures add up to it.
    shared = max(0.0, session - sum(d.get("pytest_seconds", 0.0) for d in reported)) / len(jobs)
    listed = {job.id for job in jobs}
    results: dict[str, ScreenResult] = {}
    for data in reported:
        own = data.get("pytest_seconds", 0.0)
        results[data["id"]] = ScreenResult(runs=tuple(data["runs"]),
                                           unscreenable=data["unscreenable"],
                                           pytest_seconds=own + shared * (data["id"] in listed),
                                           wall_seconds=data.get("wall_seconds", 0.0),
                                           compared=bool(data.get("compared")))
    for job in jobs:  # a job the server never reported on (it crashed or timed out); its
        # follow-ups may rightly be missing: they run only on tests that failed
        results.setdefault(job.id, ScreenResult(runs=(), unscreenable="no result"))
    return results


def screen_candidates(request: ScreenRequest, runner: Runner) -> dict[str, Screened]:
    """Screen candidates with the forking fast path: the task state `repeats - 1` times (at
    least once; the confirmation runs it once more), then the trivial solution (one run
    scores both `pass` and `return None`; each constant runs: `SCREENED_NULLS`) and the
    original code once on the tests that failed.
    `runner`: the request's environment, sandbox, time limit and cache."""

    req = request
    candidates, repeats, timeout, pool = req.candidates, req.repeats, runner.timeout, req.pool
    durations = req.baseline.durations
    project = PythonProject(req.snapshot.root, req.env.pythonpath) \
        if not isinstance(req.project, PythonProject) else req.project

    def job_timeout(tests: tuple[str, ...]) -> float:
        # A few times what the tests took in the baseline (whose slowest, instrumented run
        # is already generous): a stub that sends a caller into an endless loop is cut off
        # in seconds, not after the suite-wide limit.
        return min(timeout, 2.0 + 4 * sum(durations.get(t, 1.0) for t in tests))

    def job_for(c: Candidate, runs: int) -> ScreenJob:
        # The task state `runs` times; then, in the same server, the trivial solution once
        # on the tests that failed in every run, and the original code once on them (the
        # reference state in the same selected context as the task state; the baseline
        # already passed them `repeats` times in the whole suite), unless the tests are every
        # stable test (`verification_tests`): the baseline's runs are that context. Each
        # follow-up stops at its first test that does not pass: that one failure already
        # decides (a trivial solution that fails one test is no solution, an original that
        # fails one is no reference). The trivial solution runs the fastest tests first; the
        # original runs them in collection order, as the task state does (a test may fail
        # there only after another: `tests/test_reference_run.py`).
        tests = verification_tests(c, req.baseline, repeats)
        whole = len(tests) == len(req.baseline.stable)
        return ScreenJob(id=f"{c.key}\0raise",
                         modules=tuple(sorted({project.module_name(t[0])
                                               for t in c.targets})),
                         targets=c.targets, body="raise", tests=tests, repeats=runs,
                         timeout=job_timeout(tests),
                         then=tuple((f"{c.key}\0{body}", body) for body in
                                    (*SCREENED_NULLS, *(() if whole else ("original",)))),
                         order=tuple(sorted(tests, key=lambda t: (durations.get(t, 1.0), t))))

    def run(jobs: list[ScreenJob]) -> dict[tuple[str, str], ScreenResult]:
        """Results by (candidate key, body); one forking server per worker."""
        chunks = [jobs[i::pool.workers] for i in range(pool.workers) if jobs[i::pool.workers]]
        results: dict[tuple[str, str], ScreenResult] = {}
        if not chunks:
            return results
        bytecode = snapshot_bytecode(req.snapshot, runner)
        for _chunk, found in pool.map_unordered(
                lambda chunk: screen(chunk, req.snapshot.root, runner, bytecode=bytecode), chunks,
                needs=(req.snapshot.root.parent, req.env.venv.parent, bytecode)):
            results.update({tuple(job_id.split("\0")): r for job_id, r in found.items()})
        return results

    # Code that ran at import time already ran before the fork, and a subprocess imports the
    # original from disk: the screen cannot model such deletions, so those candidates go
    # straight to confirmation (the whole protocol in fresh processes).
    screenable = [c for c in candidates if c.targets and not c.import_time and not c.subprocess]
    # The confirmation's fresh run is the last of the task state's `repeats` runs: the
    # screen runs the others (at least one); when that run's FAIL_TO_PASS is not the
    # screen's, the screen's model was wrong, and the whole protocol runs fresh instead
    # (`Verifier.make_task`). A test unstable here rejects the candidate.
    runs = max(1, repeats - 1)
    reported = run([job_for(c, runs) for c in screenable])
    usable = {k: r for (k, body), r in reported.items()
              if body == "raise" and (not r.unscreenable or r.timed_out)}
    failing = {k: tuple(r.failing_in_every_run()) for k, r in usable.items()
               if r.failing_in_every_run() and not r.unstable()}
    second = {(k, b): r for (k, b), r in reported.items() if b != "raise"}
    null_runs: dict[str, dict[str, ScreenResult]] = {}
    for (k, b), r in second.items():
        if b in SCREENED_NULLS:
            null_runs.setdefault(k, {})[b] = r
    reference = {k: r for (k, b), r in second.items() if b == "original"}
    verdicts: dict[str, Screened] = {}
    for candidate in candidates:
        key = candidate.key
        result = usable.get(key)
        if result is None:
            verdicts[key] = NOT_SCREENED
            continue
        null = null_runs.get(key, {})
        spent = [result, *null.values(), *([reference[key]] if key in reference else [])]
        # One that fails a test was stopped there, so `passed` counts the tests it passed
        # before its first failure. The server runs no trivial solution after one that
        # passes them all or hangs (that settles it); where any other is missing, the
        # confirmation scores them all, fresh.
        scored = {body: {"passed": run.passed_before_failing(), "of": len(failing[key])}
                  for screened_body, run in null.items() if run.runs
                  for body in SCREENED_NULLS[screened_body]}
        nulls = {body: scored[body] for body in NULL_BODIES if body in scored} or None
        ref = reference.get(key)
        ref_runs = 0 if ref is None or ref.unscreenable else len(ref.runs)
        ref_failures = ref.failing_in_every_run() + ref.unstable() if ref and ref_runs else []
        rejection = None
        if result.timed_out:
            rejection = Rejected("timeout", "the task state hangs")
        elif result.unstable():
            rejection = Rejected("flaky-in-task-state", result.unstable()[0])
        elif not failing.get(key):
            rejection = Rejected("no-failing-test",
                                 "every covering test passes with the feature deleted")
        elif ref_failures:
            rejection = Rejected("reference-fails", ref_failures[0])
        elif any(r.timed_out for r in null.values()):
            # Cut off at the screen's short limit, it might still pass under a grader's
            # longer one (a wait that gives up quietly): undecided, so no task.
            rejection = Rejected("timeout", "a trivial solution hangs")
        elif nulls:
            rejection = null_rejection(nulls, NULL_BODIES)
        complete = nulls is not None and set(nulls) == set(NULL_BODIES)
        verdicts[key] = Screened(
            screened=True, fail_to_pass=tuple(result.failing_in_every_run()), task_runs=runs,
            null_solutions=nulls if complete and key in failing else None, rejection=rejection,
            reference_runs=ref_runs,
            seconds=sum(r.wall_seconds for r in spent),
            pytest_seconds=sum(r.pytest_seconds for r in spent))
    return verdicts


def screen_record_constants(record: TaskRecord, snapshot_root: Path,
                            runner: Runner) -> dict[str, dict[str, int]]:
    """The constant trivial solutions of a record (every body but `pass` and `return None`,
    which re-verification runs fresh, as before) scored in one forking server over the
    original tree, as `generate`'s screen scored them: where the record was screened and
    every deleted unit is a function found in its file (else none: each runs fresh). A
    fresh run pays the interpreter's start and the test files' collection once per body
    (~0.85 s on attrs, 1.7 s on tabulate); the server, once. With the snapshot's bytecode,
    as `generate`'s server has it (the snapshot is the original tree): without it the server
    compiled every module it imported, 0.32-1.66 s a server on sqlparse against 0.20-0.98."""
    targets = _record_targets(record, snapshot_root)
    if not record.get("verification", {}).get("screen", {}).get("screened") or not targets:
        return {}
    fail_to_pass = tuple(record["FAIL_TO_PASS"])
    project = PythonProject(snapshot_root, runner.env.pythonpath)
    modules = tuple(sorted({project.module_name(path) for path, _line, _name in targets}))
    found = screen([ScreenJob(id=body, modules=modules, targets=targets, body=body,
                              tests=fail_to_pass, stop_on_failure=True)
                    for body in CONSTANTS], snapshot_root, runner,
                   bytecode=snapshot_bytecode(record_snapshot(record, snapshot_root), runner))
    scores: dict[str, dict[str, int]] = {}
    for body in CONSTANTS:
        result = found[body]
        if result.timed_out:  # undecided, as a fresh run cut off is (`score_null_solution`)
            raise Rejected("timeout", "a trivial solution hangs")
        if result.runs and not result.unscreenable:
            scores[body] = {"passed": result.passed_before_failing(), "of": len(fail_to_pass)}
    return scores


def _record_targets(record: TaskRecord,
                    snapshot_root: Path) -> tuple[tuple[str, int, str], ...] | None:
    """Each deleted function's (path, first line of its code, name) in the original file, as
    the strategies give a candidate's `targets`; None unless every deleted unit is one
    function or method found there by its `def` line and name."""
    targets = []
    for entry in record.get("deleted", ()):
        if entry.get("kind") not in ("function", "method"):
            return None
        try:
            tree = ast.parse((snapshot_root / entry["path"]).read_bytes())
        except (OSError, SyntaxError, ValueError):
            return None
        name = entry["symbol"].rsplit(".", 1)[-1]
        found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                 and n.lineno == entry["start_line"] and n.name == name]
        if len(found) != 1:
            return None
        node = found[0]
        # a decorated function's code starts at its first decorator
        targets.append((entry["path"], min([d.lineno for d in node.decorator_list] + [node.lineno]),
                        node.name))
    return tuple(targets)

"""One candidate -> one verified task record, or a `Rejected` with the reason."""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from taskforge.cache import digest
from taskforge.delete import Strategy, TaskOptions, is_test_file
from taskforge.difficulty import measure
from taskforge.errors import Rejected
from taskforge.ingest import IngestedSource
from taskforge.materialize import materialize_record
from taskforge.model import Candidate
from taskforge.patches import diff_texts
from taskforge.sandbox import Sandbox
from taskforge.sanitize import fingerprint_workspace
from taskforge.statement import problem_statement, quotes_body
from taskforge.testing.bytecode import seed_bytecode, snapshot_bytecode
from taskforge.verify import audit_labels, check_labels, collection_breaks, label_tests
from taskforge.verify.gates import (
    NULL_BODIES,
    collection_gate,
    leak_scan_gate,
    null_rejection,
    score_null_solution,
)
from taskforge.verify.screen import ScreenJob, ScreenResult, screen
from taskforge.workspace import scratch_dir


def instance_id(source: IngestedSource, strategy: str, symbols: list[str]) -> str:
    """Stable: the same source, commit, strategy and deleted symbols give the same id."""
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "-", symbols[0].rsplit(".", 2)[-1] if len(symbols) == 1
                  else f"{len(symbols)}-symbols")
    key = digest(source.snapshot.source, source.snapshot.commit, strategy, sorted(symbols))
    return f"{source.snapshot.name}__{strategy}__{tail}__{key[:8]}"


def environment_record(source: IngestedSource) -> dict[str, Any]:
    spec = source.env.spec
    return {"python": spec.python, "project_install": spec.project_install,
            "requirements": list(spec.requirements), "install": list(spec.install),
            "test_command": shlex.join(spec.test_command),
            "pythonpath": list(source.env.pythonpath),
            "frozen": list(source.env.frozen), "key": source.env.key,
            **({"scm_version": spec.scm_version} if spec.scm_version else {})}


def deleted_lines(deletion_patch: str) -> list[str]:
    return [ln[1:] for ln in deletion_patch.splitlines()
            if ln.startswith("-") and not ln.startswith("---")]


def hidden_tests(root: Path, fail_to_pass: list[str], touched: set[str]) -> dict[str, tuple[str, str]]:
    """The test files that hold FAIL_TO_PASS tests, {path: (text, git mode)}: what
    `task.tests_visible: false` takes out of the agent's workspace. Only a test file the
    deletion did not touch can be hidden (a doctest lives in source code, which stays)."""
    hidden: dict[str, tuple[str, str]] = {}
    for path in sorted({test_id.split("::")[0] for test_id in fail_to_pass}):
        file = root / path
        if not is_test_file(path) or path in touched or file.is_symlink() or not file.is_file():
            raise Rejected("test-not-hideable", path)
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected("test-not-hideable", f"{path}: not UTF-8") from None
        hidden[path] = (text, "100755" if os.access(file, os.X_OK) else "100644")
    return hidden


@dataclass(frozen=True)
class Screened:
    """What the fast path learned about one candidate."""

    screened: bool  # False: the screen could not model it; confirm the slow way
    fail_to_pass: tuple[str, ...] = ()  # covering tests failing in every screened run
    task_runs: int = 0
    null_solutions: dict[str, dict[str, int]] | None = None  # None: check in confirmation
    reference_runs: int = 0  # runs of FAIL_TO_PASS on the original code, all passed
    rejection: Rejected | None = None
    seconds: float = 0.0  # this candidate's jobs in the screen server, forks included
    pytest_seconds: float = 0.0  # what its tests took there


NOT_SCREENED = Screened(screened=False)


def run_timeout(source: IngestedSource, limit: float) -> float:
    """How long one run of a candidate's tests may take: a few times the baseline's slowest
    whole-suite run (a stub that makes a caller loop forever should cost little), at most
    the recipe's `verify.timeout_s`."""
    return min(limit, max(30.0, 3 * max(source.baseline.run_seconds)))


def screen_candidates(source: IngestedSource, candidates: list[Candidate], *, repeats: int,
                      timeout: float, sandbox: Sandbox, cache: Path,
                      pool: Any) -> dict[str, Screened]:
    """Screen candidates with the forking fast path: the task state `repeats - 1` times (at
    least once; the confirmation runs it once more), then each trivial solution and the
    original code once on the tests that failed."""

    durations = source.baseline.durations

    def job_timeout(tests: tuple[str, ...]) -> float:
        # A few times what the tests took in the baseline (whose slowest, instrumented run
        # is already generous): a stub that sends a caller into an endless loop is cut off
        # in seconds, not after the suite-wide limit.
        return min(timeout, 2.0 + 4 * sum(durations.get(t, 1.0) for t in tests))

    def job_for(c: Candidate, runs: int) -> ScreenJob:
        # The task state `runs` times; then, in the same server, each trivial solution once
        # on the tests that failed in every run, and the original code once on them (the
        # reference state in the same selected context as the task state; the baseline
        # already passed them `repeats` times in the whole suite). Fastest tests first, and
        # each follow-up stops at its first test that does not pass: that one failure
        # already decides (a trivial solution that fails one test is no solution, an
        # original that fails one is no reference).
        return ScreenJob(id=f"{c.key}\0raise",
                         modules=tuple(sorted({source.project.module_name(t[0])
                                               for t in c.targets})),
                         targets=c.targets, body="raise", tests=c.covering_tests, repeats=runs,
                         timeout=job_timeout(c.covering_tests),
                         then=tuple((f"{c.key}\0{body}", body)
                                    for body in (*NULL_BODIES, "original")),
                         order=tuple(sorted(c.covering_tests,
                                            key=lambda t: (durations.get(t, 1.0), t))))

    def run(jobs: list[ScreenJob]) -> dict[tuple[str, str], ScreenResult]:
        """Results by (candidate key, body); one forking server per worker."""
        chunks = [jobs[i::pool.workers] for i in range(pool.workers) if jobs[i::pool.workers]]
        results: dict[tuple[str, str], ScreenResult] = {}
        if not chunks:
            return results
        bytecode = snapshot_bytecode(source.snapshot, source.env, sandbox, cache,
                                     timeout=timeout)
        for _chunk, found in pool.map_unordered(
                lambda chunk: screen(chunk, source.snapshot.root, source.env, sandbox, cache,
                                     timeout=timeout, bytecode=bytecode), chunks,
                needs=(*source.cache_entries(), bytecode)):
            results.update({tuple(job_id.split("\0")): r for job_id, r in found.items()})
        return results

    # Code that ran at import time already ran before the fork, and a subprocess imports the
    # original from disk: the screen cannot model such deletions, so those candidates go
    # straight to confirmation (the whole protocol in fresh processes).
    screenable = [c for c in candidates if c.targets and not c.import_time and not c.subprocess]
    # The confirmation's fresh run is the last of the task state's `repeats` runs: the
    # screen runs the others (at least one), and a test whose outcome differs between them
    # rejects the candidate (`screen-disagrees`), as an unstable one does here.
    runs = max(1, repeats - 1)
    reported = run([job_for(c, runs) for c in screenable])
    usable = {k: r for (k, body), r in reported.items()
              if body == "raise" and (not r.unscreenable or r.timed_out)}
    failing = {k: tuple(r.failing_in_every_run()) for k, r in usable.items()
               if r.failing_in_every_run() and not r.unstable()}
    second = {(k, b): r for (k, b), r in reported.items() if b != "raise"}
    null_runs = {body: {k: r for (k, b), r in second.items() if b == body} for body in NULL_BODIES}
    reference = {k: r for (k, b), r in second.items() if b == "original"}
    verdicts: dict[str, Screened] = {}
    for candidate in candidates:
        key = candidate.key
        result = usable.get(key)
        if result is None:
            verdicts[key] = NOT_SCREENED
            continue
        spent = [result, *(n[key] for n in null_runs.values() if key in n),
                 *([reference[key]] if key in reference else [])]
        nulls: dict[str, dict[str, int]] | None = {}
        for body, results in null_runs.items():
            null = results.get(key)
            if null is None or (null.unscreenable and not null.timed_out) or nulls is None:
                nulls = None
                continue
            # A trivial solution that hangs passes nothing; one that fails a test was stopped
            # there, so `passed` counts the tests it passed before its first failure.
            passed = 0 if null.timed_out else sum(o == "passed" for o in null.runs[0].values())
            nulls[body] = {"passed": passed, "of": len(failing[key])}
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
        elif nulls:
            rejection = null_rejection(nulls)
        verdicts[key] = Screened(
            screened=True, fail_to_pass=tuple(result.failing_in_every_run()), task_runs=runs,
            null_solutions=nulls if key in failing else None, rejection=rejection,
            reference_runs=ref_runs,
            seconds=sum(r.wall_seconds for r in spent),
            pytest_seconds=sum(r.pytest_seconds for r in spent))
    return verdicts


def _null_solutions(source: IngestedSource, strategy: Strategy, candidate: Candidate,
                    options: TaskOptions, fail_to_pass: list[str], sandbox: Sandbox,
                    cache: Path, timeout: float) -> dict[str, dict[str, int]]:
    """Score the trivial solutions for real: each on its own materialized workspace."""
    results: dict[str, dict[str, int]] = {}
    for body in NULL_BODIES:
        deletion = strategy.apply(source.project, candidate, options, body=body)
        texts = {p: (source.project.text(p), t) for p, t in deletion.new_texts.items()}
        with scratch_dir(cache, prefix="null-") as scratch:
            workspace = verification_workspace(source, diff_texts(texts), set(texts),
                                               scratch / "workspace", sandbox, cache, timeout)
            results[body] = score_null_solution(workspace, fail_to_pass, source.env, sandbox,
                                                timeout)
    return results


def verification_workspace(source: IngestedSource, deletion_patch: str, changed: set[str],
                           dest: Path, sandbox: Sandbox, cache: Path, timeout: float) -> Path:
    """The task's real workspace, materialized, plus the snapshot's bytecode for the files
    the deletion left alone (see `taskforge.testing.bytecode`): only verification runs in
    it, no agent."""
    workspace, _ = materialize_record({"deletion_patch": deletion_patch}, source.snapshot.root,
                                      dest)
    seed_bytecode(workspace, snapshot_bytecode(source.snapshot, source.env, sandbox, cache,
                                               timeout=timeout), changed)
    return workspace


def make_task(source: IngestedSource, strategy: Strategy, candidate: Candidate, *,
              screened: Screened, options: TaskOptions, sandbox: Sandbox, cache: Path,
              repeats: int, timeout: float, full_suite: bool, recipe_sha256: str,
              seed: int, allow_collection_breaks: bool = False) -> dict[str, Any]:
    """Confirm one candidate on its real, materialized workspace and build its record.

    After a screen, one fresh task-state run confirms it (the screen's runs supply the
    other repeats, and the screen's run of the original code the reference); without one,
    the whole protocol runs `repeats` times here. A deletion that breaks collection is
    rejected, or with `allow_collection_breaks` recorded as collateral: the tests that no
    longer collect fail in the task state like any other FAIL_TO_PASS test.
    """
    deletion = strategy.apply(source.project, candidate, options)
    originals = {p: source.project.text(p) for p in deletion.new_texts}
    deletion_patch = diff_texts({p: (originals[p], t) for p, t in deletion.new_texts.items()})
    patch = diff_texts({p: (t, originals[p]) for p, t in deletion.new_texts.items()})
    if not deletion_patch:
        raise Rejected("no-change", candidate.symbol)
    tests = list(candidate.covering_tests)
    with scratch_dir(cache, prefix="verify-") as scratch:
        workspace = verification_workspace(source, deletion_patch, set(originals),
                                           scratch / "workspace", sandbox, cache, timeout)
        # Fingerprints of the deleted code against the task tree (bytecode aside), before
        # any test runs in it.
        fingerprints = fingerprint_workspace(workspace, originals)
        errors, missing = collection_breaks(workspace, source.baseline.tests, source.env,
                                            sandbox, timeout=timeout) \
            if candidate.import_time else ([], [])
        collateral = collection_gate(errors, missing, source.baseline.stable,
                                     allowed=allow_collection_breaks)
        # The reference state is the original tree: once the screen has run FAIL_TO_PASS on
        # the original code, the confirmation only proves that `patch` restores it byte for
        # byte (the baseline ran every stable test on it, `repeats` times in two orders).
        labels = label_tests(workspace, patch, tests, source.env, sandbox,
                             repeats=1 if screened.screened else repeats, timeout=timeout,
                             reference_repeats=0 if screened.reference_runs else None)
        unrestored = [p for p in originals if (workspace / p).read_bytes()
                      != (source.snapshot.root / p).read_bytes()]
        if unrestored:
            raise Rejected("patch-does-not-restore", unrestored[0])
    check_labels(labels)
    fail_to_pass = labels.fail_to_pass
    if screened.screened and set(fail_to_pass) != set(screened.fail_to_pass):
        differs = sorted(set(fail_to_pass) ^ set(screened.fail_to_pass))
        raise Rejected("screen-disagrees", f"{candidate.symbol}: {differs[0]}")
    nulls = screened.null_solutions if screened.null_solutions is not None else \
        _null_solutions(source, strategy, candidate, options, fail_to_pass, sandbox, cache,
                        timeout)
    rejection = null_rejection(nulls)
    if rejection:
        raise rejection
    pass_to_pass = sorted(set(source.baseline.stable) - set(fail_to_pass))
    # Hidden tests: verification above ran on the source-only deletion; the agent's start
    # state also lacks the FAIL_TO_PASS test files, which `test_patch` restores.
    hidden = {} if options.tests_visible else \
        hidden_tests(source.snapshot.root, fail_to_pass, set(originals))
    modes = {p: mode for p, (_text, mode) in hidden.items()}
    task_patch = diff_texts({**{p: (originals[p], t) for p, t in deletion.new_texts.items()},
                             **{p: (text, None) for p, (text, _mode) in hidden.items()}}, modes)
    test_patch = diff_texts({p: (None, text) for p, (text, _mode) in hidden.items()}, modes)
    audit = {"ran": False, "tests": 0, "disagreements": 0}
    if full_suite:
        with scratch_dir(cache, prefix="audit-") as scratch:
            workspace = verification_workspace(source, deletion_patch, set(originals),
                                               scratch / "workspace", sandbox, cache, timeout)
            whole = label_tests(workspace, patch, list(source.baseline.stable), source.env,
                                sandbox, repeats=1, timeout=timeout)
        problems = audit_labels(whole, fail_to_pass)
        if problems:
            raise Rejected("audit-disagrees", problems[0])
        audit = {"ran": True, "tests": len(source.baseline.stable), "disagreements": 0}
    # The leak scan, on a fresh workspace exactly as the agent gets it, and its environment.
    scan_started = time.monotonic()
    sanitizer = leak_scan_gate({"deletion_patch": task_patch}, source.snapshot.root,
                               source.env.venv, fingerprints, cache)
    scan_seconds = time.monotonic() - scan_started
    statement = problem_statement(deletion.statement_facts, fail_to_pass, options.statement)
    quoted = quotes_body(statement, deleted_lines(deletion_patch),
                         allowed=deletion.statement_facts.get("quotable", ()))
    if quoted:
        raise Rejected("statement-quotes-body", quoted[:60])
    symbols = [d.symbol for d in deletion.deleted]
    lines_deleted = len(deleted_lines(deletion_patch))
    return {
        "instance_id": instance_id(source, strategy.name, symbols),
        "repo": source.snapshot.name,
        "source": source.snapshot.source,
        "base_commit": source.snapshot.commit,
        "snapshot": source.snapshot.id,
        "license": source.snapshot.license,
        "language": strategy.language,
        "strategy": strategy.name,
        "deleted": [{"path": d.path, "symbol": d.symbol, "kind": d.kind,
                     "start_line": d.start_line, "end_line": d.end_line}
                    for d in deletion.deleted],
        "deletion_patch": task_patch,
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": fail_to_pass,
        "PASS_TO_PASS": pass_to_pass,
        "problem_statement": statement,
        "environment": environment_record(source),
        "difficulty": measure(deletion, lines_deleted, fail_to_pass, len(tests), options),
        "verification": {
            "mode": "targeted", "repeats": repeats, "tests_run": tests,
            # Same fields and types in every record (a field that is null in one shard and
            # a struct in another stops datasets.load_dataset over both).
            "screen": {"screened": screened.screened, "task_runs": screened.task_runs,
                       "reference_runs": screened.reference_runs,
                       "seconds": round(screened.seconds, 3),
                       "pytest_seconds": round(screened.pytest_seconds, 3)},
            "collection_checked": candidate.import_time,
            "collateral": collateral,
            "null_solutions": {NULL_BODIES[b]: c for b, c in nulls.items()},
            "audit": audit,
            "runs": labels.runs,
            "scan_seconds": round(scan_seconds, 3),  # the leak scan's part of confirmation
        },
        "sanitizer": sanitizer,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "generator": {"version": version("taskforge"), "recipe_sha256": recipe_sha256,
                      "seed": seed},
    }

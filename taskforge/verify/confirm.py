"""Confirmation: one candidate -> one verified task record, or a `Rejected` with the reason."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import re
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from taskforge.cache import build_digest, digest, taskforge_version
from taskforge.difficulty import measure
from taskforge.errors import Rejected, UserError
from taskforge.ingest import IngestedSource
from taskforge.languages.base import (
    Language,
    Runner,
    Screened,
    ScreenRequest,
    verification_tests,
)
from taskforge.languages.strategy import Strategy, TaskOptions
from taskforge.materialize import materialize
from taskforge.model import Candidate, Deletion, TaskRecord, TestRun
from taskforge.patches import combined, diff_texts
from taskforge.sandbox import Sandbox
from taskforge.sanitize import (
    Fingerprints,
    PendingScan,
    ScanRemoves,
    fingerprint_deletion,
    fingerprint_workspace,
    prepare_index,
    read_tree,
    scan_removals,
    search_ahead,
    tracked_paths,
)
from taskforge.statement import problem_statement, quotes_body
from taskforge.verify.gates import (
    begin_scan_gate,
    collection_gate,
    edited_files_gate,
    leak_scan_gate,
    null_rejection,
    restore_tests,
    scan_gate,
    score_null_solutions,
)
from taskforge.verify.protocol import (
    audit_labels,
    check_labels,
    collection_breaks,
    label_tests,
    state_left_behind,
    state_left_by,
)
from taskforge.workspace import warm_dir


def instance_id(source: IngestedSource, strategy: str, symbols: list[str]) -> str:
    """Stable: the same source, commit, strategy and deleted symbols give the same id."""
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "-", symbols[0].rsplit(".", 2)[-1] if len(symbols) == 1
                  else f"{len(symbols)}-symbols")
    key = digest(source.snapshot.source, source.snapshot.commit, strategy, sorted(symbols))
    return f"{source.snapshot.name}__{strategy}__{tail}__{key[:8]}"


def deleted_lines(deletion_patch: str) -> list[str]:
    return [ln[1:] for ln in deletion_patch.splitlines()
            if ln.startswith("-") and not ln.startswith("---")]


def hidden_tests(language: Language, root: Path, fail_to_pass: list[str],
                 touched: set[str]) -> dict[str, tuple[str, str]]:
    """The test files that hold FAIL_TO_PASS tests, {path: (text, git mode)}: what
    `task.tests_visible: false` takes out of the agent's workspace. Only a test file the
    deletion did not touch can be hidden (a doctest lives in source code, which stays)."""
    hidden: dict[str, tuple[str, str]] = {}
    for path in sorted({test_id.split("::")[0] for test_id in fail_to_pass}):
        file = root / path
        if not language.is_test_file(path) or path in touched or file.is_symlink() or not file.is_file():
            raise Rejected("test-not-hideable", path)
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected("test-not-hideable", f"{path}: not UTF-8") from None
        hidden[path] = (text, "100755" if os.access(file, os.X_OK) else "100644")
    return hidden


def task_patches(deletion_patch: str, hidden: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """The record's `deletion_patch` (the deletion's, `deletion_patch`, and the hidden test
    files deleted) and `test_patch` (those files back)."""
    modes = {p: mode for p, (_text, mode) in hidden.items()}
    task_patch = combined(deletion_patch, diff_texts(
        {p: (text, None) for p, (text, _mode) in hidden.items()}, modes))
    test_patch = diff_texts({p: (None, text) for p, (text, _mode) in hidden.items()}, modes)
    return task_patch, test_patch


def run_timeout(source: IngestedSource, limit: float) -> float:
    """How long one run of a candidate's tests may take: a few times the baseline's slowest
    whole-suite run (a stub that makes a caller loop forever should cost little), at most
    the recipe's `verify.timeout_s`."""
    return min(limit, max(30.0, 3 * max(source.baseline.run_seconds)))


class _ScreenDisagrees(Exception):
    """The fresh confirmation's FAIL_TO_PASS (`fail_to_pass`) is not the screen's. `runs`:
    that fresh run, when its workspace was the task state's tree (nothing removed from it)."""

    def __init__(self, fail_to_pass: set[str], detail: str, runs: Sequence[TestRun]) -> None:
        super().__init__(detail)
        self.fail_to_pass, self.detail, self.runs = fail_to_pass, detail, tuple(runs)


class _LeavesState(Exception):
    """A FAIL_TO_PASS test left module-level state behind (`names`) that no baseline test
    leaves: a later test of the suite may fail because of it."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(", ".join(names[:3]))
        self.names = names


_Kept = TypeVar("_Kept")


class _DeletionFingerprints:
    """The snapshot's tree (`read_tree`), read once, and each deletion's fingerprints against
    it with the deletion in place, by the deletion's texts: `_search_ahead` computes them
    while the screen runs, the task's confirmation takes them (14 ms a boltons task); and
    the deletions `_search_ahead` applied for that, by candidate (a strategy's `apply` is
    a function of the snapshot, the candidate and the options: 4 ms a boltons task), and
    their diffs (`patches`). Per process: pickled, it arrives empty (a worker elsewhere
    computes its own)."""

    KEPT = 256  # deletions remembered, the oldest going first

    def __init__(self) -> None:
        self._tree: dict[str, bytes] | None = None
        self._tracked: frozenset[str] | None = None
        self._found: dict[tuple, Fingerprints] = {}
        self._applied: dict[tuple[str, TaskOptions], Deletion] = {}
        self._patches: dict[tuple[str, TaskOptions], tuple[str, str]] = {}
        self._lock = threading.Lock()

    def _remembered(self, memo: dict[Any, _Kept], key: Hashable,
                    make: Callable[[], _Kept]) -> _Kept:
        """`memo[key]`, else made now (outside the lock: two threads may make the same
        value) and kept, the oldest going first past KEPT."""
        with self._lock:
            found = memo.get(key)
        if found is None:
            found = make()
            with self._lock:
                memo[key] = found
                while len(memo) > self.KEPT:
                    memo.pop(next(iter(memo)))
        return found

    def deletion(self, key: tuple[str, TaskOptions], apply: Callable[[], Deletion]) -> Deletion:
        """The deletion `key` names (a candidate's key, the options), applied ahead, else by
        `apply` now."""
        return self._remembered(self._applied, key, apply)

    def patches(self, key: tuple[str, TaskOptions], originals: dict[str, str],
                new_texts: dict[str, str]) -> tuple[str, str]:
        """The deletion `key` names as diffs, made ahead or now: (the deletion, the reference
        solution that undoes it), of `originals` (its files' texts in the snapshot) and
        `new_texts` (its texts). Two diffs of whole files a task, ~7 ms on boltons."""
        return self._remembered(self._patches, key, lambda: (
            diff_texts({p: (originals[p], t) for p, t in new_texts.items()}),
            diff_texts({p: (t, originals[p]) for p, t in new_texts.items()})))

    def __reduce__(self) -> tuple:
        return (_DeletionFingerprints, ())

    def tree(self, root: Path) -> dict[str, bytes]:
        with self._lock:
            if self._tree is None:
                self._tree = read_tree(root)
            return self._tree

    def tracked(self, root: Path) -> frozenset[str]:
        """The snapshot's `tracked_paths`, walked once: each materialized workspace keeps
        them, and its leak scan spares them (~12 ms a walk of humanize's tree, twice a
        task)."""
        with self._lock:
            if self._tracked is None:
                self._tracked = tracked_paths(root)
            return self._tracked

    def of(self, root: Path, originals: dict[str, str], new_texts: dict[str, str],
           gone: frozenset[str] = frozenset()) -> Fingerprints:
        """`fingerprint_deletion` of the texts `originals` became (`new_texts`) against the
        snapshot's tree at `root` with them in place, less the files `gone` (what
        materializing removed that the tree holds: a compiled copy of an edited module)."""
        def fingerprinted() -> Fingerprints:
            task_tree = {p: data for p, data in self.tree(root).items() if p not in gone}
            task_tree.update({p: t.encode("utf-8", "surrogatepass")
                              for p, t in new_texts.items()})
            return fingerprint_deletion(originals, task_tree)

        return self._remembered(self._found, (tuple(sorted(new_texts.items())), gone),
                                fingerprinted)


@dataclass(frozen=True)
class Verifier:
    """What every candidate of one source is verified with: where its tests run, and what a
    task must prove and record. One object instead of the same ten arguments to each step."""

    source: IngestedSource
    sandbox: Sandbox
    cache: Path
    timeout: float  # one run of a candidate's tests (`run_timeout`)
    repeats: int
    options: TaskOptions
    full_suite: bool = False
    allow_collection_breaks: bool = False
    recipe_sha256: str = ""
    seed: int = 0
    build: str = ""  # the driver's `build_digest()`: a worker with other code must not verify
    fingerprinted: _DeletionFingerprints = field(default_factory=_DeletionFingerprints,
                                                 compare=False, repr=False)

    @property
    def runner(self) -> Runner:
        return Runner(self.source.language, self.source.env, self.sandbox, self.timeout,
                      cache=self.cache)

    def screen(self, candidates: list[Candidate], pool: Any) -> dict[str, Screened]:
        """The language's fast path over `candidates` (its verdicts by candidate key)."""
        source = self.source
        # Every task's leak scan searches the environment's index: built while the screen's
        # server works, not by the first task; and where the tasks are confirmed in this
        # process and the screen's servers leave a core idle, searched ahead for each
        # candidate meanwhile (`_search_ahead`).
        built = prepare_index(source.env.venv)
        stop = threading.Event()
        ahead = threading.Thread(target=self._search_ahead, args=(candidates, built, stop),
                                 name="scan-ahead", daemon=True) \
            if getattr(pool, "name", "") == "local" and pool.workers < (os.cpu_count() or 1) \
            else None
        if ahead is not None:
            ahead.start()
        try:
            return source.language.screen(ScreenRequest(
                snapshot=source.snapshot, env=source.env, baseline=source.baseline,
                project=source.project, candidates=candidates, repeats=self.repeats,
                timeout=self.timeout, sandbox=self.sandbox, cache=self.cache, pool=pool))
        finally:
            stop.set()
            if ahead is not None:
                ahead.join()

    def _search_ahead(self, candidates: list[Candidate], built: threading.Thread,
                      stop: threading.Event) -> None:
        """While the screen's server runs (another process), search the environment's index
        for what each candidate's leak scan will look for there: its fingerprints against
        the snapshot's tree with its deletion in place, the tree its task workspace holds
        (and make the deletion's diffs meanwhile, which its confirmation takes).
        The index remembers the answers, so a task's scan waits less for the environment
        (on sqlparse's 192 MB, up to 0.25 s a task past its confirmation run). A warm-up
        only: a task whose fingerprints turn out otherwise searches anew, and nothing here
        decides anything. On the source's own project, whose files candidate discovery
        parsed already (the screen's thread only asks it module names meanwhile, and the
        confirmations start after this thread ends): on a project of its own, parsing each
        file anew, it got through 19 of boltons' 40 candidates in the screen's time, and
        competed with the screen for the core."""
        source = self.source
        built.join()
        project = source.project
        for candidate in candidates:
            if stop.is_set():
                return
            # What fails here (a deletion that does not apply, say) fails again in the
            # task's own scan or confirmation, which report it.
            with contextlib.suppress(Exception):
                strategy = source.language.strategy(candidate.strategy)
                assert strategy is not None  # its candidates came from this language
                deletion = self.fingerprinted.deletion(
                    (candidate.key, self.options),
                    functools.partial(strategy.apply, project, candidate, self.options))
                originals = {p: project.text(p) for p in deletion.new_texts}
                self.fingerprinted.patches((candidate.key, self.options), originals,
                                           deletion.new_texts)
                search_ahead(source.env.venv, self.fingerprinted.of(
                    source.snapshot.root, originals, deletion.new_texts), stop)

    def workspace(self, deletion_patch: str, changed: set[str], dest: Path) -> Path:
        """The task's real workspace, materialized, plus what the language adds for
        verification runs (Python: the snapshot's bytecode for the files the deletion left
        alone): only verification runs in it, no agent."""
        source = self.source
        workspace, _ = materialize(deletion_patch, source.snapshot.root, dest,
                                   tracked=self.fingerprinted.tracked(source.snapshot.root))
        source.language.set_up_workspace(workspace, source.snapshot, changed, self.runner)
        return workspace

    def fingerprints(self, workspace: Path, removed: dict[str, list[str]],
                     originals: dict[str, str], new_texts: dict[str, str],
                     hidden: dict[str, tuple[str, str]]) -> Fingerprints:
        """The deletion's fingerprints against the task tree of `workspace`, just
        materialized (`removed`: what that removed; its `hidden` tests not yet back): the
        snapshot's tree with the deletion in place, less the files `removed` names
        (`_DeletionFingerprints`, most often computed ahead). That is the workspace's own
        tree: the snapshot's copy with those files edited, less what `removed` lists (rules
        name artifacts and VCS directories, which `read_tree` leaves out anyway). Where an
        edited file on disk is not the deletion's text byte for byte, the workspace itself
        is read instead (`fingerprint_workspace`); the scan reads the workspace as it is
        either way."""
        root = self.source.snapshot.root
        if any(not (workspace / p).is_file() or (workspace / p).read_bytes()
               != t.encode("utf-8", "surrogatepass") for p, t in new_texts.items()):
            return fingerprint_workspace(workspace, originals, lacking=hidden,
                                         lacking_from=root)
        removed_paths = {p for paths in removed.values() for p in paths}
        gone = frozenset(p for p in self.fingerprinted.tree(root) if removed_paths and any(
            "/".join(p.split("/")[:i]) in removed_paths for i in range(1, p.count("/") + 2)))
        return self.fingerprinted.of(root, originals, new_texts, gone)

    def null_solutions(self, strategy: Strategy, candidate: Candidate,
                       fail_to_pass: list[str]) -> dict[str, dict[str, int]]:
        """Score the trivial solutions for real, each on its own materialized workspace (one
        run for bodies that behave alike: `score_null_solutions`)."""
        source = self.source

        def workspace_for(body: str, dest: Path) -> tuple[Path, set[str]]:
            deletion = strategy.apply(source.project, candidate, self.options, body=body)
            texts = {p: (source.project.text(p), t) for p, t in deletion.new_texts.items()}
            return self.workspace(diff_texts(texts), set(texts), dest), set(texts)

        return score_null_solutions(source.language, fail_to_pass, self.runner, workspace_for,
                                    prefix="null-")

    def make_task(self, strategy: Strategy, candidate: Candidate,
                  screened: Screened) -> TaskRecord:
        """Confirm one candidate on its real, materialized workspace and build its record.

        After a screen, one fresh task-state run confirms it (the screen's runs supply the
        other repeats, and the screen's run of the original code the reference); without one,
        or when that run's FAIL_TO_PASS is not the screen's, the whole protocol runs `repeats`
        times here (that run one of them). A deletion that breaks collection is
        rejected, or with `allow_collection_breaks` recorded as collateral: the tests that no
        longer collect fail in the task state like any other FAIL_TO_PASS test.
        """
        if self.build and build_digest() != self.build:
            raise UserError(f"this worker's taskforge is build {build_digest()}, the run's is "
                            f"{self.build}: every node must run the same taskforge")
        try:
            return self._confirm_watching(strategy, candidate, screened)
        except _ScreenDisagrees as disagreement:
            # The screen's model of this candidate was wrong: its forks share state their
            # session built (a lexer, a registry) that a fresh process builds anew with the
            # deletion in place. Its labels are no evidence, so the whole protocol runs in
            # fresh processes, as for a candidate it could not model. The disagreeing run is
            # one of them (a fresh run of the same tests on the same tree), so `repeats`
            # fresh runs in all must agree, on the FAIL_TO_PASS it found, else no task.
            record = self._confirm_watching(strategy, candidate, Screened(
                screened=False, seconds=screened.seconds,
                pytest_seconds=screened.pytest_seconds), prior=disagreement.runs)
            # (on the tests the disagreeing run ran: labels on every stable test add the
            # later tests a failing one's leftovers fail, `_confirm_watching`)
            ran = set(verification_tests(candidate, self.source.baseline, self.repeats))
            if set(record["FAIL_TO_PASS"]) & ran != disagreement.fail_to_pass:
                raise Rejected("screen-disagrees", disagreement.detail) from None
            record["verification"]["screen"]["disagreed"] = True
            return record

    def _confirm_watching(self, strategy: Strategy, candidate: Candidate, screened: Screened,
                          prior: Sequence[TestRun] = ()) -> TaskRecord:
        try:
            return self._confirm(strategy, candidate, screened, prior)
        except _LeavesState as left:
            # A FAIL_TO_PASS test left state behind that later tests of the suite may read
            # (`state_left_behind`): which of them fail for it, only a run of every test in
            # the suite's order can tell, so the labels are those of every stable test in the
            # task state, `repeats` fresh runs, as the whole-suite method's (the baseline is
            # their reference). The tests it adds to FAIL_TO_PASS pass with the reference.
            record = self._confirm(strategy, candidate, Screened(
                screened=False, seconds=screened.seconds,
                pytest_seconds=screened.pytest_seconds), every_stable=True)
            record["verification"]["leaves_state"] = left.names
            return record

    def _confirm(self, strategy: Strategy, candidate: Candidate, screened: Screened,
                 prior: Sequence[TestRun] = (), *, every_stable: bool = False) -> TaskRecord:
        try:
            return self._make_task(strategy, candidate, screened, scan_meanwhile=True,
                                   prior=prior, every_stable=every_stable)
        except ScanRemoves:
            # The scan found what a rule removes, after the labels ran on a workspace that
            # still held it: everything again, the scan's rounds before the runs.
            return self._make_task(strategy, candidate, screened, scan_meanwhile=False,
                                   prior=prior, every_stable=every_stable)

    def _make_task(self, strategy: Strategy, candidate: Candidate, screened: Screened, *,
                   scan_meanwhile: bool, prior: Sequence[TestRun] = (),
                   every_stable: bool = False) -> TaskRecord:
        source, options, cache, repeats = self.source, self.options, self.cache, self.repeats
        deletion = self.fingerprinted.deletion(
            (candidate.key, options),
            functools.partial(strategy.apply, source.project, candidate, options))
        originals = {p: source.project.text(p) for p in deletion.new_texts}
        deletion_patch, patch = self.fingerprinted.patches((candidate.key, options), originals,
                                                           deletion.new_texts)
        if not deletion_patch:
            raise Rejected("no-change", candidate.symbol)
        # Its covering tests, or every stable test where that costs less or a failing test
        # leaves state behind (then the baseline is the reference run: `established` below).
        tests = list(source.baseline.stable) if every_stable else \
            list(verification_tests(candidate, source.baseline, repeats))
        # What the failing tests leave behind matters over a subset of the suite; every run
        # watches, which also names a test that failed only with another's garbage
        # (`check_labels`), in the whole suite too.
        watch = set(tests) != set(source.baseline.stable)
        language = source.language
        runner = self.runner
        # A screened candidate's FAIL_TO_PASS is known before its confirmation (which must
        # find the very same, else the whole protocol runs fresh), and so are its hidden
        # tests: one workspace serves the leak scan, as the agent gets it, and then the
        # confirmation, with `test_patch` applied as a grader applies it. Otherwise the
        # confirmation runs on the source-only deletion and the scan on a workspace of its
        # own, afterwards.
        hidden: dict[str, tuple[str, str]] | None = None
        task_patch = test_patch = ""
        sanitizer: dict[str, Any] | None = None
        scan_seconds = 0.0
        if screened.screened:
            hidden = {} if options.tests_visible else \
                hidden_tests(language, source.snapshot.root, sorted(screened.fail_to_pass),
                             set(originals))
            task_patch, test_patch = task_patches(deletion_patch, hidden)
        pending: PendingScan | None = None
        with warm_dir(cache, prefix="verify-") as scratch, contextlib.ExitStack() as scans:
            if hidden is not None:
                tracked = self.fingerprinted.tracked(source.snapshot.root)
                workspace, removed = materialize(task_patch, source.snapshot.root,
                                                 scratch / "workspace", tracked=tracked)
                # Fingerprints of the deleted code against the task tree (bytecode aside),
                # hidden tests included, before any test runs in it.
                fingerprints = self.fingerprints(workspace, removed, originals,
                                                 deletion.new_texts, hidden)
                scan_started = time.monotonic()
                if scan_meanwhile:
                    # The workspace is read now, before anything runs in it; the environment
                    # (most of a scan where it is large) is searched while the tests run.
                    pending = scans.enter_context(begin_scan_gate(
                        workspace, removed, source.snapshot.root, source.env.venv, fingerprints,
                        tracked=tracked))
                else:
                    sanitizer = scan_gate(workspace, removed, source.snapshot.root,
                                          source.env.venv, fingerprints)
                scan_seconds = time.monotonic() - scan_started
                restore_tests(workspace, test_patch, source.snapshot.root)
                # (the tests it will run: all of them where the collection is checked)
                language.set_up_workspace(workspace, source.snapshot, set(originals), runner,
                                          tests=None if candidate.import_time else tests)
            else:
                workspace = self.workspace(deletion_patch, set(originals),
                                           scratch / "workspace")
                fingerprints = fingerprint_workspace(workspace, originals)
            errors, missing = collection_breaks(workspace, source.baseline.tests, runner) \
                if candidate.import_time else ([], [])
            collateral = collection_gate(errors, missing, source.baseline.stable,
                                         allowed=self.allow_collection_breaks)
            # The reference state is the original tree: once the screen has run FAIL_TO_PASS on
            # the original code, the confirmation only proves that `patch` restores it byte for
            # byte (the baseline ran every stable test on it, `repeats` times in two orders).
            # Likewise when the tests are every stable test (code run at import time, or a
            # function most tests reach: `verification_tests`): a run of them on the
            # original tree is one of the baseline's runs again.
            # Not so when the scan removed files (a copy of the deleted code no rule names)
            # from this workspace: the original tree less those was never run.
            scan_removed = bool(sanitizer and scan_removals({"sanitizer": sanitizer}))
            established = not scan_removed and (
                screened.reference_runs > 0 or set(tests) == set(source.baseline.stable))
            # Otherwise the reference runs FAIL_TO_PASS once, as the screen's does: a task
            # needs its failing tests to pass on the original code (here, alone); its
            # passing tests passed there in every baseline run.
            labels = label_tests(workspace, patch, tests, runner,
                                 repeats=1 if screened.screened else repeats,
                                 reference_repeats=0 if established else 1,
                                 reference_failing_only=True, prior=prior,
                                 watch_state=True)
            if pending is not None:
                waited = time.monotonic()
                sanitizer = pending.finish(removals=False)  # or ScanRemoves: start over
                scan_seconds += time.monotonic() - waited  # what the scan added to the runs
            unrestored = [p for p in originals if (workspace / p).read_bytes()
                          != (source.snapshot.root / p).read_bytes()]
            if unrestored:
                raise Rejected("patch-does-not-restore", unrestored[0])
        check_labels(labels)
        fail_to_pass = labels.fail_to_pass
        if screened.screened and set(fail_to_pass) != set(screened.fail_to_pass):
            differs = sorted(set(fail_to_pass) ^ set(screened.fail_to_pass))
            raise _ScreenDisagrees(set(fail_to_pass), f"{candidate.symbol}: {differs[0]}",
                                   () if scan_removed else labels.task_runs)
        left = state_left_behind(labels.task_runs, fail_to_pass, source.baseline) if watch else []
        if left:
            raise _LeavesState(left)
        # What they did leave changed is what the suite's passing tests leave too: recorded,
        # so that `taskforge verify` tells it from a new leftover without the baseline.
        usual_left = sorted(state_left_by(labels.task_runs, fail_to_pass)) if watch else []
        nulls = screened.null_solutions if screened.null_solutions is not None else \
            self.null_solutions(strategy, candidate, fail_to_pass)
        rejection = null_rejection(nulls, language.null_bodies)
        if rejection:
            raise rejection
        pass_to_pass = sorted(set(source.baseline.stable) - set(fail_to_pass))
        if hidden is None:
            # Hidden tests: verification above ran on the source-only deletion; the agent's
            # start state also lacks the FAIL_TO_PASS test files, which `test_patch` restores.
            hidden = {} if options.tests_visible else \
                hidden_tests(language, source.snapshot.root, fail_to_pass, set(originals))
            task_patch, test_patch = task_patches(deletion_patch, hidden)
        audit = {"ran": False, "tests": 0, "disagreements": 0}
        if self.full_suite:
            with warm_dir(cache, prefix="audit-") as scratch:
                workspace = self.workspace(deletion_patch, set(originals),
                                           scratch / "workspace")
                whole = label_tests(workspace, patch, list(source.baseline.stable), runner,
                                    repeats=1)
            problems = audit_labels(whole, fail_to_pass)
            if problems:
                raise Rejected("audit-disagrees", problems[0])
            audit = {"ran": True, "tests": len(source.baseline.stable), "disagreements": 0}
        if sanitizer is None:
            # The leak scan, on a fresh workspace exactly as the agent gets it, and its
            # environment.
            scan_started = time.monotonic()
            sanitizer = leak_scan_gate(task_patch, source.snapshot.root,
                                       source.env.venv, fingerprints, cache,
                                       test_patch=test_patch)
            scan_seconds = time.monotonic() - scan_started
        edited_files_gate(originals, sanitizer)
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
            "language": language.name,
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
            "environment": language.environment_record(source.env),
            "difficulty": measure(deletion, lines_deleted, fail_to_pass,
                                  len(candidate.covering_tests), options),
            "verification": {
                "mode": "targeted", "repeats": repeats, "tests_run": tests,
                # Same fields and types in every record (a field that is null in one shard and
                # a struct in another stops datasets.load_dataset over both).
                "screen": {"screened": screened.screened, "task_runs": screened.task_runs,
                           "reference_runs": screened.reference_runs,
                           "disagreed": False,  # True: labels from the fresh fallback
                           "seconds": round(screened.seconds, 3),
                           "pytest_seconds": round(screened.pytest_seconds, 3)},
                "collection_checked": candidate.import_time,
                "collateral": collateral,
                # state a FAIL_TO_PASS test left behind, for which the labels are every
                # stable test's (`_confirm_watching`); empty for most tasks
                "leaves_state": [],
                # what the FAIL_TO_PASS tests left changed that the suite's passing tests
                # leave changed too (a counter, an object built on first use): no sign
                "state_usual": usual_left,
                "null_solutions": {language.null_bodies[b]: c for b, c in nulls.items()},
                "audit": audit,
                "runs": labels.runs,
                "scan_seconds": round(scan_seconds, 3),  # the leak scan's part of confirmation
            },
            "sanitizer": sanitizer,
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "generator": {"version": taskforge_version(), "build": build_digest(),
                          "recipe_sha256": self.recipe_sha256,
                          "seed": self.seed},
        }

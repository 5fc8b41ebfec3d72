"""The gates a task passes besides its labels, each in one place: `generate` runs them on a
candidate, `taskforge verify` runs them again on a record from scratch.

- trivial-solution: no trivial body (the language's `null_bodies`: `pass` or `return None`
  for Python) where code was deleted may pass every FAIL_TO_PASS test (`null_rejection`);
- collection-breaks: a deletion must leave collection as it was (or, when the recipe allows
  it, the breaks are recorded as collateral);
- leak-scan: a fresh materialization, and the environment, hold no residue of the deleted
  code and nothing the scan cannot decide.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from taskforge.errors import Rejected
from taskforge.languages.base import Language, Runner, null_rejection
from taskforge.materialize import materialize
from taskforge.patches import apply_patch, plain_creations
from taskforge.sanitize import (
    Fingerprints,
    PendingScan,
    sanitize_and_scan,
    scan_removals,
    tracked_paths,
)
from taskforge.verify.protocol import ran
from taskforge.workspace import scratch_dir, warm_dir

__all__ = ["begin_scan_gate", "collection_gate", "leak_scan_gate", "null_rejection",
           "restore_tests", "scan_gate", "score_null_solution", "score_null_solutions"]


def score_null_solution(workspace: Path, fail_to_pass: list[str],
                        runner: Runner) -> dict[str, int]:
    """How many FAIL_TO_PASS tests a trivial solution, in `workspace`, passes: the run stops
    at its first test that does not pass (that one already decides: no trivial solution), so
    `passed` counts those before it, as the screen's does. A run cut off at the time limit
    before any test failed is undecided: Rejected("timeout")."""
    run = runner.run(workspace, select=fail_to_pass, first_failure=True)
    if run.timed_out and not any(run.outcomes.get(t) == "failed" for t in fail_to_pass):
        # It might still pass under a grader's longer limit (a wait that gives up quietly);
        # one test that failed before the cut-off already decides, whatever the rest do.
        raise Rejected("timeout", "a trivial solution hangs")
    if set(run.unreported) >= set(fail_to_pass):
        # not one test reported (the run stops after its first failure, so the rest may
        # rightly not): a run that never started must not pass for a trivial solution failing
        ran(run, "trivial solution")
    return {"passed": len(run.passed() & set(fail_to_pass)), "of": len(fail_to_pass)}


def score_null_solutions(language: Language, fail_to_pass: list[str], runner: Runner,
                         workspace_for: Callable[[str, Path], tuple[Path, Collection[str]]],
                         *, prefix: str, known: Mapping[str, dict[str, int]] | None = None
                         ) -> dict[str, dict[str, int]]:
    """`score_null_solution` for each of the language's trivial bodies, each materialized on
    its own by `workspace_for(body, dest)` (the workspace, and the files the deletion changed
    there), under a warm scratch dir named by `prefix`. A body whose changed files behave as
    an earlier one's (`Language.behaviour_key`: Python's `pass` and `return None` as a whole
    function body) takes that one's score instead of a run of its own. A body that passes
    every test settles it (no task): the bodies after it do not run. `known`: scores already
    had (`Language.screen_trivial`), taken as they are."""
    known = known or {}
    passing = [b for b, c in known.items() if c["of"] and c["passed"] == c["of"]]
    if passing:
        return {passing[0]: dict(known[passing[0]])}
    results: dict[str, dict[str, int]] = {}
    scored: dict[str, dict[str, int]] = {}
    for body in language.null_bodies:
        if body in known:
            results[body] = dict(known[body])
            continue
        with warm_dir(runner.cache, prefix=prefix) as scratch:
            workspace, changed = workspace_for(body, scratch / "workspace")
            key = language.behaviour_key(workspace, changed)
            counts = scored.get(key) if key is not None else None
            if counts is None:
                counts = score_null_solution(workspace, fail_to_pass, runner)
                if key is not None:
                    scored[key] = counts
            results[body] = dict(counts)
        if counts["of"] and counts["passed"] == counts["of"]:
            break
    return results


def collection_gate(errors: list[str], missing: list[str], stable: Collection[str], *,
                    allowed: bool) -> dict[str, Any]:
    """The collateral record of a collection check (`verify.collection_breaks`' result), or
    Rejected("collection-breaks") when the recipe does not allow breaks, or nothing stable
    collects any more."""
    if errors or missing:
        if not allowed:
            raise Rejected("collection-breaks", (errors or missing)[0])
        if not set(stable) - set(missing):
            raise Rejected("collection-breaks", "no stable test collects any more")
    return {"allowed": allowed, "collection_errors": [e.split("::", 1)[-1] for e in errors],
            "uncollected": missing}


def leak_scan_gate(deletion_patch: str, snapshot_root: Path, env_dir: Path | None,
                   fingerprints: Fingerprints, cache: Path, *, test_patch: str = "",
                   also_remove: Collection[str] = ()) -> dict[str, Any]:
    """Materialize the deletion afresh, exactly as the agent gets it (`also_remove`: what the
    task's own scan removed), and scan it and `env_dir`: the record's `sanitizer` field, or
    Rejected (`leak:*`, `leak-scan-undecided`); then `test_patch` must restore the hidden
    tests there (`restore_tests`)."""
    copy_gate(fingerprints)
    with scratch_dir(cache, prefix="scan-") as scratch:
        workspace, removed = materialize(deletion_patch, snapshot_root, scratch / "workspace",
                                         also_remove=also_remove)
        sanitizer = scan_gate(workspace, removed, snapshot_root, env_dir, fingerprints)
        restore_tests(workspace, test_patch, snapshot_root)
        return sanitizer


def copy_gate(fingerprints: Fingerprints) -> None:
    """Rejected (`leak:copy-in-tree`) where the task's own tree still holds its deleted code
    verbatim (`Fingerprints.copied`): no scan can find what is no fingerprint, and the agent
    copies the answer from the other file."""
    if fingerprints.copied is not None:
        raise Rejected("leak:copy-in-tree", str(fingerprints.copied))


def edited_files_gate(edited: Collection[str], sanitizer: dict[str, Any]) -> None:
    """Rejected (`leak:in-edited-file`) where the leak scan removed a file the deletion edits
    (residue in it that a rule names: a `lib/` that looks compiled): that file is the task,
    and without it the agent's workspace is none and the reference no longer applies."""
    removed = sorted(set(edited) & set(scan_removals({"sanitizer": sanitizer})))
    if removed:
        raise Rejected("leak:in-edited-file", removed[0])


def restore_tests(workspace: Path, test_patch: str, snapshot_root: Path) -> None:
    """Apply `test_patch` to an agent's workspace, as a grader does; it must give back the
    snapshot's very bytes of each file it creates (else Rejected: the graded tests would not
    be the verified ones; `git apply` follows the tree's .gitattributes, for one)."""
    created = plain_creations(test_patch)
    if created is None:  # what `git apply` would write is not what the names say
        raise Rejected("test-patch-does-not-restore", "it does more than create test files")
    apply_patch(workspace, test_patch)
    for path in created:
        file, original = workspace / path, snapshot_root / path
        if not file.is_file() or not original.is_file() \
                or file.read_bytes() != original.read_bytes():
            raise Rejected("test-patch-does-not-restore", path)


def begin_scan_gate(workspace: Path, removed: dict[str, list[str]], snapshot_root: Path,
                    env_dir: Path | None, fingerprints: Fingerprints, *,
                    tracked: frozenset[str] | None = None) -> PendingScan:
    """`scan_gate` begun: `workspace` is read now, the environment searched meanwhile (see
    `PendingScan`); its `finish` gives the `sanitizer` field or Rejected. `tracked`: the
    snapshot's `tracked_paths`, where the caller has them already."""
    copy_gate(fingerprints)
    return PendingScan(workspace, env_dir, fingerprints,
                       tracked_paths(snapshot_root) if tracked is None else tracked,
                       sanitized=removed)


def scan_gate(workspace: Path, removed: dict[str, list[str]], snapshot_root: Path,
              env_dir: Path | None, fingerprints: Fingerprints) -> dict[str, Any]:
    """The leak scan of `workspace`, just materialized (`removed`: what that sanitized), and
    of `env_dir`: the record's `sanitizer` field, or Rejected."""
    copy_gate(fingerprints)
    return sanitize_and_scan(workspace, env_dir, fingerprints, tracked_paths(snapshot_root),
                             sanitized=removed)

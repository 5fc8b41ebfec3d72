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

from collections.abc import Collection
from pathlib import Path
from typing import Any

from taskforge.errors import Rejected
from taskforge.languages.base import Runner, null_rejection
from taskforge.materialize import materialize
from taskforge.sanitize import Fingerprints, sanitize_and_scan, tracked_paths
from taskforge.workspace import scratch_dir

__all__ = ["collection_gate", "leak_scan_gate", "null_rejection", "scan_gate",
           "score_null_solution"]


def score_null_solution(workspace: Path, fail_to_pass: list[str],
                        runner: Runner) -> dict[str, int]:
    """How many FAIL_TO_PASS tests a trivial solution, in `workspace`, passes: the run stops
    at its first test that does not pass (that one already decides: no trivial solution), so
    `passed` counts those before it, as the screen's does."""
    run = runner.run(workspace, select=fail_to_pass, first_failure=True)
    if run.timed_out:
        # Cut off at verification's limit, it might still pass under a grader's longer one:
        # undecided, so no task (as the screen decides).
        raise Rejected("timeout", "a trivial solution hangs")
    return {"passed": len(run.passed() & set(fail_to_pass)), "of": len(fail_to_pass)}


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
                   fingerprints: Fingerprints, cache: Path, *,
                   also_remove: Collection[str] = ()) -> dict[str, Any]:
    """Materialize the deletion afresh, exactly as the agent gets it (`also_remove`: what the
    task's own scan removed), and scan it and `env_dir`: the record's `sanitizer` field, or
    Rejected (`leak:*`, `leak-scan-undecided`)."""
    with scratch_dir(cache, prefix="scan-") as scratch:
        workspace, removed = materialize(deletion_patch, snapshot_root, scratch / "workspace",
                                         also_remove=also_remove)
        return scan_gate(workspace, removed, snapshot_root, env_dir, fingerprints)


def scan_gate(workspace: Path, removed: dict[str, list[str]], snapshot_root: Path,
              env_dir: Path | None, fingerprints: Fingerprints) -> dict[str, Any]:
    """The leak scan of `workspace`, just materialized (`removed`: what that sanitized), and
    of `env_dir`: the record's `sanitizer` field, or Rejected."""
    return sanitize_and_scan(workspace, env_dir, fingerprints, tracked_paths(snapshot_root),
                             sanitized=removed)

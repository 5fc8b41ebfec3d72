"""The gates a task passes besides its labels, each in one place: `generate` runs them on a
candidate, `taskforge verify` runs them again on a record from scratch.

- trivial-solution: no `pass` or `return None` body where code was deleted may pass every
  FAIL_TO_PASS test;
- collection-breaks: a deletion must leave collection as it was (or, when the recipe allows
  it, the breaks are recorded as collateral);
- leak-scan: a fresh materialization, and the environment, hold no residue of the deleted
  code and nothing the scan cannot decide.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from taskforge.errors import Rejected
from taskforge.languages.python.testing.runner import run_tests
from taskforge.materialize import materialize_record
from taskforge.model import Environment
from taskforge.sandbox import Sandbox
from taskforge.sanitize import Fingerprints, sanitize_and_scan, tracked_paths
from taskforge.workspace import scratch_dir

# The trivial solutions, by the name `Strategy.apply(body=...)` knows them: the text each
# puts where the task has `raise NotImplementedError` (taskforge.languages.python.delete.syntax.BODIES).
NULL_BODIES = {"pass": "pass", "return-none": "return None"}
_STUB = re.compile(r"^(\+(?:.*[\s:])?)raise NotImplementedError$", re.MULTILINE)


def score_null_solution(workspace: Path, fail_to_pass: list[str], env: Environment,
                        sandbox: Sandbox, timeout: float) -> dict[str, int]:
    """How many FAIL_TO_PASS tests a trivial solution, in `workspace`, passes."""
    run = run_tests(env, workspace, sandbox, timeout=timeout, select=fail_to_pass)
    return {"passed": len(run.passed() & set(fail_to_pass)), "of": len(fail_to_pass)}


def null_rejection(null_solutions: Mapping[str, Mapping[str, int]]) -> Rejected | None:
    """The trivial-solution rejection, if a trivial body passes every FAIL_TO_PASS test."""
    for body, counts in null_solutions.items():
        if counts["of"] and counts["passed"] == counts["of"]:
            return Rejected("trivial-solution",
                            f"a `{NULL_BODIES[body]}` body passes every FAIL_TO_PASS test")
    return None


def with_null_body(deletion_patch: str, body: str) -> str:
    """A record's deletion with the trivial solution `body` where it puts its stubs: every
    line it adds that ends in `raise NotImplementedError` ends in the trivial body instead,
    which is what the strategy itself writes with `apply(body=...)` (only that statement
    differs between them)."""
    return _STUB.sub(lambda m: m.group(1) + NULL_BODIES[body], deletion_patch)


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


def leak_scan_gate(record: Mapping[str, Any], snapshot_root: Path, env_dir: Path | None,
                   fingerprints: Fingerprints, cache: Path) -> dict[str, Any]:
    """Materialize `record` afresh, exactly as the agent gets it, and scan it and `env_dir`:
    the record's `sanitizer` field, or Rejected (`leak:*`, `leak-scan-undecided`)."""
    with scratch_dir(cache, prefix="scan-") as scratch:
        workspace, removed = materialize_record(dict(record), snapshot_root,
                                                scratch / "workspace")
        return sanitize_and_scan(workspace, env_dir, fingerprints, tracked_paths(snapshot_root),
                                 sanitized=removed)

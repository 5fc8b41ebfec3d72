"""One candidate -> one verified task record, or a `Rejected` with the reason."""

from __future__ import annotations

import datetime as dt
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

from taskforge.cache import digest
from taskforge.delete import Strategy, TaskOptions
from taskforge.errors import Rejected
from taskforge.ingest import IngestedSource
from taskforge.materialize import materialize_record
from taskforge.model import Candidate
from taskforge.patches import diff_texts
from taskforge.sandbox import Sandbox
from taskforge.statement import problem_statement, quotes_body
from taskforge.verify import check_labels, label_tests
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
            "test_command": " ".join(spec.test_command), "pythonpath": list(source.env.pythonpath),
            "frozen": list(source.env.frozen), "key": source.env.key}


def deleted_lines(deletion_patch: str) -> list[str]:
    return [ln[1:] for ln in deletion_patch.splitlines()
            if ln.startswith("-") and not ln.startswith("---")]


def make_task(source: IngestedSource, strategy: Strategy, candidate: Candidate, *,
              options: TaskOptions, sandbox: Sandbox, cache: Path, repeats: int,
              timeout: float, recipe_sha256: str, seed: int) -> dict[str, Any]:
    if candidate.import_time:
        raise Rejected("runs-at-import", candidate.symbol)
    deletion = strategy.apply(source.project, candidate, options)
    originals = {p: source.project.text(p) for p in deletion.new_texts}
    deletion_patch = diff_texts({p: (originals[p], t) for p, t in deletion.new_texts.items()})
    patch = diff_texts({p: (t, originals[p]) for p, t in deletion.new_texts.items()})
    if not deletion_patch:
        raise Rejected("no-change", candidate.symbol)
    tests = list(candidate.covering_tests)
    with scratch_dir(cache, prefix="verify-") as scratch:
        workspace, removed = materialize_record({"deletion_patch": deletion_patch},
                                                source.snapshot.root, scratch / "workspace")
        labels = label_tests(workspace, patch, tests, source.env, sandbox,
                             repeats=repeats, timeout=timeout)
    check_labels(labels)
    fail_to_pass = labels.fail_to_pass
    pass_to_pass = sorted(set(source.baseline.stable) - set(fail_to_pass))
    statement = problem_statement(deletion.statement_facts, fail_to_pass)
    quoted = quotes_body(statement, deleted_lines(deletion_patch))
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
        "deletion_patch": deletion_patch,
        "patch": patch,
        "test_patch": "",
        "FAIL_TO_PASS": fail_to_pass,
        "PASS_TO_PASS": pass_to_pass,
        "problem_statement": statement,
        "environment": environment_record(source),
        "difficulty": {
            "lines_deleted": lines_deleted, "symbols": len(symbols),
            "files": len(deletion.new_texts), "fail_to_pass": len(fail_to_pass),
            "covering_tests": len(tests), "docstring_visible": options.keep_docstrings,
            "tests_visible": options.tests_visible,
        },
        "verification": {
            "mode": "targeted", "repeats": repeats, "tests_run": tests,
            "runs": labels.runs,
        },
        "sanitizer": {"artifacts_removed": removed, "fresh_git": True, "leak_scan": None},
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "generator": {"version": version("taskforge"), "recipe_sha256": recipe_sha256,
                      "seed": seed},
    }

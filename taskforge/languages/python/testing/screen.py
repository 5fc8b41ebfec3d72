"""The fast path: screen many candidates in one pytest process that forks a child per job.

Interpreter start, imports and collection are paid once per batch instead of once per
candidate. The screen may only reject: whatever it lets through is confirmed in a fresh
process on the task's real, materialized workspace (see `taskforge.taskmaker`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.python.testing.bytecode import seed_bytecode
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Environment, Outcome
from taskforge.sandbox import Sandbox
from taskforge.workspace import scratch_copy, scratch_dir

SCREEN_PLUGIN = "taskforge_screen"
BODIES = ("raise", "pass", "return-none", "original")


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
    # (id, body) of jobs the server runs next on the tests that failed in every run, in the
    # order of `order` (quickest first), each stopping at its first test that does not pass
    then: tuple[tuple[str, str], ...] = ()
    order: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScreenResult:
    runs: tuple[dict[str, Outcome], ...]
    unscreenable: str | None = None
    pytest_seconds: float = 0.0  # its part of the seconds pytest reports for the server
    wall_seconds: float = 0.0  # the job's time in the server, forks included

    @property
    def timed_out(self) -> bool:
        return self.unscreenable == "timeout"

    def failing_in_every_run(self) -> list[str]:
        tests = sorted(self.runs[0]) if self.runs else []
        return [t for t in tests if all(r.get(t) != "passed" for r in self.runs)]

    def unstable(self) -> list[str]:
        tests = sorted(self.runs[0]) if self.runs else []
        return [t for t in tests if len({r.get(t) == "passed" for r in self.runs}) > 1]


def screen(jobs: Sequence[ScreenJob], snapshot_root: Path, env: Environment, sandbox: Sandbox,
           cache: Path, *, timeout: float, bytecode: Path | None = None
           ) -> dict[str, ScreenResult]:
    """Run every job in one forking pytest process over a copy of the original tree (with
    the snapshot's `bytecode`, when given: see `taskforge.languages.python.testing.bytecode`)."""
    if not jobs:
        return {}
    with scratch_copy(snapshot_root, cache, prefix="screen-") as workspace, \
            scratch_dir(cache, prefix="screen-io-") as io:
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
        server = run_tests(env, workspace, sandbox, timeout=total, select=tests,
                  extra_args=["-p", SCREEN_PLUGIN],
                  extra_env={"TASKFORGE_SCREEN": str(jobs_file),
                             "TASKFORGE_SCREEN_OUT": str(out_file),
                             "TASKFORGE_SCREEN_TIMEOUT": str(timeout)},
                  writable=(io,))
        lines = out_file.read_text().splitlines() if out_file.exists() else []
    reported = [json.loads(line) for line in lines]
    # The seconds pytest reports for the server's session (as for any run: collection
    # included) are shared out: each job gets what its tests took in the children, plus an
    # equal part of the rest of the session (collecting, importing, forking).
    shared = max(0.0, server.pytest_seconds - sum(d.get("pytest_seconds", 0.0)
                                                  for d in reported)) / len(jobs)
    results: dict[str, ScreenResult] = {}
    for data in reported:
        results[data["id"]] = ScreenResult(runs=tuple(data["runs"]),
                                           unscreenable=data["unscreenable"],
                                           pytest_seconds=data.get("pytest_seconds", 0.0) + shared,
                                           wall_seconds=data.get("wall_seconds", 0.0))
    for job in jobs:  # a job the server never reported on (it crashed or timed out); its
        # follow-ups may rightly be missing: they run only on tests that failed
        results.setdefault(job.id, ScreenResult(runs=(), unscreenable="no result"))
    return results

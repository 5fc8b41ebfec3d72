"""Ingest: source -> snapshot -> environment -> baseline, each step cached.

A recipe's sources are ingested one by one; a source that fails (no snapshot, no
environment, a suite that hangs or has no passing test) or whose license the recipe does
not select is set aside with a one-line reason and the others go on.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git as gitpython

from taskforge.delete import PythonProject
from taskforge.env import build_environment, detect_spec
from taskforge.env.outputs import with_build_outputs
from taskforge.errors import UserError
from taskforge.gitcmd import GitError
from taskforge.model import Baseline, Environment, Snapshot, SourceSpec
from taskforge.sandbox import Sandbox
from taskforge.sources import ingest_source, source_notes
from taskforge.sources.license import license_allowed
from taskforge.testing.baseline import TEST_TIMEOUT, import_errors_line, run_baseline


@dataclass(frozen=True)
class IngestedSource:
    spec: SourceSpec
    snapshot: Snapshot
    env: Environment
    baseline: Baseline
    project: PythonProject
    notes: tuple[str, ...] = ()  # what fetching the source found (git: shallow/full, submodules)
    # Wall-clock seconds this run spent on each ingest stage: "ingest" (the snapshot),
    # "environment", "baseline" (near zero when the cache already held it).
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SetAside:
    """A source that gave no baseline, and why (one line)."""

    spec: SourceSpec
    reason: str
    snapshot: Snapshot | None = None

    def to_dict(self) -> dict[str, Any]:
        """The per-source entry of a run's summary and manifest."""
        snap = self.snapshot
        return {"name": snap.name if snap else self.spec.describe(),
                "source": snap.source if snap else self.spec.describe(),
                # Manifests merge per-source figures by snapshot; a source that never became
                # one still needs a key of its own.
                "snapshot": snap.id if snap else f"none:{self.spec.describe()}",
                "license": snap.license if snap else None, "failed": self.reason}


def ingest(spec: SourceSpec, *, cache: Path, base_dir: Path, sandbox: Sandbox, repeats: int,
           timeout: float, max_source_mb: float | None = None,
           log: Callable[[str], None] = lambda _m: None,
           test_timeout: float = TEST_TIMEOUT) -> IngestedSource:
    log(f"{spec.describe()}: snapshot")
    started = time.monotonic()
    snapshot = ingest_source(spec, cache, base_dir, max_source_mb)
    return _ingest_snapshot(spec, snapshot, cache=cache, sandbox=sandbox, repeats=repeats,
                            timeout=timeout, test_timeout=test_timeout, log=log,
                            snapshot_seconds=time.monotonic() - started)


def _ingest_snapshot(spec: SourceSpec, snapshot: Snapshot, *, cache: Path, sandbox: Sandbox,
                     repeats: int, timeout: float, test_timeout: float,
                     log: Callable[[str], None], snapshot_seconds: float) -> IngestedSource:
    log(f"{snapshot.name}: snapshot {snapshot.id[:12]} (commit {snapshot.commit[:12]}); "
        "environment")
    notes = tuple(source_notes(snapshot, cache))
    for note in notes:
        log(f"{snapshot.name}: {note}")
    started = time.monotonic()
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    built_at = time.monotonic()
    built: list[str] = []
    if env.outputs:
        # The tasks are made from the tree as the build leaves it (env/outputs.py).
        snapshot = with_build_outputs(snapshot, env, cache)
        built.append(f"build outputs added to the snapshot ({snapshot.id[:12]}): "
                     + ", ".join(env.outputs[:5]) + (" ..." if len(env.outputs) > 5 else ""))
    built += [f"build output left out: {note}" for note in env.build_notes]
    for note in built:
        log(f"{snapshot.name}: {note}")
    notes += tuple(built)
    log(f"{snapshot.name}: environment {env.key[:12]}; baseline ({max(2, repeats)} runs)")
    baseline = run_baseline(snapshot, env, sandbox, cache, repeats=repeats, timeout=timeout,
                            test_timeout=test_timeout)
    seconds = {"ingest": snapshot_seconds, "environment": built_at - started,
               "baseline": time.monotonic() - built_at}
    log(f"{snapshot.name}: {len(baseline.tests)} tests, {len(baseline.stable)} stable, "
        f"{len(baseline.flaky)} flaky (test map: {baseline.tracer})")
    if baseline.hung:
        log(f"{snapshot.name}: {hung_line(baseline.hung, test_timeout)}")
    if baseline.collection_errors:
        log(f"{snapshot.name}: {import_errors_line(baseline.collection_errors)}")
    project = PythonProject(snapshot.root, env.pythonpath)
    return IngestedSource(spec, snapshot, env, baseline, project, notes,
                          {stage: round(s, 3) for stage, s in seconds.items()})


def ingest_sources(specs: tuple[SourceSpec, ...], *, cache: Path, base_dir: Path,
                   sandbox: Sandbox, repeats: int, timeout: float,
                   licenses: tuple[str, ...] | None = None, max_source_mb: float | None = None,
                   log: Callable[[str], None] = lambda _m: None, need_one: bool = True,
                   min_stable_tests: int = 1, test_timeout: float = TEST_TIMEOUT,
                   ) -> tuple[list[IngestedSource], list[SetAside]]:
    """Ingest every source; the ones that fail are set aside with their reason.

    When every source fails a run has nothing to work on (`need_one`): the first reason is
    raised as a UserError, exactly as a single-source run reports it.
    """
    done: list[IngestedSource] = []
    aside: list[SetAside] = []
    for spec in specs:
        snapshot = None
        try:
            log(f"{spec.describe()}: snapshot")
            started = time.monotonic()
            snapshot = ingest_source(spec, cache, base_dir, max_source_mb)
            if licenses is not None and not license_allowed(snapshot.license, licenses):
                aside.append(SetAside(spec, f"license {snapshot.license or 'unknown'} is not in "
                                            f"select.licenses ({', '.join(licenses)})", snapshot))
                log(f"{snapshot.name}: set aside: {aside[-1].reason}")
                continue
            source = _ingest_snapshot(spec, snapshot, cache=cache, sandbox=sandbox,
                                      repeats=repeats, timeout=timeout,
                                      test_timeout=test_timeout, log=log,
                                      snapshot_seconds=time.monotonic() - started)
            if len(source.baseline.stable) < min_stable_tests:
                broken = source.baseline.collection_errors
                aside.append(SetAside(spec, f"{len(source.baseline.stable)} stable tests, fewer "
                                            f"than select.min_stable_tests ({min_stable_tests})"
                                            + (f"; {import_errors_line(broken)}" if broken else ""),
                                      snapshot))
                log(f"{snapshot.name}: set aside: {aside[-1].reason}")
                continue
            done.append(source)
        except UserError as e:
            aside.append(SetAside(spec, _without_source(str(e), spec, snapshot), snapshot))
            log(f"{spec.describe()}: set aside: {aside[-1].reason}")
        except SOURCE_FAILURES as e:
            # Not a message written for users, but still this source's failure alone (a
            # damaged cache entry, a tool that failed): named, and the run goes on.
            aside.append(SetAside(spec, f"{_failure_kind(e)}: {_one_line(str(e))}", snapshot))
            log(f"{spec.describe()}: set aside: {aside[-1].reason}")
    if need_one and not done and aside:
        first = aside[0]
        where = first.snapshot.source if first.snapshot else first.spec.describe()
        raise UserError(f"{where}: {first.reason}")
    return done, aside


# What else one source can raise that is its own failure, not taskforge's: git and
# gitpython errors, a tool that exits non-zero or hangs, a file that cannot be read.
SOURCE_FAILURES = (GitError, gitpython.exc.GitError, subprocess.SubprocessError, OSError)


def _failure_kind(error: BaseException) -> str:
    if isinstance(error, (GitError, gitpython.exc.GitError)):
        return f"git operation failed ({type(error).__name__})"
    if isinstance(error, subprocess.SubprocessError):
        return f"a command failed ({type(error).__name__})"
    return f"cannot read or write a file ({type(error).__name__})"


def _one_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "no message")[:300]


def hung_line(hung: tuple[str, ...], limit: float) -> str:
    """`1 test ran past 60s and is left out: tests/test_io.py::test_wait`."""
    many = len(hung) != 1
    return (f"{len(hung)} test{'s' if many else ''} ran past {limit:g}s and "
            f"{'are' if many else 'is'} left out: {', '.join(hung)}")


def _without_source(message: str, spec: SourceSpec, snapshot: Snapshot | None) -> str:
    """The reason alone: stage errors start with the source's name, the report shows it once."""
    for prefix in filter(None, (snapshot.source if snapshot else None, spec.describe(),
                                spec.location)):
        if message.startswith(f"{prefix}: "):
            return message[len(prefix) + 2:]
    return message


@dataclass(frozen=True)
class SourceReport:
    """One row of the ingest report of a recipe: what ingesting a source gave, and (with the
    output directory of a `generate` run) what became of its candidates."""

    name: str
    source: str
    license: str | None
    failed: str | None = None  # the one-line reason a source was set aside
    tests: int = 0
    stable: int = 0
    baseline_seconds: tuple[float, ...] = ()
    env_build_seconds: float = 0.0
    candidates: int = 0
    tried: int | None = None  # None: no generate output to read
    tasks: int | None = None
    decisions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    import_errors: dict[str, str] = field(default_factory=dict)  # test file -> its error
    hung: tuple[str, ...] = ()  # tests left out: each ran past the per-test limit

    @property
    def stable_share(self) -> float:
        return self.stable / self.tests if self.tests else 0.0

    @property
    def yield_share(self) -> float | None:
        return self.tasks / self.tried if self.tried else None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "license": self.license,
                "failed": self.failed, "tests": self.tests, "stable": self.stable,
                "stable_share": round(self.stable_share, 4),
                "baseline_seconds": list(self.baseline_seconds),
                "env_build_seconds": self.env_build_seconds, "candidates": self.candidates,
                "tried": self.tried, "tasks": self.tasks,
                "yield": None if self.yield_share is None else round(self.yield_share, 4),
                "decisions": list(self.decisions), "notes": list(self.notes),
                "import_errors": dict(self.import_errors), "hung": list(self.hung)}


def ingest_recipe(recipe_path: str | Path, *, cache: Path, sandbox: Sandbox,
                  out: Path | None = None, log: Callable[[str], None] = lambda _m: None,
                  ) -> list[SourceReport]:
    """Ingest every source of a recipe (cached: after `generate` this re-runs nothing) and
    count its candidates; with `out`, join the tried and emitted counts of that run."""
    from taskforge.delete import get_strategy
    from taskforge.recipe import load_recipe
    from taskforge.store.manifest import merge_manifests

    recipe = load_recipe(recipe_path)
    generated: dict[str, dict[str, Any]] = {}
    if out is not None:
        generated = {s["source"]: s for s in merge_manifests(out).get("sources", [])}
    done, aside = ingest_sources(recipe.sources, cache=cache, base_dir=Path.cwd(),
                                 sandbox=sandbox, repeats=recipe.verify.repeats,
                                 timeout=recipe.verify.timeout_s, licenses=recipe.licenses,
                                 max_source_mb=recipe.max_source_mb, log=log, need_one=False,
                                 min_stable_tests=recipe.min_stable_tests,
                                 test_timeout=recipe.verify.test_timeout_s)
    strategies = [get_strategy(name) for name in recipe.strategies]
    by_spec: dict[SourceSpec, SourceReport] = {}
    for src in done:
        found = sum(len(s.candidates(src.project, src.baseline, recipe.select)) for s in strategies)
        run = generated.get(src.snapshot.source)
        by_spec[src.spec] = SourceReport(
            name=src.snapshot.name, source=src.snapshot.source, license=src.snapshot.license,
            tests=len(src.baseline.tests), stable=len(src.baseline.stable),
            baseline_seconds=src.baseline.run_seconds, env_build_seconds=src.env.build_seconds,
            candidates=found, tried=run.get("tried") if run else None,
            tasks=run.get("emitted") if run else None, decisions=src.env.spec.decisions,
            notes=src.notes, import_errors=src.baseline.collection_errors,
            hung=src.baseline.hung)
    for entry in aside:
        row = entry.to_dict()
        by_spec[entry.spec] = SourceReport(name=row["name"], source=row["source"],
                                           license=row["license"], failed=entry.reason)
    return [by_spec[spec] for spec in recipe.sources if spec in by_spec]

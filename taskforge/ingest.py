"""Ingest: source -> snapshot -> environment -> baseline, each step cached.

A recipe's sources are ingested one by one, their baselines as jobs of the run's pool; a
source that fails (no snapshot, no environment, a suite that hangs or has no passing test) or
whose license the recipe does not select is set aside with a one-line reason and the others
go on.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git as gitpython

from taskforge.errors import UserError
from taskforge.executors.local import LocalExecutor
from taskforge.gitcmd import GitError
from taskforge.languages import Language, detect_language
from taskforge.languages.base import TEST_TIMEOUT, Runner, import_errors_line
from taskforge.languages.strategy import Project
from taskforge.model import Baseline, Environment, Snapshot, SourceSpec
from taskforge.recipe import Recipe, load_recipe
from taskforge.sandbox import Sandbox
from taskforge.sources import ingest_source, source_notes
from taskforge.sources.license import license_allowed


@dataclass(frozen=True)
class IngestedSource:
    spec: SourceSpec
    snapshot: Snapshot
    env: Environment
    baseline: Baseline
    project: Project
    language: Language
    notes: tuple[str, ...] = ()  # what fetching the source found (git: shallow/full, submodules)
    # Wall-clock seconds this run spent on each ingest stage: "ingest" (the snapshot),
    # "environment", "baseline" (near zero when the cache already held it); `generate` adds
    # "self_grade" (verify/self_grade.py).
    seconds: dict[str, float] = field(default_factory=dict)

    def cache_entries(self) -> tuple[Path, Path]:
        """The content-addressed cache directories a job on this source reads: the snapshot's
        and the environment's (what another machine must have at the same path)."""
        return self.snapshot.root.parent, self.env.venv.parent


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

    def error(self) -> UserError:
        """The run's error when no source is left: this one's reason, named as a single
        source's failure is."""
        where = self.snapshot.source if self.snapshot else self.spec.describe()
        return UserError(f"{where}: {self.reason}")


def ingest(spec: SourceSpec, *, cache: Path, base_dir: Path, sandbox: Sandbox, repeats: int,
           timeout: float, max_source_mb: float | None = None,
           log: Callable[[str], None] = lambda _m: None,
           test_timeout: float = TEST_TIMEOUT) -> IngestedSource:
    log(f"{spec.describe()}: snapshot")
    started = time.monotonic()
    snapshot = ingest_source(spec, cache, base_dir, max_source_mb, versioned_by_git)
    prepared = _environment(spec, snapshot, cache=cache, repeats=repeats, log=log,
                            snapshot_seconds=time.monotonic() - started)
    started = time.monotonic()
    runner = Runner(prepared.language, prepared.env, sandbox, timeout, cache=cache)
    baseline = prepared.language.baseline(prepared.snapshot, runner, repeats=repeats,
                                          test_timeout=test_timeout)
    return _ingested(prepared, baseline, time.monotonic() - started, log, test_timeout)


def versioned_by_git(root: Path) -> bool:
    """Whether the snapshot's language says its build reads its version from git."""
    try:
        return detect_language(root, str(root)).versioned_by_git(root)
    except UserError:  # no language: the environment step says so, with the source's name
        return False


@dataclass(frozen=True)
class _Prepared:
    """What this machine makes of a source before its baseline: snapshot (with the build's
    outputs) and environment."""

    spec: SourceSpec
    snapshot: Snapshot
    env: Environment
    language: Language
    notes: tuple[str, ...]
    seconds: dict[str, float]  # "ingest" (the snapshot), "environment"


def _environment(spec: SourceSpec, snapshot: Snapshot, *, cache: Path, repeats: int,
                 log: Callable[[str], None], snapshot_seconds: float) -> _Prepared:
    log(f"{snapshot.name}: snapshot {snapshot.id[:12]} (commit {snapshot.commit[:12]}); "
        "environment")
    notes = tuple(source_notes(snapshot, cache))
    for note in notes:
        log(f"{snapshot.name}: {note}")
    started = time.monotonic()
    language = detect_language(snapshot.root, snapshot.source)
    prepared = language.prepare(spec, snapshot, cache, log)
    snapshot, env = prepared.snapshot, prepared.env
    for note in prepared.notes:
        log(f"{snapshot.name}: {note}")
    seconds = {"ingest": snapshot_seconds, "environment": time.monotonic() - started}
    log(f"{snapshot.name}: {language.name} environment {env.key[:12]}; "
        f"baseline ({max(2, repeats)} runs)")
    return _Prepared(spec, snapshot, env, language, notes + prepared.notes, seconds)


def _ingested(prepared: _Prepared, baseline: Baseline, baseline_seconds: float,
              log: Callable[[str], None], test_timeout: float) -> IngestedSource:
    snapshot, env = prepared.snapshot, prepared.env
    alone = baseline.isolated_seconds
    missed = f", {baseline.isolated_unmeasured} not measured alone" \
        if baseline.isolated_unmeasured else ""
    spent = f"; each test alone: {alone:.1f}s of {sum(baseline.run_seconds) + alone:.1f}s" \
        f"{missed}" if alone else ""
    log(f"{snapshot.name}: {len(baseline.tests)} tests, {len(baseline.stable)} stable, "
        f"{len(baseline.flaky)} flaky (test map: {baseline.tracer}{spent})")
    if baseline.hung:
        log(f"{snapshot.name}: {hung_line(baseline.hung, test_timeout)}")
    if baseline.collection_errors:
        log(f"{snapshot.name}: {import_errors_line(baseline.collection_errors)}")
    project = prepared.language.project(snapshot, env)
    seconds = {**prepared.seconds, "baseline": baseline_seconds}
    return IngestedSource(prepared.spec, snapshot, env, baseline, project, prepared.language,
                          prepared.notes, {stage: round(s, 3) for stage, s in seconds.items()})


def ingest_sources(specs: tuple[SourceSpec, ...], *, cache: Path, base_dir: Path,
                   sandbox: Sandbox, repeats: int, timeout: float,
                   licenses: tuple[str, ...] | None = None, max_source_mb: float | None = None,
                   log: Callable[[str], None] = lambda _m: None, need_one: bool = True,
                   min_stable_tests: int = 1, test_timeout: float = TEST_TIMEOUT,
                   pool: Any = None) -> tuple[list[IngestedSource], list[SetAside]]:
    """Ingest every source; the ones that fail are set aside with their reason.

    Snapshots and environments are made here, one source after another (a source path is on
    this machine). The baselines not cached yet, which run each suite several times, are jobs
    of `pool` (Ray tasks with `--executor ray`), every source's at once.

    When every source fails a run has nothing to work on (`need_one`): the first reason is
    raised as a UserError, exactly as a single-source run reports it.
    """
    outcomes: dict[int, IngestedSource | SetAside] = {}
    ready: list[tuple[int, _Prepared]] = []

    def runner(prepared: _Prepared) -> Runner:
        """How the source's baseline runs: `timeout` for each whole-suite run."""
        return Runner(prepared.language, prepared.env, sandbox, timeout, cache=cache)

    def finish(index: int, prepared: _Prepared, baseline: Baseline, seconds: float) -> None:
        stable = len(baseline.stable)
        if stable < min_stable_tests:
            broken = baseline.collection_errors
            outcomes[index] = _set_aside(
                prepared.spec, f"{stable} stable tests, fewer than select.min_stable_tests "
                f"({min_stable_tests})" + (f"; {import_errors_line(broken)}" if broken else ""),
                prepared.snapshot, log, who=prepared.snapshot.name)
        else:
            outcomes[index] = _ingested(prepared, baseline, seconds, log, test_timeout)

    for index, spec in enumerate(specs):
        snapshot = None
        try:
            log(f"{spec.describe()}: snapshot")
            started = time.monotonic()
            snapshot = ingest_source(spec, cache, base_dir, max_source_mb, versioned_by_git)
            if licenses is not None and not license_allowed(snapshot.license, licenses):
                outcomes[index] = _set_aside(spec, f"license {snapshot.license or 'unknown'} is "
                                             f"not in select.licenses ({', '.join(licenses)})",
                                             snapshot, log, who=snapshot.name)
                continue
            prepared = _environment(spec, snapshot, cache=cache, repeats=repeats, log=log,
                                    snapshot_seconds=time.monotonic() - started)
            # Cached here: no job (a node with a cache of its own would run it again).
            started = time.monotonic()
            cached = prepared.language.cached_baseline(prepared.snapshot, runner(prepared),
                                                       repeats=repeats, test_timeout=test_timeout)
            if cached is not None:
                finish(index, prepared, cached, time.monotonic() - started)
            else:
                ready.append((index, prepared))
        except UserError as e:
            outcomes[index] = _set_aside(spec, _without_source(str(e), spec, snapshot), snapshot,
                                         log)
        except SOURCE_FAILURES as e:
            # Not a message written for users, but still this source's failure alone (a
            # damaged cache entry, a tool that failed): named, and the run goes on.
            outcomes[index] = _set_aside(spec, source_failure(e), snapshot, log)

    def baseline_job(item: tuple[int, _Prepared]) -> tuple[Baseline | str, float]:
        prepared = item[1]
        started = time.monotonic()
        try:
            baseline: Baseline | str = prepared.language.baseline(
                prepared.snapshot, runner(prepared), repeats=repeats, test_timeout=test_timeout)
        except UserError as e:  # the source is set aside; the other baselines go on
            baseline = _without_source(str(e), prepared.spec, prepared.snapshot)
        except SOURCE_FAILURES as e:
            baseline = source_failure(e)
        return baseline, time.monotonic() - started

    needs = [entry for _i, prepared in ready
             for entry in (prepared.snapshot.root.parent, prepared.env.venv.parent)]
    for (index, prepared), (baseline, seconds) in (pool or LocalExecutor(1)).map_unordered(
            baseline_job, ready, needs=needs):
        if isinstance(baseline, str):
            outcomes[index] = _set_aside(specs[index], baseline, prepared.snapshot, log)
        else:
            prepared.language.keep_baseline(cache, baseline)
            finish(index, prepared, baseline, seconds)
    done = [o for _i, o in sorted(outcomes.items()) if isinstance(o, IngestedSource)]
    aside = [o for _i, o in sorted(outcomes.items()) if isinstance(o, SetAside)]
    if need_one and not done and aside:
        raise aside[0].error()
    return done, aside


def ingest_recipe_sources(recipe: Recipe, *, cache: Path, sandbox: Sandbox,
                          log: Callable[[str], None], pool: Any = None,
                          need_one: bool = True) -> tuple[list[IngestedSource], list[SetAside]]:
    """`ingest_sources` with everything the recipe says about ingesting (its sources,
    repeats, time limits, licenses, size limit, stable tests), relative to the working
    directory."""
    return ingest_sources(recipe.sources, cache=cache, base_dir=Path.cwd(), sandbox=sandbox,
                          repeats=recipe.verify.repeats, timeout=recipe.verify.timeout_s,
                          licenses=recipe.licenses, max_source_mb=recipe.max_source_mb,
                          log=log, need_one=need_one, min_stable_tests=recipe.min_stable_tests,
                          test_timeout=recipe.verify.test_timeout_s, pool=pool)


def _set_aside(spec: SourceSpec, reason: str, snapshot: Snapshot | None,
               log: Callable[[str], None], who: str | None = None) -> SetAside:
    log(f"{who or spec.describe()}: set aside: {reason}")
    return SetAside(spec, reason, snapshot)


# What else one source can raise that is its own failure, not taskforge's: git and
# gitpython errors, a tool that exits non-zero or hangs, a file that cannot be read.
SOURCE_FAILURES = (GitError, gitpython.exc.GitError, subprocess.SubprocessError, OSError)


def source_failure(error: BaseException) -> str:
    """One line for a failure of the source's own (SOURCE_FAILURES), not a user's mistake."""
    if isinstance(error, (GitError, gitpython.exc.GitError)):
        kind = f"git operation failed ({type(error).__name__})"
    elif isinstance(error, subprocess.SubprocessError):
        kind = f"a command failed ({type(error).__name__})"
    else:
        kind = f"cannot read or write a file ({type(error).__name__})"
    return f"{kind}: {_one_line(str(error))}"


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
    # the baseline's run with every test alone (Python): its seconds, the tests it missed
    alone_seconds: float = 0.0
    alone_unmeasured: int = 0

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
                "import_errors": dict(self.import_errors), "hung": list(self.hung),
                "alone_seconds": self.alone_seconds, "alone_unmeasured": self.alone_unmeasured}


def ingest_recipe(recipe_path: str | Path, *, cache: Path, sandbox: Sandbox,
                  out: Path | None = None, log: Callable[[str], None] = lambda _m: None,
                  ) -> list[SourceReport]:
    """Ingest every source of a recipe (cached: after `generate` this re-runs nothing) and
    count its candidates; with `out`, join the tried and emitted counts of that run."""
    from taskforge.store.manifest import merge_manifests

    recipe = load_recipe(recipe_path)
    generated: dict[str, dict[str, Any]] = {}
    if out is not None:
        generated = {s["source"]: s for s in merge_manifests(out).get("sources", [])}
    done, aside = ingest_recipe_sources(recipe, cache=cache, sandbox=sandbox, log=log,
                                        need_one=False)
    by_spec: dict[SourceSpec, SourceReport] = {}
    for src in done:
        strategies = [s for name in recipe.strategies if (s := src.language.strategy(name))]
        found = sum(len(s.candidates(src.project, src.baseline, recipe.select)) for s in strategies)
        run = generated.get(src.snapshot.source)
        by_spec[src.spec] = SourceReport(
            name=src.snapshot.name, source=src.snapshot.source, license=src.snapshot.license,
            tests=len(src.baseline.tests), stable=len(src.baseline.stable),
            baseline_seconds=src.baseline.run_seconds, env_build_seconds=src.env.build_seconds,
            candidates=found, tried=run.get("tried") if run else None,
            tasks=run.get("emitted") if run else None, decisions=src.env.spec.decisions,
            notes=src.notes, import_errors=src.baseline.collection_errors,
            hung=src.baseline.hung, alone_seconds=src.baseline.isolated_seconds,
            alone_unmeasured=src.baseline.isolated_unmeasured)
    for entry in aside:
        row = entry.to_dict()
        by_spec[entry.spec] = SourceReport(name=row["name"], source=row["source"],
                                           license=row["license"], failed=entry.reason)
    return [by_spec[spec] for spec in recipe.sources if spec in by_spec]

"""Ingest: source -> snapshot -> environment -> baseline, each step cached."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from taskforge.delete import PythonProject
from taskforge.env import build_environment, detect_spec
from taskforge.model import Baseline, Environment, Snapshot, SourceSpec
from taskforge.sandbox import Sandbox
from taskforge.sources import ingest_source
from taskforge.testing.baseline import run_baseline


@dataclass(frozen=True)
class IngestedSource:
    spec: SourceSpec
    snapshot: Snapshot
    env: Environment
    baseline: Baseline
    project: PythonProject


def ingest(spec: SourceSpec, *, cache: Path, base_dir: Path, sandbox: Sandbox, repeats: int,
           timeout: float, log: Callable[[str], None] = lambda _m: None) -> IngestedSource:
    log(f"{spec.describe()}: snapshot")
    snapshot = ingest_source(spec, cache, base_dir)
    log(f"{snapshot.name}: snapshot {snapshot.id[:12]} (commit {snapshot.commit[:12]}); "
        "environment")
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    log(f"{snapshot.name}: environment {env.key[:12]}; baseline ({max(2, repeats)} runs)")
    baseline = run_baseline(snapshot, env, sandbox, cache, repeats=repeats, timeout=timeout)
    log(f"{snapshot.name}: {len(baseline.tests)} tests, {len(baseline.stable)} stable, "
        f"{len(baseline.flaky)} flaky")
    project = PythonProject(snapshot.root, env.pythonpath)
    return IngestedSource(spec, snapshot, env, baseline, project)

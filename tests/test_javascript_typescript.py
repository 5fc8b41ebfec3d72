"""TypeScript end to end on sample_repos/tsdemo (vitest 4, vite 8, installed from the npm
registry with the project's lockfile): per-test coverage mapped back through vite's source
maps, records that say `typescript`, stubs that keep the types, and grading that scores the
reference 1 and the untouched workspace 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, apply_patch, write_recipe

import taskforge

pytestmark = pytest.mark.slow


def test_typescript_tasks_verify_and_grade(tf_cache: Path, tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: tsdemo
        seed: 0
        sources:
          - path: {REPO_ROOT / "sample_repos" / "tsdemo"}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 2}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)
    summary = taskforge.generate(str(recipe), out=str(tmp_path / "out"), workers=2)
    tasks = taskforge.load_tasks(str(tmp_path / "out"))
    assert len(tasks) == 2, summary
    baseline = next(data for b in (tf_cache / "baselines").glob("*.json")
                    if (data := json.loads(b.read_text()))["tracer"] == "v8"
                    and any(t.startswith("test/cache.test.ts::") for t in data["tests"]))
    # LRUCache.peek's body (src/cache.ts:66), mapped back from vite's output: one test ran it
    peek = baseline["coverage"]["src/cache.ts"]["66"]
    assert [baseline["tests"][i] for i in peek] == [
        "test/cache.test.ts::LRUCache > peek neither refreshes nor counts"]
    for i, task in enumerate(tasks):
        record = task.record
        assert record["language"] == "typescript"
        assert record["environment"]["test_command"] == "vitest"
        assert all(t.startswith("test/") and ".test.ts::" in t for t in record["FAIL_TO_PASS"])
        assert record["sanitizer"]["leak_scan"]["clean"]
        assert "```typescript" in record["problem_statement"]
        # the stub keeps the signature's types
        added = [ln for ln in record["deletion_patch"].splitlines() if ln.startswith("+ ")]
        assert any('throw new Error("not implemented");' in ln for ln in added)
        workspace = task.materialize(tmp_path / f"ws{i}")
        assert task.grade(workspace, sandbox="bwrap").reward == 0.0
        apply_patch(workspace, record["patch"])
        reference = task.grade(workspace, sandbox="bwrap")
        assert (reference.reward, reference.tampered) == (1.0, ()), reference


@pytest.mark.parametrize("name", ["bwrap", "docker"])
def test_vitest_runs_in_each_sandbox(name: str, tf_cache: Path, tmp_path: Path) -> None:
    from test_sandbox import require

    from taskforge.languages import language_named
    from taskforge.model import SourceSpec
    from taskforge.sources import ingest_source

    root = REPO_ROOT / "sample_repos" / "tsdemo"
    spec = SourceSpec(kind="path", location=str(root))
    ts = language_named("typescript")
    snapshot = ingest_source(spec, tf_cache, REPO_ROOT)
    env = ts.prepare(spec, snapshot, tf_cache, lambda _m: None).env
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = ts.run_tests(env, workspace, require(name), timeout=300)
    assert len(run.outcomes) == 70 and set(run.outcomes.values()) == {"passed"}, run.log_tail
    assert not (workspace / "node_modules").exists()  # vite's files went with the run's links

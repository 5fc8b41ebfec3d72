"""JavaScript end to end on sample_repos/jsdemo: generate gives verified tasks (fail before,
pass with the reference, trivial bodies rejected, leak scan clean), `taskforge verify`
agrees, grading scores the reference 1 and the untouched workspace 0, and the leak scan finds
a source map or a built copy of the deleted function planted in a workspace."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, run_cli
from js_tasks import STRATEGIES, generated, stub_function_recipe

import taskforge
from taskforge.languages.javascript import JavaScriptLanguage
from taskforge.verify import confirm

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def js_out(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated(tmp_path_factory)


@pytest.fixture(scope="module")
def js_tasks(js_out: Path) -> taskforge.TaskSet:
    return taskforge.load_tasks(str(js_out))


def records(out: Path) -> list[dict]:
    return [json.loads(line) for shard in sorted(out.glob("tasks-*.jsonl"))
            for line in shard.read_text().splitlines()]


def test_generate_gives_verified_javascript_tasks(js_out: Path) -> None:
    found = records(js_out)
    assert len(found) >= 6
    assert {r["strategy"] for r in found} == set(STRATEGIES)
    for record in found:
        assert record["language"] == "javascript"
        assert record["FAIL_TO_PASS"] and not set(record["FAIL_TO_PASS"]) & \
            set(record["PASS_TO_PASS"])
        assert all(re.fullmatch(r"test/\w+\.test\.js::.+", t) for t in record["FAIL_TO_PASS"])
        nulls = record["verification"]["null_solutions"]
        assert set(nulls) == set(JavaScriptLanguage.null_bodies.values())
        assert all(c["passed"] < c["of"] for c in nulls.values())
        assert record["sanitizer"]["leak_scan"]["clean"]
        assert record["sanitizer"]["leak_scan"]["scanned"] == ["workspace", "environment"]
        assert "throw new Error(\"not implemented\")" in record["deletion_patch"] or \
            record["strategy"] in ("remove-function", "remove-method")
        assert record["environment"]["test_command"] == "node-test"
        assert "```javascript" in record["problem_statement"] or \
            record["strategy"] == "remove-method"


def test_verify_rechecks_every_gate(js_out: Path, tmp_path: Path) -> None:
    proc = run_cli("verify", str(js_out), "--sandbox", "bwrap", cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_grading_the_reference_and_the_untouched_workspace(js_tasks: taskforge.TaskSet,
                                                           tmp_path: Path) -> None:
    for i, task in enumerate(js_tasks):
        workspace = task.materialize(tmp_path / f"ws{i}")
        untouched = task.grade(workspace, sandbox="bwrap")
        assert untouched.reward == 0.0 and not untouched.tampered, untouched
        apply_patch(workspace, task.record["patch"])
        reference = task.grade(workspace, sandbox="bwrap")
        assert reference.reward == 1.0 and reference.resolved, reference
        assert reference.tampered == ()


def _stub_task(js_tasks: taskforge.TaskSet) -> taskforge.Task:
    return next(t for t in js_tasks if t.record["strategy"] == "stub-function")


def test_a_planted_source_map_is_found(js_tasks: taskforge.TaskSet, tmp_path: Path,
                                       js_out: Path) -> None:
    task = _stub_task(js_tasks)
    path = task.record["deleted"][0]["path"]
    workspace = task.materialize(tmp_path / "ws")
    clean = run_cli("scan", str(js_out), task.record["instance_id"], str(workspace),
                    cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the control: nothing yet
    original = (task.snapshot_root() / path).read_text()
    source_map = {"version": 3, "file": "app.min.js", "sources": [f"../{path}"],
                  "sourcesContent": [original], "names": [], "mappings": "AAAA"}
    (workspace / "public").mkdir()
    (workspace / "public" / "app.min.js.map").write_text(json.dumps(source_map))
    found = run_cli("scan", str(js_out), task.record["instance_id"], str(workspace),
                    cwd=tmp_path)
    assert found.returncode == 1 and "public/app.min.js.map" in found.stdout, found.stdout


def test_a_planted_built_copy_is_found(js_tasks: taskforge.TaskSet, tmp_path: Path,
                                       js_out: Path) -> None:
    task = _stub_task(js_tasks)
    path = task.record["deleted"][0]["path"]
    workspace = task.materialize(tmp_path / "ws")
    original = (task.snapshot_root() / path).read_text()
    # a bundler's output: comments gone and every run of whitespace one space
    bundled = re.sub(r"\s+", " ", re.sub(r"/\*.*?\*/|//[^\n]*", "", original, flags=re.S))
    (workspace / "vendor").mkdir()
    (workspace / "vendor" / "bundle.js").write_text(f"(function(){{{bundled}}})();\n")
    found = run_cli("scan", str(js_out), task.record["instance_id"], str(workspace),
                    cwd=tmp_path)
    assert found.returncode == 1 and "vendor/bundle.js" in found.stdout, found.stdout


# A package whose only source sits in a `lib/` that looks compiled (a source map beside it):
# the leak scan, whose task tree leaves such a `lib/` out, finds the stubbed file's own names
# in it and would remove it.
MAPPED = {
    "package.json": '{"name": "mapped", "type": "module", "scripts": {"test": "node --test"}}',
    "lib/calc.js": """\
        const SCALE = 10;

        export function scaled(value) {
          const base = Number(value);
          const result = base * SCALE;
          return Math.round(result);
        }

        export function offset(value) {
          return scaled(value) + SCALE;
        }
        """,
    "lib/calc.js.map": '{"version":3,"sources":["../src/calc.ts"],"mappings":""}\n',
    "test/calc.test.js": """\
        import { test } from 'node:test';
        import assert from 'node:assert/strict';
        import { offset, scaled } from '../lib/calc.js';

        test('scales', () => { assert.equal(scaled(2), 20); });
        test('scales strings', () => { assert.equal(scaled('3'), 30); });
        test('offsets', () => { assert.equal(offset(1), 20); });
        """,
}


def test_a_scan_removing_the_edited_file_rejects_the_candidate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path, MAPPED, name="mapped")
    recipe = stub_function_recipe(tmp_path, root)
    taskforge.generate(str(recipe), out=str(tmp_path / "out"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["rejections"] == {"leak:in-edited-file": 1}
    assert not list(taskforge.load_tasks(str(tmp_path / "out")))
    # The control: without the gate the task is emitted, its workspace lacks lib/calc.js,
    # and re-verification fails it (session 66 found such a task among fastify-plugin's).
    monkeypatch.setattr(confirm, "edited_files_gate", lambda *_args: None)
    taskforge.generate(str(recipe), out=str(tmp_path / "unchecked"))
    (task,) = taskforge.load_tasks(str(tmp_path / "unchecked"))
    assert not (task.materialize(tmp_path / "ws") / "lib" / "calc.js").exists()
    proc = run_cli("verify", str(tmp_path / "unchecked"), "--sandbox", "bwrap", cwd=tmp_path)
    assert proc.returncode == 1 and "patch-does-not-apply" in proc.stdout, proc.stdout

"""`taskforge export`: SWE-bench JSONL and Harbor task directories from a real task directory.

The Harbor verifier and oracle are run for real (outside a container, with the task's own
environment on PATH): the untouched workspace scores 0, the reference solution 1, and edited
tests or an added conftest.py do not help.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import apply_patch, run_cli, stderr_lines
from test_shards import sample_output

import taskforge
from taskforge.store.written import EXPORT_MARKER, SWEBENCH_KEY, export_dir_format

# Exports of a real generate run, graded as Harbor would:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

SWEBENCH_FIELDS = {"instance_id", "repo", "base_commit", "patch", "test_patch",
                   "problem_statement", "hints_text", "created_at", "version", "FAIL_TO_PASS",
                   "PASS_TO_PASS", "environment_setup_commit"}


@pytest.fixture(scope="module")
def out(tf_cache: Path) -> Path:
    return sample_output(tf_cache)


@pytest.fixture(scope="module")
def harbor(out: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("harbor") / "tasks"
    # The images are built and run in docker by test_export_images.py.
    proc = run_cli("export", str(out), "--format", "harbor", "--no-images", "--out", str(dest),
                   cwd=dest.parent)
    assert proc.returncode == 0, proc.stderr
    return dest


def test_swebench_instances_have_the_fields_and_string_test_lists(out: Path, tmp_path: Path) -> None:
    dest = tmp_path / "swebench.jsonl"
    proc = run_cli("export", str(out), "--format", "swebench", "--out", str(dest), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    instances = [json.loads(line) for line in dest.read_text().splitlines()]
    tasks = taskforge.load_tasks(out)
    assert [i["instance_id"] for i in instances] == [t.instance_id for t in tasks]
    for instance, task in zip(instances, tasks, strict=True):
        # deletion_patch, and the mark that keeps an export out of later snapshots
        assert set(instance) == SWEBENCH_FIELDS | {"deletion_patch", SWEBENCH_KEY}
        assert all(isinstance(instance[k], str) for k in SWEBENCH_FIELDS)
        assert json.loads(instance["FAIL_TO_PASS"]) == task.record["FAIL_TO_PASS"]
        assert json.loads(instance["PASS_TO_PASS"]) == task.record["PASS_TO_PASS"]
        assert instance["base_commit"] == instance["environment_setup_commit"]
    # The start state is base_commit plus deletion_patch; the gold patch undoes it exactly.
    task = tasks[0]
    tree = tmp_path / "tree"
    shutil.copytree(task.snapshot_root(), tree)
    original = {p: p.read_bytes() for p in tree.rglob("*.py")}
    apply_patch(tree, instances[0]["deletion_patch"])
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} != original
    apply_patch(tree, instances[0]["patch"])
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == original


def test_harbor_task_layout(out: Path, harbor: Path) -> None:
    tasks = taskforge.load_tasks(out)
    # A task directory per task, and the mark that keeps the export out of later snapshots
    assert sorted(p.name for p in harbor.iterdir()) == [EXPORT_MARKER] + [t.instance_id for t in tasks]
    assert export_dir_format(harbor) == "harbor"
    for task in tasks:
        root = harbor / task.instance_id
        for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh",
                    "solution/solve.sh"):
            assert (root / rel).is_file(), rel
        assert os.access(root / "tests/test.sh", os.X_OK) and os.access(root / "solution/solve.sh", os.X_OK)
        assert task.record["problem_statement"].strip() in (root / "instruction.md").read_text()
        config = tomllib.loads((root / "task.toml").read_text())
        assert config["version"] == "1.0"
        assert config["metadata"]["instance_id"] == task.instance_id
        assert config["verifier"]["timeout_sec"] > 0 and config["agent"]["timeout_sec"] > 0
        assert config["environment"]["cpus"] >= 1
        dockerfile = (root / "environment/Dockerfile").read_text()
        assert f"\nFROM taskforge-task-env:{task.record['environment']['key'][:16]}\n" in dockerfile
        assert "COPY workspace/ /app/" in dockerfile
        # The build context holds the sanitized task workspace, never the deleted code.
        deleted = task.record["deleted"][0]
        assert "NotImplementedError" in (root / "environment/workspace" / deleted["path"]).read_text()
        assert not (root / "tests/original" / deleted["path"]).exists()


def run_verifier(root: Path, app: Path, logs: Path, task: taskforge.Task) -> str:
    path = f"{task.environment().venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
    proc = subprocess.run([str(root / "tests/test.sh")], capture_output=True, text=True,
                          env={**os.environ, "PATH": path, "TASKFORGE_APP": str(app),
                               "TASKFORGE_LOGS": str(logs)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return (logs / "reward.txt").read_text().strip()


def test_harbor_verifier_scores_the_start_zero_and_the_oracle_one(out: Path, harbor: Path,
                                                                  tmp_path: Path) -> None:
    task = taskforge.load_tasks(out)[0]
    root = harbor / task.instance_id
    app = tmp_path / "app"
    shutil.copytree(root / "environment/workspace", app)
    assert run_verifier(root, app, tmp_path / "logs0", task) == "0"

    # Cheating: every test file emptied of assertions, and a conftest.py that passes all.
    for test_id in task.record["FAIL_TO_PASS"]:
        test_file = app / test_id.split("::")[0]
        test_file.write_text("def test_nothing():\n    pass\n")
    (app / "conftest.py").write_text(
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n")
    assert run_verifier(root, app, tmp_path / "logs1", task) == "0"
    assert not (app / "conftest.py").exists() or \
        (root / "tests/original/conftest.py").exists()

    proc = subprocess.run([str(root / "solution/solve.sh")], capture_output=True, text=True,
                          env={**os.environ, "TASKFORGE_APP": str(app)})
    assert proc.returncode == 0, proc.stderr
    assert run_verifier(root, app, tmp_path / "logs2", task) == "1"


def test_export_refuses_a_shard_changed_after_its_manifest(out: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    shard = next(copy.glob("tasks-*.jsonl"))
    shard.write_text(shard.read_text().splitlines()[0] + "\n")
    proc = run_cli("export", str(copy), "--format", "swebench", "--out",
                   str(tmp_path / "x.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2
    [line] = stderr_lines(proc)
    assert line.startswith(f"taskforge: error: {shard}: sha256 differs")
    assert not (tmp_path / "x.jsonl").exists()


def test_harbor_export_refuses_a_non_empty_destination(out: Path, tmp_path: Path) -> None:
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "keep.txt").write_text("mine")
    proc = run_cli("export", str(out), "--format", "harbor", "--out", str(tmp_path / "dest"),
                   cwd=tmp_path)
    assert proc.returncode == 2
    assert stderr_lines(proc) == [f"taskforge: error: --out {tmp_path / 'dest'}: exists and is "
                                  "not an empty directory; pass --force to replace it"]

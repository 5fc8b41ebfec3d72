"""Exports that carry their environment: Harbor tasks and task images built and run in docker
with no registry, on a machine that first lacks the images (they come from the export's
`docker save` archive).

Each Harbor task is run as Harbor runs it: its environment built from its Dockerfile, the
verifier's `tests/` and the oracle's `solution/` mounted, no network. The untouched workspace
scores 0 and the reference 1. Docker missing is a skip here and a failure under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, stderr_lines
from test_shards import sample_output

import taskforge
from taskforge.sandbox import why_unavailable
from taskforge.task_images import env_tag, task_tag

pytestmark = pytest.mark.slow


def docker(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def out(tf_cache: Path) -> Path:
    why = why_unavailable("docker")
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"docker must run under CI: {why}")
        pytest.skip(f"docker not available here: {why}")
    return sample_output(tf_cache)


def forget(tag: str) -> None:
    """This machine no longer has `tag` (the image stays if another tag names it)."""
    docker("rmi", tag)
    assert docker("image", "inspect", tag).returncode != 0


def run_harbor(image: str, task_root: Path, logs: Path, command: str) -> str:
    """`command` in a container of `image` with Harbor's mounts; the reward it wrote."""
    logs.mkdir(parents=True)
    proc = docker("run", "--rm", "--network", "none",
                  "-v", f"{task_root / 'tests'}:/tests:ro",
                  "-v", f"{task_root / 'solution'}:/solution:ro",
                  "-v", f"{logs}:/logs/verifier", image, "bash", "-c", command)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return (logs / "reward.txt").read_text().strip()


def test_harbor_tasks_build_offline_from_the_saved_images_and_grade(out: Path,
                                                                    tmp_path: Path) -> None:
    dest = tmp_path / "harbor"
    proc = run_cli("export", str(out), "--format", "harbor", "--out", str(dest), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tasks = taskforge.load_tasks(out)
    tags = {env_tag(task) for task in tasks}
    assert len(tags) == 2  # two sources, two environments
    archive = dest / "images" / "environments.tar"
    assert archive.is_file()

    # Another machine: none of the environment images; the Dockerfile cannot build...
    for tag in tags:
        forget(tag)
    task = tasks[0]
    root = dest / task.instance_id
    assert f"FROM {env_tag(task)}\n" in (root / "environment/Dockerfile").read_text()
    failed = docker("build", "-q", "-t", "tf-harbor-test", str(root / "environment"))
    assert failed.returncode != 0
    # ...until the export's archive is loaded.
    loaded = docker("load", "-i", str(archive))
    assert loaded.returncode == 0, loaded.stderr
    assert all(tag in loaded.stdout for tag in tags)

    for task in tasks:
        root = dest / task.instance_id
        built = docker("build", "-q", "-t", "tf-harbor-test", str(root / "environment"))
        assert built.returncode == 0, built.stderr
        logs = tmp_path / "logs" / task.instance_id
        assert run_harbor("tf-harbor-test", root, logs / "untouched", "/tests/test.sh") == "0"
        assert run_harbor("tf-harbor-test", root, logs / "oracle",
                          "/solution/solve.sh && /tests/test.sh") == "1"
        # The agent's container has git and the workspace's own repository.
        status = docker("run", "--rm", "--network", "none", "tf-harbor-test", "git", "status",
                        "--short")
        assert status.returncode == 0, status.stderr
    docker("rmi", "tf-harbor-test")


def test_task_images_carry_the_workspace_not_the_answer(out: Path, tmp_path: Path) -> None:
    dest = tmp_path / "images"
    proc = run_cli("export", str(out), "--format", "docker-image", "--out", str(dest),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tasks = taskforge.load_tasks(out)
    rows = [json.loads(line) for line in (dest / "images.jsonl").read_text().splitlines()]
    assert [row["instance_id"] for row in rows] == [t.instance_id for t in tasks]
    assert [row["image"] for row in rows] == [task_tag(t) for t in tasks]
    for row in rows:
        forget(row["image"])
    loaded = docker("load", "-i", str(dest / "images.tar"))
    assert loaded.returncode == 0, loaded.stderr

    # Graded with the Harbor verifier of the same task: the image is its environment.
    harbor = tmp_path / "harbor"
    assert run_cli("export", str(out), "--format", "harbor", "--no-images", "--out",
                   str(harbor), cwd=tmp_path).returncode == 0
    for task, row in zip(tasks, rows, strict=True):
        deleted = task.record["deleted"][0]
        shown = docker("run", "--rm", "--network", "none", row["image"], "cat",
                       f"{row['workdir']}/{deleted['path']}")
        assert shown.returncode == 0, shown.stderr
        assert "NotImplementedError" in shown.stdout  # the stub, as the agent gets it
        listing = docker("run", "--rm", "--network", "none", row["image"], "ls", "/")
        assert not {"tests", "solution"} & set(listing.stdout.split())
        root = harbor / task.instance_id
        logs = tmp_path / "logs" / task.instance_id
        assert run_harbor(row["image"], root, logs / "untouched", "/tests/test.sh") == "0"
        assert run_harbor(row["image"], root, logs / "oracle",
                          "/solution/solve.sh && /tests/test.sh") == "1"
        docker("rmi", row["image"])


def test_an_export_without_docker_is_one_line_and_leaves_nothing(out: Path,
                                                                 tmp_path: Path) -> None:
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    for fmt in ("harbor", "docker-image"):
        dest = tmp_path / fmt
        proc = run_cli("export", str(out), "--format", fmt, "--out", str(dest), cwd=tmp_path,
                       env=env)
        assert proc.returncode == 2
        [line] = stderr_lines(proc)
        assert line.startswith("taskforge: error: docker images for the export: "), line
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    # --no-images needs no daemon: the Dockerfiles name the images another machine loads.
    proc = run_cli("export", str(out), "--format", "harbor", "--no-images", "--out",
                   str(tmp_path / "harbor"), cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "harbor" / "images").exists()

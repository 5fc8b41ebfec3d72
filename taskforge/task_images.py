"""Docker images that carry a task's environment to another machine (used by `export`).

A task's environment image is the sandbox's environment image (taskforge's own base, the
environment's interpreter when the base lacks it, the virtual environment at
`images.CANONICAL_VENV`; see sandbox/images.py), built here from the task's recorded spec and
tagged `taskforge-task-env:<environment key>`: a name that depends only on the record, so a
Dockerfile can say `FROM` it on any machine. No registry is involved: the image is written to
a file with `docker save`, and another machine runs `docker load` on it.

The environment holds the test dependencies only (the project is imported from the
workspace, never installed), so the image holds nothing of the deleted code.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from taskforge.errors import UserError
from taskforge.sandbox.base import Mounts, SandboxUnavailable
from taskforge.sandbox.images import LABEL_TASK
from taskforge.tasks import Task

ENV_REPOSITORY = "taskforge-task-env"
TASK_REPOSITORY = "taskforge-task"
VENV_BIN = "/opt/taskforge/venv/bin"


def docker_client() -> Any:
    """A client of a daemon that answers, or one line saying why there is none."""
    import docker

    from taskforge.sandbox.docker import DockerSandbox

    why = DockerSandbox.why_unavailable()
    if why:
        raise UserError(f"docker images for the export: {why}")
    return docker.from_env(timeout=600)


def env_tag(task: Task) -> str:
    return f"{ENV_REPOSITORY}:{task.record['environment']['key'][:16]}"


def task_tag(task: Task) -> str:
    """A valid docker tag for the task (at most 128 characters of [A-Za-z0-9_.-])."""
    return f"{TASK_REPOSITORY}:{re.sub(r'[^A-Za-z0-9_.-]', '-', task.instance_id)[:128]}"


def ensure_env_image(client: Any, task: Task) -> str:
    """`env_tag(task)`, built here first if needed (the environment too, from its spec)."""
    from taskforge.sandbox.docker import DockerSandbox

    env = task.environment()
    box = DockerSandbox()
    try:
        image_id, _mounts, _moved = box.image_for(Mounts(readonly=(env.venv,)))
    except SandboxUnavailable as e:
        raise UserError(f"{task.instance_id}: cannot build its environment image: {e}") from None
    repository, tag = env_tag(task).split(":")
    client.images.get(image_id).tag(repository, tag)
    return env_tag(task)


def build_task_image(client: Any, task: Task, context: Path) -> str:
    """`task_tag(task)` built from `context` (a Harbor task's environment directory)."""
    import docker.errors

    try:
        client.images.build(path=str(context), tag=task_tag(task), rm=True, forcerm=True,
                            network_mode="none", labels={LABEL_TASK: task.instance_id})
    except (docker.errors.BuildError, docker.errors.APIError) as e:
        raise UserError(f"{task.instance_id}: docker build of its image failed: {e}") from None
    return task_tag(task)


def save_images(tags: Iterable[str], dest: Path) -> None:
    """`docker save` of `tags` into one archive at `dest`, layers they share stored once (the
    SDK saves one image per archive, hence the CLI, which talks to the same daemon); written
    beside and renamed, so an interrupted save leaves no archive."""
    if shutil.which("docker") is None:
        raise UserError("docker images for the export: the docker command is not installed")
    partial = dest.with_name(dest.name + ".partial")
    try:
        proc = subprocess.run(["docker", "save", "-o", str(partial), *tags],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise UserError(f"{dest}: docker save failed: {' '.join(proc.stderr.split())}")
        partial.chmod(0o644)  # docker save writes it private
        partial.replace(dest)
    finally:
        partial.unlink(missing_ok=True)

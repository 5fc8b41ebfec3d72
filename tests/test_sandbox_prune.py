"""`taskforge sandbox prune --images` with real docker: the images taskforge built go, and
every other image stays, including the ones built on taskforge's (they inherit its labels).

Pruning removes every taskforge image of a daemon, which would pull the base image from under
every other test and run on this machine; so the CLI prunes a private daemon of its own (a
second dockerd with its own data root and socket, no network), given taskforge's base image
with `docker save | docker load` from the machine's daemon. Docker missing is a skip here and
a failure under CI.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from taskforge.sandbox import why_unavailable
from taskforge.sandbox.images import LABEL_TASK, ensure_env_image, ensure_image, find_base_image

# A daemon started and given a 250 MB image: not in the quick loop.
pytestmark = pytest.mark.slow


def _unavailable() -> str | None:
    why = why_unavailable("docker")
    if why is None and shutil.which("dockerd") is None:
        why = "no dockerd to start a private daemon with (apt-get install docker.io)"
    if why is None and os.geteuid() != 0:
        why = "starting a private docker daemon needs root"
    return why


@pytest.fixture(scope="module")
def private_docker() -> Iterator[str]:
    """The socket URL of a private docker daemon that has taskforge's base image."""
    why = _unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"docker must run under CI: {why}")
        pytest.skip(f"docker not available here: {why}")
    import docker

    machine = docker.from_env()
    base = machine.images.get(ensure_image(machine))  # .ci/run built it (`sandbox prepare`)
    # A short path: a unix socket's is at most 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="taskforge-dockerd-"))
    url = f"unix://{root / 'docker.sock'}"
    (root / "daemon.json").write_text("{}\n")  # not the machine's configuration
    log = (root / "dockerd.log").open("w")
    daemon = subprocess.Popen(
        ["dockerd", "--config-file", str(root / "daemon.json"), "--data-root", str(root / "data"),
         "--exec-root", str(root / "exec"), "--pidfile", str(root / "docker.pid"), "-H", url,
         "--bridge", "none", "--iptables=false", "--ip-masq=false"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                docker.DockerClient(base_url=url).version()
                break
            except docker.errors.DockerException:
                assert daemon.poll() is None and time.monotonic() < deadline, \
                    (root / "dockerd.log").read_text()[-3000:]
                time.sleep(0.5)
        name = base.tags[0] if base.tags else base.id  # by its tag, which the load keeps
        moved = subprocess.run(["bash", "-o", "pipefail", "-c",
                                f"docker save {shlex.quote(name)} | "
                                f"docker -H {shlex.quote(url)} load -q"],
                               capture_output=True, text=True, timeout=600)
        assert moved.returncode == 0, moved.stderr
        yield url
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def tiny_venv(path: Path) -> Path:
    """A real virtual environment of a few kilobytes: an environment image of it is cheap."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path


def build_on(client: Any, parent: str, tag: str, labels: dict[str, str] | None = None) -> str:
    """`FROM parent` plus one file, built as a user (or `export --format docker-image`) does."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in (("Dockerfile", f"FROM {parent}\nCOPY note.txt /app/\n".encode()),
                           ("note.txt", tag.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    image, _log = client.images.build(fileobj=context, custom_context=True, tag=tag,
                                      labels=labels or {}, rm=True, forcerm=True)
    return image.id


def imported(client: Any, tag: str) -> str:
    """An image that owes taskforge nothing: one file, `docker import`ed, no labels."""
    rootfs = io.BytesIO()
    with tarfile.open(fileobj=rootfs, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"hello\n"))
    repository, name = tag.split(":")
    client.api.import_image_from_data(rootfs.getvalue(), repository=repository, tag=name)
    return client.images.get(tag).id


def prune(url: str, cwd: Path) -> str:
    proc = run_cli("sandbox", "prune", "--images", cwd=cwd, env={"DOCKER_HOST": url})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_prune_images_removes_what_taskforge_built_and_nothing_built_on_it(
        private_docker: str, tmp_path: Path) -> None:
    import docker

    client = docker.DockerClient(base_url=private_docker)
    base = find_base_image(client)
    assert base is not None
    alone = ensure_env_image(client, base, tiny_venv(tmp_path / "venv-alone"))
    under = ensure_env_image(client, base, tiny_venv(tmp_path / "venv-under"))
    built_on = {
        # an exported task's image (`export --format docker-image`)
        "task": build_on(client, under, "taskforge-task:t1", {LABEL_TASK: "t1"}),
        # a user's build of a Harbor task's environment (`FROM taskforge-task-env:...`)
        "harbor": build_on(client, under, "my-harbor-run:latest"),
        # a user's image on the base
        "mine": build_on(client, base, "my-from-base:latest"),
    }
    foreign = imported(client, "my-own:latest")
    # Looked up again, taskforge's own images are found, never the newer ones built on them
    # (which carry the same labels and which the daemon lists first).
    assert ensure_env_image(client, base, tmp_path / "venv-under") == under
    assert find_base_image(client) == base

    def here() -> set[str]:
        return {image.id for image in client.images.list()}

    assert here() == {base, alone, under, foreign, *built_on.values()}
    assert prune(private_docker, tmp_path).startswith("removed 0 containers, 1 images")
    # The lone environment image went; an image with children stays, as docker keeps it.
    assert here() == {base, under, foreign, *built_on.values()}

    for image in built_on.values():  # the user removes what they built on taskforge's
        client.images.remove(image)
    assert prune(private_docker, tmp_path).startswith("removed 0 containers, 2 images")
    assert here() == {foreign}

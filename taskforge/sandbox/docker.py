"""Docker: each command in a fresh container of taskforge's own base image (Docker SDK).

What the command gets:
- `network_mode="none"`: a loopback of its own and nothing else;
- the environment image of its virtual environment (the base image plus the venv at its host
  path, built once per environment; see images.py), its root file system read-only, and a
  private /tmp (tmpfs); the workspace and the writable mounts read-write and the other
  read-only mounts (the plugin dir) read-only, each at its host path, so argv and environment
  need no translation;
  nothing else of the host (no home, no docker socket);
- the invoking user's uid:gid (so files it writes in the workspace belong to that user); when
  that is root, root without any capability (`cap_drop=ALL`, `no-new-privileges`);
- cgroup limits on memory (no swap) and process count, RLIMIT_DATA for a clean MemoryError,
  docker's init as pid 1, so the container ends, daemons included, when the command does;
- labels (`taskforge.sandbox`), and removal in every case: normal exit, timeout (the SDK's
  `wait(timeout=)` raises, so the container is killed here), error or Ctrl-C.

A container start costs ~0.15 s here (measured by bench/sandbox_overhead.py), small beside
a pytest run, so each command gets a fresh container: nothing survives between runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from taskforge.sandbox import images
from taskforge.sandbox.base import ExecResult, Limits, Mounts, Sandbox, SandboxUnavailable
from taskforge.sandbox.layout import SYSTEM_PREFIXES, binds_for, interpreter_prefixes

OUTPUT_TAIL = 20_000


def _client(timeout: int = 60) -> Any:
    import docker

    return docker.from_env(timeout=timeout)


class DockerSandbox(Sandbox):
    name = "docker"
    _checked: bool | None = None
    _why: str | None = None

    def __init__(self, limits: Limits | None = None, image: str | None = None) -> None:
        self.limits = limits or Limits.from_env()
        self.image_name = image
        self._image: str | None = None
        self._identity: str | None = None
        self._docker: Any = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:  # picklable for process/ray executors: no live client
        return {"limits": self.limits, "image_name": self.image_name}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["limits"], state["image_name"])  # type: ignore[misc]

    @classmethod
    def available(cls) -> bool:
        """A daemon answers, and an image is here or can be built (checked once per process)."""
        if cls._checked is None:
            cls._why = cls.why_unavailable()
            cls._checked = cls._why is None
        return cls._checked

    @staticmethod
    def why_unavailable() -> str | None:
        try:
            import docker  # noqa: F401
        except ImportError:
            return "the docker Python package is not installed"
        try:
            client = _client(timeout=5)
            client.ping()
        except Exception as e:  # any failure to reach the daemon means: not available
            return f"no docker daemon answers: {e}"
        try:
            if os.environ.get(images.IMAGE_ENV) or images.find_base_image(client):
                return None
        except Exception as e:
            return f"docker daemon error: {e}"
        return images.can_build()

    # ---- set-up -------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        with self._lock:
            if self._docker is None:
                try:
                    self._docker = _client()
                except Exception as e:
                    raise SandboxUnavailable(f"docker: {e}") from None
            return self._docker

    def image(self) -> str:
        """The image id commands run in (the base image is built on first use if needed)."""
        if self._image is None:
            self._image = images.ensure_image(self.client, self.image_name)
        return self._image

    def identity(self) -> str:
        # An image named by the user is its id. Taskforge's base image is what it is built
        # from (its spec's key: suite, architecture, packages), so every Ray node that
        # builds its own finds the baselines another node kept. Once per sandbox: the spec
        # asks dpkg, and a task's verification asks for the identity more than once.
        if self._identity is None:
            named = self.image_name or os.environ.get(images.IMAGE_ENV)
            self._identity = f"{self.name}:{self.image()}" if named \
                else f"{self.name}:base-{images.base_spec().key}"
        return self._identity

    def image_for(self, mounts: Mounts | None) -> tuple[str, Mounts | None, dict[str, str]]:
        """The image a command runs in, the mounts it still needs, and the host paths to
        rewrite in its argv and environment. A virtual environment among the read-only
        mounts is baked into an environment image (built once per environment) at a
        canonical path instead of being bound from the host."""
        base = self.image()
        # only environments taskforge built: their build record keys the image, so a rebuilt
        # environment gets a new one; any other venv (which may change) is bound as it is
        venvs = [p for p in (mounts.readonly if mounts else ())
                 if (p / "pyvenv.cfg").is_file() and (p.parent / "environment.json").is_file()]
        if mounts is None or len(venvs) != 1:
            return base, mounts, {}
        venv = venvs[0]
        outside = [p for p in interpreter_prefixes(venv) if p not in SYSTEM_PREFIXES]
        image = images.ensure_env_image(self.client, base, venv, outside[0] if outside else None)
        rest = Mounts(readonly=tuple(p for p in mounts.readonly if p != venv),
                      writable=mounts.writable)
        return image, rest, {os.path.abspath(venv): str(images.CANONICAL_VENV)}

    def paths_inside(self, mounts: Mounts | None) -> dict[str, str]:
        return self.image_for(mounts)[2]

    def container_options(self, argv: Sequence[str], *, workspace: Path,
                          env: Mapping[str, str], mounts: Mounts | None) -> dict[str, Any]:
        from docker.types import LogConfig, Mount, Ulimit

        image, mounts, moved = self.image_for(mounts)
        binds = binds_for(workspace, mounts, skip_system=True)

        def translate(text: str) -> str:
            for host, inside in moved.items():
                text = text.replace(host, inside)
            return text

        uid, gid = os.getuid(), os.getgid()
        memory = self.limits.memory_bytes
        return dict(
            image=image,
            # stderr into stdout at the file-descriptor level: one stream, in the order written
            command=["/bin/sh", "-c", 'exec "$@" 2>&1', "taskforge", *map(translate, argv)],
            working_dir=os.path.abspath(workspace),
            environment={k: translate(v) for k, v in env.items()},
            user=f"{uid}:{gid}",
            network_mode="none",
            mounts=[Mount(target=str(b.target), source=str(b.source), type="bind",
                          read_only=not b.writable) for b in binds],
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={self.limits.tmp_bytes},mode=1777"},
            shm_size=min(self.limits.tmp_bytes, 256 << 20),
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=self.limits.pids,
            ulimits=[Ulimit(name="data", soft=memory, hard=memory),
                     Ulimit(name="core", soft=0, hard=0)],
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            init=True,
            hostname="sandbox",
            # only the tail is read back: a suite printing gigabytes fills no disk
            log_config=LogConfig(type=LogConfig.types.JSON, config={"max-size": "1m", "max-file": "2"}),
            labels={images.LABEL_CONTAINER: "1", "taskforge.pid": str(os.getpid())},
            name=f"taskforge-{uuid.uuid4().hex[:12]}",
            detach=True,
            stdin_open=False,
            tty=False,
        )

    # ---- running ------------------------------------------------------------------------

    def exec(self, argv: Sequence[str], *, workspace: Path, env: Mapping[str, str],
             timeout: float, mounts: Mounts | None = None) -> ExecResult:
        import docker.errors
        import requests.exceptions

        options = self.container_options(argv, workspace=workspace, env=env, mounts=mounts)
        start = time.monotonic()
        container = None
        timed_out = False
        try:
            try:
                container = self.client.containers.create(**options)
                container.start()
            except docker.errors.APIError as e:
                raise SandboxUnavailable(f"docker could not start the command: "
                                         f"{e.explanation or e}") from None
            try:
                status = container.wait(timeout=max(timeout, 0.001))
                exit_code = int(status.get("StatusCode", -1))
            except requests.exceptions.RequestException:  # the SDK's way to say: timed out
                timed_out = True
                with contextlib.suppress(docker.errors.APIError):
                    container.kill()
                with contextlib.suppress(requests.exceptions.RequestException):
                    container.wait(timeout=60)
                exit_code = -signal.SIGKILL
            duration = time.monotonic() - start
            try:
                output = container.logs(stdout=True, stderr=True, tail=2000).decode(
                    errors="replace")
            except docker.errors.APIError as e:  # removed under us (a prune, a daemon restart)
                raise SandboxUnavailable(f"docker: the container vanished: "
                                         f"{e.explanation or e}") from None
            if not timed_out and exit_code == 137:
                container.reload()
                if container.attrs.get("State", {}).get("OOMKilled"):
                    output += "\ntaskforge: sandbox 'docker': killed at the memory limit\n"
        finally:
            if container is not None:
                with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                    container.remove(force=True)
        return ExecResult(exit_code=exit_code, output=output[-OUTPUT_TAIL:], duration_s=duration,
                          timed_out=timed_out)


def prune(images_too: bool = False) -> dict[str, int]:
    """Remove leftover taskforge containers (and base images with `images_too`)."""
    return images.prune(_client(), images=images_too)

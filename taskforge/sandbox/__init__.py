"""Sandboxes by name. `auto` picks the strongest backend available here."""

from __future__ import annotations

import os

from taskforge.errors import UserError
from taskforge.sandbox.base import ExecResult, Limits, Mounts, Sandbox, SandboxUnavailable
from taskforge.sandbox.bwrap import BwrapSandbox
from taskforge.sandbox.docker import DockerSandbox
from taskforge.sandbox.none import NoSandbox

# Strongest first: `auto` takes the first that is available.
BACKENDS: dict[str, type[Sandbox]] = {"docker": DockerSandbox, "bwrap": BwrapSandbox,
                                      "none": NoSandbox}
NAMES = ("auto", "none", "bwrap", "docker")


def get_sandbox(name: str) -> Sandbox:
    """The backend called `name`; `auto` is TASKFORGE_SANDBOX when set, else the strongest here."""
    if name == "auto" and os.environ.get("TASKFORGE_SANDBOX", "auto") != "auto":
        name = os.environ["TASKFORGE_SANDBOX"]
    if name == "auto":
        for backend in BACKENDS.values():
            if backend.available():
                return backend()
    if name not in NAMES:
        raise UserError(f"sandbox {name!r}: unknown; choose one of {', '.join(NAMES)}")
    backend = BACKENDS.get(name)
    if backend is None or not backend.available():
        raise UserError(f"sandbox {name!r}: not available on this machine"
                        + (f" ({why})" if (why := why_unavailable(name)) else ""))
    return backend()


def why_unavailable(name: str) -> str | None:
    """Why a backend cannot run here, or None when it can."""
    backend = BACKENDS.get(name)
    if backend is None:
        return f"unknown sandbox {name!r}"
    probe = getattr(backend, "why_unavailable", None)
    if probe is not None:
        return probe()
    return None if backend.available() else "not available"


def status() -> dict[str, str | None]:
    """Each backend's name -> None when it can run here, else why not (for `sandbox check`)."""
    return {name: why_unavailable(name) for name in BACKENDS}


def prune(*, images: bool = False) -> dict[str, int]:
    """Remove what crashed runs left behind (docker containers; base images with `images`).
    Returns counts; a machine without docker has nothing to prune."""
    if not _docker_answers():
        return {"containers": 0, "images": 0}
    from taskforge.sandbox.docker import prune as docker_prune

    return docker_prune(images_too=images)


def _docker_answers() -> bool:
    try:
        from taskforge.sandbox.docker import _client

        return bool(_client(timeout=5).ping())
    except Exception:
        return False


__all__ = ["BACKENDS", "NAMES", "ExecResult", "Limits", "Mounts", "Sandbox", "SandboxUnavailable",
           "get_sandbox", "prune", "status", "why_unavailable"]

"""Sandboxes by name. `auto` picks the strongest backend available here."""

from __future__ import annotations

from taskforge.errors import UserError
from taskforge.sandbox.base import ExecResult, Mounts, Sandbox, SandboxUnavailable
from taskforge.sandbox.none import NoSandbox

# Strongest first: `auto` takes the first that is available. bwrap and docker join here.
BACKENDS: dict[str, type[Sandbox]] = {"none": NoSandbox}
NAMES = ("auto", "none", "bwrap", "docker")


def get_sandbox(name: str) -> Sandbox:
    if name == "auto":
        for backend in BACKENDS.values():
            if backend.available():
                return backend()
    if name not in NAMES:
        raise UserError(f"sandbox {name!r}: unknown; choose one of {', '.join(NAMES)}")
    backend = BACKENDS.get(name)
    if backend is None or not backend.available():
        raise UserError(f"sandbox {name!r}: not available on this machine")
    return backend()


__all__ = ["ExecResult", "Mounts", "Sandbox", "SandboxUnavailable", "get_sandbox"]

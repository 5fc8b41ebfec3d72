"""Executors by name: where candidate jobs run (`local` threads, or `ray` tasks past one machine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskforge.errors import UserError
from taskforge.executors.local import LocalExecutor


def get_executor(name: str, workers: int, address: str | None = None, *, sandbox: str = "none",
                 cache: Path | None = None) -> Any:
    """A LocalExecutor or a RayExecutor (same interface: `workers`, `map_unordered`, `close`)."""
    if name == "local":
        if address:
            raise UserError(f"--ray-address {address} needs --executor ray")
        return LocalExecutor(workers)
    if name == "ray":
        from taskforge.executors.ray import RayExecutor  # Ray is an optional extra

        return RayExecutor(workers, address, sandbox=sandbox, cache=cache)
    raise UserError(f"unknown executor {name!r}; choose local or ray")


__all__ = ["LocalExecutor", "get_executor"]

"""Executors by name: where candidate jobs run. `ray` joins for users who outgrow one machine."""

from __future__ import annotations

from taskforge.errors import UserError
from taskforge.executors.local import LocalExecutor


def get_executor(name: str, workers: int, address: str | None = None) -> LocalExecutor:
    if name == "local":
        return LocalExecutor(workers)
    if name == "ray":
        raise UserError("executor 'ray' is not available yet; use --executor local")
    raise UserError(f"unknown executor {name!r}; choose local or ray")


__all__ = ["LocalExecutor", "get_executor"]

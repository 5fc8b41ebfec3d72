"""One interface for running untrusted commands: `exec` in a workspace, with a timeout.

A non-zero exit code is data (`ExecResult`), not an exception. Backends differ only in how
well they contain the command; every stage that runs tests goes through this interface.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    output: str  # stdout and stderr interleaved, truncated to the tail
    duration_s: float
    timed_out: bool


class SandboxUnavailable(Exception):
    """The backend cannot run on this machine (not installed, daemon not answering)."""


@dataclass(frozen=True)
class Mounts:
    """What a command may see besides the workspace: read-only inputs and writable outputs."""

    readonly: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()


class Sandbox(abc.ABC):
    name: ClassVar[str]

    @classmethod
    @abc.abstractmethod
    def available(cls) -> bool:
        """Whether this backend can run here."""

    @abc.abstractmethod
    def exec(self, argv: Sequence[str], *, workspace: Path, env: Mapping[str, str],
             timeout: float, mounts: Mounts | None = None) -> ExecResult:
        """Run `argv` with `workspace` as the working directory; never raises for exit codes."""

"""One interface for running untrusted commands: `exec` in a workspace, with a timeout.

A non-zero exit code is data (`ExecResult`), not an exception. Backends differ only in how
well they contain the command; every stage that runs tests goes through this interface.
"""

from __future__ import annotations

import abc
import os
import re
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


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`4g`, `512m`, `1048576` -> bytes (powers of 1024)."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"not a size: {text!r} (use e.g. 4g, 512m)")
    number, unit = match.groups()
    return int(float(number) * 1024 ** " kmgt".index(unit.lower() or " "))


@dataclass(frozen=True)
class Limits:
    """What one command may use. Contained backends enforce all of it; `none` ignores it.

    Defaults can be changed per machine with TASKFORGE_SANDBOX_MEMORY (e.g. `8g`),
    TASKFORGE_SANDBOX_PIDS and TASKFORGE_SANDBOX_TMP (the private /tmp's size).
    """

    memory_bytes: int = 4 << 30  # address space written to (RLIMIT_DATA) and cgroup memory
    pids: int = 1024  # processes and threads
    tmp_bytes: int = 1 << 30  # the private /tmp (memory-backed)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        environ = os.environ if environ is None else environ
        default = cls()
        return cls(
            memory_bytes=parse_size(environ.get("TASKFORGE_SANDBOX_MEMORY") or str(default.memory_bytes)),
            pids=int(environ.get("TASKFORGE_SANDBOX_PIDS") or default.pids),
            tmp_bytes=parse_size(environ.get("TASKFORGE_SANDBOX_TMP") or str(default.tmp_bytes)),
        )


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

    def identity(self) -> str:
        """What the outcomes of commands run here depend on besides their own inputs, for the
        keys of what is kept from runs (baselines, bytecode, self-grading): the backend's
        name; one whose commands run in an image adds the image (a test that runs `less`
        passes in one image and fails in another built without it)."""
        return self.name

    def paths_inside(self, mounts: Mounts | None) -> dict[str, str]:
        """Host paths a command with `mounts` sees elsewhere, and where: `exec` rewrites them
        in its argv and environment, and so must anyone handing such a command more work
        from inside (a warm run's job). Most backends mount everything where it is."""
        return {}

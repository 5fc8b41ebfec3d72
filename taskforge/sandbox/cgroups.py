"""A throwaway cgroup per command: a memory and a process-count limit, and a sure kill.

bwrap has no resource limits of its own. Rlimits cover one process each, and RLIMIT_NPROC
does not apply to processes whose real uid is host root (which is what bwrap run by root
leaves, even behind `--uid`), so where the cgroup filesystem is writable each command runs
in its own cgroup: `pids.max` stops a fork bomb, the memory limit bounds the whole tree,
and killing every member of the group at the end leaves nothing behind.

Works with cgroup v1 (one hierarchy per controller) and v2 (one unified hierarchy) when the
controllers can be used from where taskforge runs; otherwise `create` returns None and the
caller falls back to rlimits.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("pids", "memory")


@dataclass(frozen=True)
class Cgroup:
    dirs: tuple[Path, ...]  # one per hierarchy the command joins

    def wrap(self, argv: list[str]) -> list[str]:
        """argv that joins the cgroup(s) first, then execs argv: no child escapes the move."""
        joins = " && ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "taskforge-cgroup", *argv]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (d / "cgroup.procs").read_text().split()}
        return found

    def oom_killed(self) -> bool:
        for d in self.dirs:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                with contextlib.suppress(OSError, ValueError):
                    for line in (d / name).read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k == key and int(v) > 0:
                            return True
        return False

    def kill_all(self) -> None:
        """SIGKILL every member until none is left (a fork bomb may race the first pass)."""
        for d in self.dirs:
            with contextlib.suppress(OSError):
                (d / "cgroup.kill").write_text("1")
        deadline = time.monotonic() + 5
        while (members := self.pids()) and time.monotonic() < deadline:
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # members still exiting
                    time.sleep(0.02)


def _own_paths() -> tuple[dict[str, str], str | None]:
    """This process's cgroup per v1 controller, and its v2 path."""
    v1: dict[str, str] = {}
    v2: str | None = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":
                v2 = path
            for c in controllers.split(","):
                v1[c] = path
    return v1, v2


def _mounts() -> tuple[dict[str, Path], Path | None]:
    """Mount points of the v1 hierarchies per controller, and of the v2 hierarchy."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(fields) < 5 or len(rfields) < 3:
                continue
            if rfields[0] == "cgroup2" and v2 is None:
                v2 = Path(fields[4])
            elif rfields[0] == "cgroup":
                for option in rfields[2].split(","):
                    if option in CONTROLLERS:
                        v1.setdefault(option, Path(fields[4]))
    return v1, v2


def _mkdir(parent: Path, name: str) -> Path | None:
    path = parent / name
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def create(memory_bytes: int, pids: int) -> Cgroup | None:
    """A fresh cgroup with both limits, or None when this machine does not let us make one."""
    name = f"taskforge-{uuid.uuid4().hex[:12]}"
    own_v1, own_v2 = _own_paths()
    mounts_v1, mount_v2 = _mounts()
    made: list[Path] = []
    limited: set[str] = set()
    # cgroup v1: one directory per controller, beside wherever this process already is.
    if set(CONTROLLERS) <= set(mounts_v1):
        for controller in CONTROLLERS:
            parent = mounts_v1[controller] / own_v1.get(controller, "/").lstrip("/")
            d = _mkdir(parent, name)
            if d is None:
                break
            made.append(d)
            if controller == "pids" and _write(d / "pids.max", str(pids)):
                limited.add("pids")
            if controller == "memory" and _write(d / "memory.limit_in_bytes", str(memory_bytes)):
                _write(d / "memory.memsw.limit_in_bytes", str(memory_bytes))
                limited.add("memory")
    # cgroup v2: controllers must be enabled in the parent's subtree_control.
    elif mount_v2 is not None and own_v2 is not None:
        parent = mount_v2 / own_v2.lstrip("/")
        with contextlib.suppress(OSError):
            available = set((parent / "cgroup.controllers").read_text().split())
            enabled = set((parent / "cgroup.subtree_control").read_text().split())
            missing = set(CONTROLLERS) - enabled
            if set(CONTROLLERS) <= available and (
                    not missing or _write(parent / "cgroup.subtree_control",
                                          " ".join(f"+{c}" for c in sorted(missing)))):
                d = _mkdir(parent, name)
                if d is not None:
                    made.append(d)
                    if _write(d / "pids.max", str(pids)):
                        limited.add("pids")
                    if _write(d / "memory.max", str(memory_bytes)):
                        _write(d / "memory.swap.max", "0")
                        limited.add("memory")
    group = Cgroup(tuple(made))
    if limited != set(CONTROLLERS):
        group.remove()
        return None
    return group


_usable: bool | None = None


def usable() -> bool:
    """Whether `create` works here (checked once per process)."""
    global _usable
    if _usable is None:
        group = create(1 << 30, 64)
        _usable = group is not None
        if group is not None:
            group.remove()
    return _usable

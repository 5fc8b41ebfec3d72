"""Scratch directories named by their owner, and the removal of those a killed run left.

A run killed with SIGKILL cannot remove its scratch trees (a full copy of a snapshot in
`/dev/shm` per verification, test results in `/tmp`). Each is named
`<prefix><pid>.<start>-<random>`, where `start` is the owner's start time in clock ticks since
boot (`/proc/<pid>/stat`): the pid alone could be reused by another process, the pair cannot.
The next run, and `taskforge sandbox prune`, remove the directories of this user whose owner
is gone, and never one of a live run.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

_OWNED = re.compile(r"[a-z][a-z-]*?-(\d+)\.(\d+)-")
_own: dict[int, str | None] = {}


def start_ticks(pid: int) -> str | None:
    """When `pid` started (clock ticks since boot), or None when no such process runs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: fields follow its last ')'.
    return stat.rsplit(")", 1)[1].split()[19]


def owned(prefix: str) -> str:
    """`prefix` with this process's pid and start time; unchanged without /proc (such
    directories are never pruned)."""
    pid = os.getpid()
    if pid not in _own:  # per pid: a forked worker is another owner
        _own[pid] = start_ticks(pid)
    return f"{prefix}{pid}.{_own[pid]}-" if _own[pid] else prefix


def dead_owner(name: str) -> bool:
    """Whether `name` is an owned scratch directory whose owner no longer runs."""
    found = _OWNED.match(name)
    if not found:
        return False
    pid, start = found.groups()
    return start_ticks(int(pid)) != start


def prune_dead(places: Iterable[Path], only: str = "") -> int:
    """Remove the owned directories in `places` (names starting with `only`) that belong to
    this user and to a process that is gone; return how many were removed."""
    removed = 0
    for place in places:
        try:
            entries = list(place.iterdir())
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(only) or not dead_owner(entry.name):
                continue
            try:
                info = entry.lstat()
            except OSError:
                continue
            if info.st_uid != os.getuid() or not entry.is_dir() or entry.is_symlink():
                continue
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed


def prune_scratch(places: Iterable[Path]) -> int:
    """What dead runs of this user left: scratch trees in `places`, and test-run
    directories in the system's temp dir."""
    return prune_dead(places) + prune_dead([Path(tempfile.gettempdir())], only="taskforge-")

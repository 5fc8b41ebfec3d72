"""Reading for the leak scan: every regular file under some roots, and every byte string
decoded from inside it, handed to a sink (the search, or an environment's index).

Files are read once (hard links and repeated inodes skipped); one is read whole only up to
BIG_FILE (a larger one reaches the sink by path, and only a zip or tar in it is decoded, from
disk); containers are decoded only when their magic bytes say so (see `containers`), each
within byte budgets. What could not be read or decoded, or would exceed a budget, is
`Undecided`: the scan cannot vouch for it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from taskforge.sanitize.containers import CONTAINERS, Budget, Context, ScanBudget, expand, kind_of

BIG_FILE = 32 * 1024 * 1024  # larger files reach the sink by path; only a zip or tar is decoded

# (root index, path relative to the root, container path inside the file: "" for its bytes)
Label = tuple[int, str, str]


@dataclass(frozen=True, order=True)
class Undecided:
    """A file (or a member inside it: `container`) the scan could not vouch for: it could not
    be read or decoded, or decoding it would exceed a budget."""

    path: str
    container: str
    reason: str
    root: str = field(default="", compare=False)

    def where(self) -> str:
        return f"{self.path}{self.container}"

    def __str__(self) -> str:
        return f"{self.where()}: undecided: {self.reason}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.where(), "kind": "undecided", "reason": self.reason}


@dataclass
class ScanStats:
    files: int = 0
    bytes: int = 0
    entries: int = 0  # searched byte strings: files plus decoded members
    decoded_bytes: int = 0
    containers: int = 0
    same_inode: int = 0
    notes: list[str] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)


class Sink(Protocol):
    """Where the walk delivers byte strings."""

    def add(self, label: Label, data: bytes) -> None: ...

    def add_big(self, label: Label, path: str) -> None:
        """The bytes of a file too big to hold (read them from `path`, a piece at a time)."""

    def filled(self) -> None:
        """Called after each file: a chance to flush what was collected."""


def tree_files(root: Path, on_error: Callable[[str, str], None],
               skip: Collection[str] = ()) -> Iterator[tuple[str, str]]:
    """(relative POSIX path, path) of every regular file under `root`, in name order;
    symlinks are not followed. A directory that cannot be listed goes to `on_error(rel,
    reason)`: it may hold anything. `skip`: names left out at the top of `root`."""
    if root.is_file() and not root.is_symlink():
        yield root.name, str(root)
        return
    stack = [(str(root), "")]
    while stack:
        here, prefix = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted((e for e in it if prefix or e.name not in skip),
                                 key=lambda e: e.name)
        except OSError as e:
            on_error(prefix.rstrip("/") or ".", f"unreadable directory: {e.strerror}")
            continue
        for entry in reversed(entries):  # the stack pops them back in name order
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, prefix + entry.name + "/"))
                elif entry.is_file(follow_symlinks=False):
                    yield prefix + entry.name, entry.path
            except OSError:
                continue


def big_kind(head: bytes, end: bytes) -> str | None:
    """The container kind of a file too big to hold, from its first and last bytes."""
    if len(head) >= 512 and head[257:262] == b"ustar":
        return "tar"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or b"PK\x05\x06" in end:
        return "zip"
    return kind_of(head)


class Walker:
    """One walk's state: what it has counted, what it could not decide, the inodes it has
    read, and the decoded bytes it may still produce (`budget`)."""

    def __init__(self, context_for: Callable[[int, str], Context] | None = None) -> None:
        self.context_for = context_for or (lambda index, rel: Context())
        self.stats = ScanStats()
        self.budget = ScanBudget()
        self.seen: set[tuple[int, int]] = set()

    def undecided(self, roots: Sequence[Path], index: int, rel: str, container: str,
                  reason: str) -> None:
        self.stats.undecided.append(Undecided(rel, container, reason, str(roots[index])))

    def walk(self, roots: Sequence[Path], indices: Sequence[int], sink: Sink,
             skip: Collection[str] = ()) -> None:
        """Deliver every file under `roots[i]` for i in `indices`, and what it holds, but
        for the names `skip` at the top of each."""
        for index in indices:
            for rel, path in tree_files(roots[index], lambda r, why, i=index:
                                        self.undecided(roots, i, r, "", why), skip):
                data, size, problem = self._read(path)
                if problem:
                    self.undecided(roots, index, rel, "", problem)
                if data is None:
                    if size > BIG_FILE:
                        self._big(roots, index, rel, path, sink)
                    continue
                self.stats.files += 1
                self.stats.bytes += len(data)
                self.stats.entries += 1
                sink.add((index, rel, ""), data)
                if kind_of(data) is not None:
                    self.decode(roots, index, rel, data, None, sink)
                sink.filled()

    def decode(self, roots: Sequence[Path], index: int, rel: str, data: bytes | object,
               kind: str | None, sink: Sink, where: str = "") -> None:
        """Every byte string decoded from inside `data` (bytes, or an open file of `kind`)."""
        ctx = self.context_for(index, rel)
        for inner_where, inner in expand(data, ctx, Budget(scan=self.budget), where=where,
                                         kind=kind):  # type: ignore[arg-type]
            sink.add((index, rel, inner_where), inner)
            self.stats.decoded_bytes += len(inner)
            self.stats.entries += 1
        self.stats.containers += ctx.containers
        self.stats.notes += [f"{rel}{n}" for n in ctx.notes]
        if ctx.undecided:  # one per file: the first thing that stopped the scan there
            inner_where, reason = ctx.undecided[0]
            more = len(ctx.undecided) - 1
            self.undecided(roots, index, rel, inner_where,
                           reason + (f" (and {more} more)" if more else ""))

    def _big(self, roots: Sequence[Path], index: int, rel: str, path: str, sink: Sink) -> None:
        """Too big to hold: its bytes go to the sink by path; a zip or tar is decoded from
        disk (members one at a time); any other container is undecided."""
        self.stats.files += 1
        self.stats.bytes += os.path.getsize(path)
        self.stats.entries += 1
        sink.add_big((index, rel, ""), path)
        with open(path, "rb") as f:
            head = f.read(4096)
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 1024))
            end = f.read()
            kind = big_kind(head, end)
            if kind in ("zip", "tar"):
                f.seek(0)
                self.decode(roots, index, rel, f, kind, sink)
            elif kind in CONTAINERS:
                self.undecided(roots, index, rel, "",
                               f"{kind}: {os.path.getsize(path)} bytes on disk, over the "
                               f"{BIG_FILE // (1024 * 1024)} MiB a file may be to be decoded")
        sink.filled()

    def _read(self, path: str) -> tuple[bytes | None, int, str]:
        """The file's bytes (None if seen before under another name, unreadable, or too big
        to hold: then its size is returned), and why it could not be read."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            return None, 0, f"unreadable: {e.strerror}"
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            if key in self.seen:
                self.stats.same_inode += 1
                return None, 0, ""
            self.seen.add(key)
            if not stat.S_ISREG(st.st_mode) or st.st_size > BIG_FILE:
                return None, st.st_size, ""
            chunks = [os.read(fd, st.st_size + 1)]
            while chunks[-1]:  # the file grew, or the size was not known
                chunks.append(os.read(fd, 1 << 20))
                if sum(map(len, chunks)) > BIG_FILE:
                    return None, BIG_FILE + 1, ""  # it grows while we read: take it by path
            return b"".join(chunks) if len(chunks) > 2 else chunks[0], st.st_size, ""
        except OSError as e:
            return None, 0, f"unreadable: {e.strerror}"
        finally:
            os.close(fd)

"""Scratch workspaces: private copies of a tree that tests may scribble on.

They live in memory (`/dev/shm`) when the machine has room there: removing one of click's
trees takes ~1 ms on tmpfs, while on this machine's disk (mounted with `discard`) it took
~0.3 s under load (profiled in click's task confirmation). TASKFORGE_SCRATCH names another
directory; without room in memory, the cache's `tmp/` is used. Every sandbox gives a command
its own /dev/shm, so no test sees another's scratch tree.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from taskforge.fileio import write_all
from taskforge.leftovers import owned, prune_scratch

SHM = Path("/dev/shm")
MIN_FREE_MEMORY = 4 << 30  # leave scratch on disk when tmpfs has less room than this


@functools.cache
def _memory_scratch() -> Path | None:
    try:
        stats = os.statvfs(SHM)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize < MIN_FREE_MEMORY or not os.access(SHM, os.W_OK):
        return None
    root = SHM / f"taskforge-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def scratch_parent(cache: Path) -> Path:
    """Where scratch workspaces go: $TASKFORGE_SCRATCH, else memory, else the cache's tmp/."""
    chosen = os.environ.get("TASKFORGE_SCRATCH")
    parent = Path(chosen) if chosen else (_memory_scratch() or cache / "tmp")
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def prune_dead_scratch(cache: Path) -> int:
    """Remove what killed runs of this user left in every scratch place (see leftovers.py)."""
    chosen = os.environ.get("TASKFORGE_SCRATCH")
    places = [p for p in (_memory_scratch(), Path(chosen) if chosen else None, cache / "tmp") if p]
    return prune_scratch(places)


def copy_tree(source: Path, dest: Path) -> None:
    """`shutil.copytree(source, dest, symlinks=True)` for the trees taskforge copies (a
    snapshot, a workspace): each file's bytes, permission bits and times, each directory's
    bits and times, symbolic links as links. `dest` must not exist. What it leaves out,
    no workspace needs: extended attributes and file flags. A file of another kind (a FIFO,
    a socket, a device) is an error, as it is to copytree.

    Why not copytree: its Python-level file objects, `copystat` and extended-attribute calls
    on every file were ~8 ms of each of boltons' 70-file workspaces, this is ~2 ms: the
    copy is made for every candidate (bench/verify_cost.py)."""
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    _copy_directory(os.fspath(source), os.fspath(dest))


def _copy_directory(source: str, dest: str) -> None:
    os.mkdir(dest)
    with os.scandir(source) as listing:
        entries = list(listing)
    for entry in entries:
        target = os.path.join(dest, entry.name)
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(entry.path), target)
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
        elif stat.S_ISDIR(info.st_mode):
            _copy_directory(entry.path, target)
        elif stat.S_ISREG(info.st_mode):
            _copy_file(entry.path, target, info)
        else:
            raise OSError(f"{entry.path}: not a regular file, directory or symbolic link")
    info = os.stat(source)
    os.chmod(dest, stat.S_IMODE(info.st_mode))
    os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns))


def _copy_file(source: str, target: str, info: os.stat_result) -> None:
    reader = os.open(source, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        writer = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            _copy_bytes(reader, writer)
            os.fchmod(writer, stat.S_IMODE(info.st_mode))
            os.utime(writer, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(writer)
    finally:
        os.close(reader)


def _copy_bytes(reader: int, writer: int) -> None:
    """All of `reader` (to its end, however it grew since its stat) to `writer`: in the
    kernel where it can, else through a buffer (a file system without sendfile)."""
    try:
        while os.sendfile(writer, reader, None, 1 << 30):
            pass
        return
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP) \
                or os.lseek(writer, 0, os.SEEK_CUR) != 0:
            raise
    while chunk := os.read(reader, 1 << 20):
        write_all(writer, chunk)


@contextlib.contextmanager
def scratch_copy(tree: Path, cache: Path, prefix: str = "ws-") -> Iterator[Path]:
    """A fresh copy of `tree`, removed afterwards. A real copy, not hardlinks: a test that
    rewrites a file in place must not change the original."""
    with tempfile.TemporaryDirectory(dir=scratch_parent(cache), prefix=owned(prefix)) as scratch:
        workspace = Path(scratch) / "workspace"
        copy_tree(tree, workspace)
        yield workspace


@contextlib.contextmanager
def scratch_dir(cache: Path, prefix: str = "tmp-") -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=scratch_parent(cache), prefix=owned(prefix)) as scratch:
        yield Path(scratch)


@contextlib.contextmanager
def scratch_dir_for(workspace: Path) -> Iterator[Path]:
    """A scratch dir next to `workspace` (same filesystem), removed afterwards."""
    with tempfile.TemporaryDirectory(dir=workspace.parent, prefix="io-") as scratch:
        yield Path(scratch)


# Warm roots: one directory per process and scratch place, under which verification makes its
# workspaces; a warm run (`languages/python/testing/zygote.py`) may run in any workspace
# under one, since its sandbox sees the whole root. Nothing else is made there: a graded
# solution's copy never is.
_warm_lock = threading.Lock()
_warm_roots: dict[tuple[int, Path], Path] = {}


def warm_root(cache: Path) -> Path:
    """This process's warm root in the scratch place of `cache`."""
    parent = scratch_parent(cache)
    key = (os.getpid(), parent)
    with _warm_lock:
        root = _warm_roots.get(key)
        if root is None or not root.is_dir():
            root = Path(tempfile.mkdtemp(dir=parent, prefix=owned("warm-")))
            _warm_roots[key] = root
        return root


@contextlib.contextmanager
def warm_dir(cache: Path, prefix: str = "tmp-") -> Iterator[Path]:
    """A scratch dir under this process's warm root (see `warm_root`), removed afterwards."""
    with tempfile.TemporaryDirectory(dir=warm_root(cache), prefix=prefix) as scratch:
        yield Path(scratch)


@contextlib.contextmanager
def warm_copy(tree: Path, cache: Path, prefix: str = "ws-") -> Iterator[Path]:
    """`scratch_copy`, under this process's warm root: a copy a warm run may run in."""
    with warm_dir(cache, prefix=prefix) as scratch:
        workspace = scratch / "workspace"
        copy_tree(tree, workspace)
        yield workspace


def warm_root_of(path: Path) -> Path | None:
    """The warm root of this process that holds `path`, if any."""
    with _warm_lock:
        roots = [r for (pid, _parent), r in _warm_roots.items() if pid == os.getpid()]
    resolved = Path(os.path.abspath(path))
    return next((r for r in roots if resolved.is_relative_to(r)), None)


def _remove_warm_roots() -> None:
    with _warm_lock:
        roots = [r for (pid, _parent), r in _warm_roots.items() if pid == os.getpid()]
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


atexit.register(_remove_warm_roots)

"""Bytes to a file descriptor or a new file by the system calls alone, for the places that
write many small files a task (the snapshot's bytecode, a patch's files) or a pipe, where a
buffered file object cost more than the write itself."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd`. One `os.write` may take only part of it: a pipe or FIFO whose
    reader is slower, a signal arriving mid-write (Python retries only a write that wrote
    nothing), a full disk's last block."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_new(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644,
              exclusive: bool = False) -> None:
    """`data` as the file `path` (`mode` less the umask, where the file is created), never
    through a symbolic link; `exclusive`: the file must not exist yet, else it is emptied
    first."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC \
        | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, mode)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)

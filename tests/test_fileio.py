"""taskforge.fileio: a write that the kernel cuts short is finished, and a new file is never
written through a symbolic link."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from taskforge.fileio import write_new

# 1 MiB written into a pipe whose reader starts only after SIGALRM arrived (its thread blocks
# the signal, so it is the writer's call that the signal interrupts, once 64 KiB filled the
# pipe). Prints how many bytes the reader got and whether they were the bytes written.
INTERRUPTED = textwrap.dedent("""
    import os, signal, sys, threading
    sys.path.insert(0, {root!r})
    from taskforge.fileio import write_all

    def naive(fd, data):
        os.write(fd, data)

    write = write_all if sys.argv[1] == "write_all" else naive
    data = os.urandom(1 << 20)
    r, w = os.pipe()
    fired = threading.Event()
    signal.signal(signal.SIGALRM, lambda *_: fired.set())
    received = bytearray()

    def read():
        signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})
        fired.wait(20)
        while chunk := os.read(r, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    write(w, data)
    os.close(w)
    reader.join(20)
    print(len(received), bytes(received) == data)
""")


def _interrupted(how: str) -> str:
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", INTERRUPTED.format(root=root), how],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_a_write_a_signal_cuts_short_is_finished():
    assert _interrupted("write_all") == f"{1 << 20} True"


def test_control_one_os_write_loses_the_rest_when_a_signal_arrives():
    count, same = _interrupted("naive").split()
    assert int(count) < 1 << 20 and same == "False"


def test_write_new_writes_replaces_and_refuses_what_exists_when_exclusive(tmp_path):
    target = tmp_path / "f.bin"
    write_new(target, b"first\n", mode=0o600)
    assert target.read_bytes() == b"first\n" and target.stat().st_mode & 0o777 == 0o600
    write_new(target, b"2\n")  # emptied first: nothing of the longer content is left
    assert target.read_bytes() == b"2\n"
    with pytest.raises(FileExistsError):
        write_new(target, b"third\n", exclusive=True)
    assert target.read_bytes() == b"2\n"


@pytest.mark.parametrize("exclusive", [False, True])
def test_write_new_never_follows_a_symbolic_link(tmp_path, exclusive):
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep\n")
    link = tmp_path / "link"
    link.symlink_to(outside)
    with pytest.raises(OSError):
        write_new(link, b"written through\n", exclusive=exclusive)
    assert outside.read_bytes() == b"keep\n"
    # the control: an ordinary open writes through the link into the file it names
    with open(link, "wb") as f:
        f.write(b"written through\n")
    assert outside.read_bytes() == b"written through\n"

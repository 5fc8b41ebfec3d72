"""`workspace.copy_tree`: what `shutil.copytree(symlinks=True)` gives a workspace, file for file."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from taskforge.workspace import copy_tree


def _tree(root: Path) -> Path:
    """A tree with what snapshots hold: nested packages, an executable, an empty file and
    directory, a private directory, links (relative, absolute, dangling, to a directory),
    a name outside ASCII, a file bigger than one read."""
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (root / "pkg" / "sub" / "mod.py").write_text("def f():\n    return 2\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "empty.txt").write_bytes(b"")
    (root / "big.bin").write_bytes(os.urandom(3 << 20))
    (root / "naïve-ü.txt").write_text("unicode name\n")
    (root / "empty-dir").mkdir()
    (root / "private").mkdir(mode=0o700)
    (root / "private" / "secret.txt").write_text("kept\n")
    (root / "private" / "secret.txt").chmod(0o600)
    (root / "link-rel").symlink_to("pkg/__init__.py")
    (root / "link-abs").symlink_to("/etc/hostname")
    (root / "dangling").symlink_to("no-such-file")
    (root / "pkg-link").symlink_to("pkg", target_is_directory=True)
    past = 1_500_000_000_123_456_789
    for path in sorted(root.rglob("*"), reverse=True):  # files before their directories
        os.utime(path, ns=(past, past + 7), follow_symlinks=False)
    return root


def _described(root: Path) -> dict[str, tuple]:
    described = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        kind = stat.S_IFMT(info.st_mode)
        content: object = None
        if stat.S_ISLNK(info.st_mode):
            content = os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            content = path.read_bytes()
        mode = None if stat.S_ISLNK(info.st_mode) else stat.S_IMODE(info.st_mode)
        described[path.relative_to(root).as_posix()] = (kind, mode, info.st_mtime_ns, content)
    return described


def test_copy_tree_gives_what_copytree_gives(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    copy_tree(source, ours)
    shutil.copytree(source, theirs, symlinks=True)
    assert _described(ours) == _described(theirs) == _described(source)
    top = (ours.stat(), source.stat())
    assert stat.S_IMODE(top[0].st_mode) == stat.S_IMODE(top[1].st_mode)
    assert top[0].st_mtime_ns == top[1].st_mtime_ns


def test_copy_tree_is_a_copy_not_links(tmp_path: Path) -> None:
    """A test that rewrites a file in place must not reach the original."""
    source = _tree(tmp_path / "source")
    copy = tmp_path / "copy"
    copy_tree(source, copy)
    assert (copy / "pkg" / "__init__.py").stat().st_ino != (source / "pkg" / "__init__.py").stat().st_ino
    with open(copy / "pkg" / "__init__.py", "r+") as f:
        f.write("VALUE = 9\n")
    assert (source / "pkg" / "__init__.py").read_text() == "VALUE = 1\n"


def test_copy_tree_refuses_an_existing_destination_and_special_files(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    taken = tmp_path / "taken"
    taken.mkdir()
    with pytest.raises(FileExistsError):
        copy_tree(source, taken)
    os.mkfifo(source / "pkg" / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        copy_tree(source, tmp_path / "with-fifo")

"""Scratch workspaces: private copies of a tree that tests may scribble on."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def scratch_copy(tree: Path, cache: Path, prefix: str = "ws-") -> Iterator[Path]:
    """A fresh copy of `tree`, removed afterwards. A real copy, not hardlinks: a test that
    rewrites a file in place must not change the original."""
    parent = cache / "tmp"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent, prefix=prefix) as scratch:
        workspace = Path(scratch) / "workspace"
        shutil.copytree(tree, workspace, symlinks=True)
        yield workspace


@contextlib.contextmanager
def scratch_dir(cache: Path, prefix: str = "tmp-") -> Iterator[Path]:
    parent = cache / "tmp"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent, prefix=prefix) as scratch:
        yield Path(scratch)


@contextlib.contextmanager
def scratch_dir_for(workspace: Path) -> Iterator[Path]:
    """A scratch dir next to `workspace` (same filesystem), removed afterwards."""
    with tempfile.TemporaryDirectory(dir=workspace.parent, prefix="io-") as scratch:
        yield Path(scratch)

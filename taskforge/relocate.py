"""Moving a built environment: the one path it was built at, rewritten to where it now lives."""

from __future__ import annotations

import os
from pathlib import Path


def rewrite_paths(root: Path, old: Path, new: Path) -> None:
    """Rewrite the path `old` to `new` in the text files (scripts, cfg) of the venv at `root`:
    a venv built in one place and moved to another."""
    old_bytes, new_bytes = str(old).encode(), str(new).encode()
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            if path.is_symlink() or path.suffix in (".so", ".pyc"):
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if old_bytes in data and b"\0" not in data[:1024]:
                path.write_bytes(data.replace(old_bytes, new_bytes))

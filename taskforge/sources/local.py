"""A local directory as a source: hashed in place, copied into the cache only when new."""

from __future__ import annotations

from pathlib import Path

from taskforge.errors import UserError
from taskforge.model import Snapshot
from taskforge.sources.store import snapshot_from_tree


def ingest_path(location: str, cache: Path, base_dir: Path, origin: str | None = None) -> Snapshot:
    """`origin` names where the path was given (a recipe and its key) in error messages."""
    path = (base_dir / location).expanduser()
    given = f" ({origin}, relative to {base_dir})" if origin else ""
    if not path.exists():
        raise UserError(f"{location}: source path does not exist{given}")
    if not path.is_dir():
        raise UserError(f"{location}: source path is not a directory{given}")
    path = path.resolve()
    return snapshot_from_tree(path, name=path.name, source=str(location), cache=cache)

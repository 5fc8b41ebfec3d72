"""Sources: a local path, a git URL at a ref, a pinned PyPI sdist, a pinned npm package or a
pinned Debian source package, each becomes a Snapshot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from taskforge.errors import UserError
from taskforge.model import Snapshot, SourceSpec
from taskforge.sources.debian import ingest_debian
from taskforge.sources.git import ingest_git
from taskforge.sources.local import ingest_path
from taskforge.sources.npm import ingest_npm
from taskforge.sources.pypi import ingest_pypi
from taskforge.sources.store import read_notes


def ingest_source(spec: SourceSpec, cache: Path, base_dir: Path, max_mb: float | None = None,
                  describe_if: Callable[[Path], bool] = lambda _root: False) -> Snapshot:
    """Fetch (or find in the cache) the snapshot a source names. Raises UserError on bad input,
    and on a snapshot larger than `max_mb` megabytes. `describe_if(root)`: whether a git
    source's build reads its version from git (see `ingest_git`)."""
    if spec.kind == "pypi":
        snapshot = ingest_pypi(spec.location, cache)
    elif spec.kind == "npm":
        snapshot = ingest_npm(spec.location, cache)
    elif spec.kind == "debian":
        snapshot = ingest_debian(spec.location, cache)
    elif spec.kind == "git":
        snapshot = ingest_git(spec.location, spec.ref, cache, describe_if)
    else:
        snapshot = ingest_path(spec.location, cache, base_dir, spec.origin)
    if max_mb is not None:
        size = tree_bytes(snapshot.root)
        if size > max_mb * 1e6:
            raise UserError(f"{snapshot.source}: {size / 1e6:.1f} MB of files, over the size "
                            f"limit of {max_mb:g} MB")
    return snapshot


def tree_bytes(root: Path) -> int:
    return sum(path.lstat().st_size for path in root.rglob("*") if path.is_file()
               and not path.is_symlink())


def source_notes(snapshot: Snapshot, cache: Path) -> list[str]:
    """What fetching the snapshot's source found worth telling (git: shallow or full,
    submodules left out)."""
    return read_notes(cache, snapshot.source)


__all__ = ["ingest_source", "source_notes", "tree_bytes"]

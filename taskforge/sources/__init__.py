"""Sources: a local path, a git URL at a ref, or a pinned PyPI sdist, each becomes a Snapshot."""

from __future__ import annotations

from pathlib import Path

from taskforge.model import Snapshot, SourceSpec
from taskforge.sources.git import ingest_git
from taskforge.sources.local import ingest_path
from taskforge.sources.pypi import ingest_pypi


def ingest_source(spec: SourceSpec, cache: Path, base_dir: Path) -> Snapshot:
    """Fetch (or find in the cache) the snapshot a source names. Raises UserError on bad input."""
    if spec.kind == "pypi":
        return ingest_pypi(spec.location, cache)
    if spec.kind == "git":
        return ingest_git(spec.location, spec.ref, cache)
    return ingest_path(spec.location, cache, base_dir)


__all__ = ["ingest_source"]

"""Snapshots inside an output directory: one deterministic .tar.gz per snapshot id, so a loader
on another machine can materialize and grade without reaching the sources."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
import zlib
from pathlib import Path

from taskforge.cache import build_once, write_atomic
from taskforge.errors import UserError
from taskforge.gitcmd import commit_tree, git


def tree_hash(tree: Path, git_dir: Path) -> str:
    """The git tree hash of every file in `tree` (what a snapshot id is)."""
    commit = commit_tree(tree, git_dir, "snapshot check")
    return git("rev-parse", f"{commit}^{{tree}}", git_dir=git_dir)


def snapshot_archive(out: Path, snapshot_id: str) -> Path:
    return out / "snapshots" / f"{snapshot_id}.tar.gz"


def export_snapshot(root: Path, snapshot_id: str, out: Path) -> Path:
    """Write the snapshot's files as a reproducible archive (sorted, zeroed times and owners)."""
    target = snapshot_archive(out, snapshot_id)
    if target.exists():
        return target
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(_walk(root)):
            info = tar.gettarinfo(str(path), arcname=path.relative_to(root).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = 0o755 if info.mode & 0o111 else 0o644
            if info.isfile():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    write_atomic(target, buffer.getvalue())
    return target


def _walk(root: Path) -> list[Path]:
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or path.is_file():
                paths.append(path)
    return paths


def snapshot_root(out: Path, snapshot_id: str, cache: Path) -> Path:
    """The snapshot's files, from the cache or unpacked once from the output directory."""
    final = cache / "snapshots" / snapshot_id
    if (final / "tree").is_dir():
        return final / "tree"
    archive = snapshot_archive(out, snapshot_id)
    if not archive.is_file():
        raise UserError(f"{archive}: snapshot archive missing from the task directory")
    final.parent.mkdir(parents=True, exist_ok=True)

    def unpack(staging: Path) -> None:
        try:
            with tarfile.open(archive, "r:gz") as tar:  # export_snapshot writes only .tar.gz
                tar.extractall(staging / "tree", filter="data")
        except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
            raise UserError(f"{archive}: damaged snapshot archive ({e or type(e).__name__}); "
                            "copy it again from the run's output") from None
        # The archive's name is its git tree hash: content that does not hash to it was
        # changed after the run wrote it, and a task built on it would not be the task.
        found = tree_hash(staging / "tree", staging / "hash.git")
        shutil.rmtree(staging / "hash.git")
        if found != snapshot_id:
            raise UserError(f"{archive}: content does not match its snapshot id (tree "
                            f"{found[:12]}): changed after it was written; copy it again "
                            "from the run's output")

    build_once(final, unpack)
    return final / "tree"

"""Build a task workspace: the snapshot's files, the deletion applied, sanitized, fresh git."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from taskforge.errors import UserError
from taskforge.model import TaskRecord
from taskforge.patches import apply_patch
from taskforge.sanitize import changed_paths, sanitize_workspace, scan_removals, tracked_paths
from taskforge.workspace import copy_tree


def materialize_record(record: TaskRecord, snapshot_root: Path,
                       dest: Path) -> tuple[Path, dict[str, list[str]]]:
    """Create `dest` as the agent's starting workspace for `record`; it must not exist yet
    (or be an empty directory). Returns it with the artifacts the sanitizer removed. A task
    with hidden tests lacks them here: its `deletion_patch` deletes them too."""
    return materialize(record["deletion_patch"], snapshot_root, dest,
                       also_remove=scan_removals(record))


def materialize(deletion_patch: str, snapshot_root: Path, dest: Path, *,
                also_remove: Collection[str] = (),
                tracked: frozenset[str] | None = None) -> tuple[Path, dict[str, list[str]]]:
    """A workspace at `dest`: the snapshot with `deletion_patch` applied, sanitized, with
    `also_remove` (paths an earlier leak scan removed) gone and one fresh commit.
    `tracked`: the snapshot's `tracked_paths`, where the caller has them already."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise UserError(f"{dest}: destination exists and is not empty")
    if dest.exists():
        dest.rmdir()
    dest.parent.mkdir(parents=True, exist_ok=True)
    copy_tree(snapshot_root, dest)
    apply_patch(dest, deletion_patch)
    # Files the repository tracks on purpose stay; what the task's leak scan removed goes, and
    # so does any compiled copy of the code the deletion edited (tracked or not).
    keep = tracked_paths(snapshot_root) if tracked is None else tracked
    removed = sanitize_workspace(dest, keep=keep,
                                 also_remove=also_remove, changed=changed_paths(deletion_patch))
    return dest, removed

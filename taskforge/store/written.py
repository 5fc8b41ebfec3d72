"""What taskforge writes outside its output directories, marked so it is recognised wherever
it lands.

Exports and reports hold reference patches (the answers). One written inside a source tree
(`taskforge export ... --out proj/export.jsonl` with `path: proj`) must never enter that
source's next snapshot, or a task's workspace would hand the agent other tasks' solutions.
Output directories are recognised by their journals and shard manifests; these by a mark
that travels with them, written by taskforge itself (not guessed from their content):

- a harbor or docker-image export directory holds `EXPORT_MARKER` at its root, written first
  (so its partial directory is recognised too);
- a swebench export is JSONL whose every line starts with the `SWEBENCH_KEY` field (the
  taskforge version that wrote it): a moved, renamed or line-filtered copy still starts so;
- a report's first line is `REPORT_HEAD`, a comment after the doctype.

A sidecar file would not travel with a moved export, and telling exports by their fields
would take a user's own file for one. A file another tool rewrote (its keys sorted, say) no
longer starts with the mark and is the user's.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from taskforge.cache import taskforge_version

EXPORT_MARKER = ".taskforge-export"
SWEBENCH_KEY = "taskforge_export"
_SWEBENCH_HEAD = b'{"' + SWEBENCH_KEY.encode() + b'": '
REPORT_HEAD = "<!DOCTYPE html><!-- written by taskforge: a run report, with reference patches -->"
_FILE_HEADS = {_SWEBENCH_HEAD: "swebench export", REPORT_HEAD.encode(): "report"}
_HEAD_BYTES = max(len(head) for head in _FILE_HEADS)


def mark_export_dir(root: Path, fmt: str) -> None:
    """Mark `root` as a `fmt` export (before anything else is written into it)."""
    (root / EXPORT_MARKER).write_text(json.dumps({"format": fmt, "taskforge": taskforge_version()})
                                      + "\n")


def export_dir_format(path: Path) -> str | None:
    """The format of the export directory `path` (e.g. "harbor"), or None if it is none."""
    marker = path / EXPORT_MARKER
    if not marker.is_file():
        return None
    try:
        fmt = json.loads(marker.read_text()).get("format")
    except (OSError, ValueError, AttributeError):
        fmt = None
    return fmt if isinstance(fmt, str) else "unknown"


def swebench_line(instance: dict[str, Any]) -> str:
    """One line of a swebench export: the mark first, then the instance's fields sorted."""
    return json.dumps({SWEBENCH_KEY: taskforge_version(), **dict(sorted(instance.items()))}) + "\n"


def written_file(path: Path) -> str | None:
    """What taskforge file `path` is ("swebench export", "report"), or None. Only a regular
    file is opened (a FIFO would block), and only its first bytes are read."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return None
    return next((what for mark, what in _FILE_HEADS.items() if head.startswith(mark)), None)

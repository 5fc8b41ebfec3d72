"""Unified diffs between two states of a tree, and applying them with `git apply`."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

from taskforge.errors import Rejected


def diff_texts(changes: dict[str, tuple[str, str]]) -> str:
    """A git-style unified diff for {path: (old_text, new_text)}, paths in sorted order."""
    chunks: list[str] = []
    for path in sorted(changes):
        old, new = changes[path]
        if old == new:
            continue
        lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=f"a/{path}", tofile=f"b/{path}", n=3)
        body = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)
        chunks.append(f"diff --git a/{path} b/{path}\n{body}")
    return "".join(chunks)


def apply_patch(workspace: Path, patch: str) -> None:
    """Apply `patch` to the files of `workspace`; raises Rejected if it does not apply."""
    if not patch:
        return
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=workspace,
                          input=patch.encode(), capture_output=True)
    if proc.returncode != 0:
        raise Rejected("patch-does-not-apply", proc.stderr.decode(errors="replace").strip()[:200])

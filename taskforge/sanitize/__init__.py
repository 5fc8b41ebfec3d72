"""Make a task workspace safe to hand to an agent: artifacts removed, a fresh one-commit git."""

from __future__ import annotations

import shutil
from pathlib import Path

from taskforge.gitcmd import fresh_repository
from taskforge.sanitize.rules import RULES, remove_artifacts


def sanitize_workspace(workspace: Path) -> dict[str, list[str]]:
    """Remove every artifact a rule names and replace any .git with one fresh commit."""
    removed = remove_artifacts(workspace)
    for vcs in (".git", ".hg", ".svn"):
        if (workspace / vcs).exists():
            shutil.rmtree(workspace / vcs)
            removed.setdefault("version-control", []).append(vcs)
    fresh_repository(workspace)
    return removed


__all__ = ["RULES", "remove_artifacts", "sanitize_workspace"]

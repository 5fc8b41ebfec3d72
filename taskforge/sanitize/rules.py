"""Artifact rules: named patterns for files that can carry residue of deleted code.

These are the fast path of sanitizing; the leak scanner is the proof. Each rule matches a
path component (a directory or file name) by glob, so one rule removes a whole cache tree.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ArtifactRule:
    """A named kind of artifact: directory names and file names it removes (globs)."""

    name: str
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


RULES: tuple[ArtifactRule, ...] = (
    ArtifactRule("python-bytecode", dirs=("__pycache__",), files=("*.pyc", "*.pyo")),
    ArtifactRule(
        "python-tool-caches",
        dirs=(".mypy_cache", ".pytype", ".pyre", ".ruff_cache", ".pytest_cache", ".hypothesis",
              ".tox", ".nox", ".eggs"),
    ),
    ArtifactRule("build-outputs", dirs=("build", "dist", "*.egg-info"),
                 files=("*.whl", "*.egg")),
    ArtifactRule("coverage-outputs", dirs=("htmlcov",),
                 files=(".coverage", ".coverage.*", "coverage.xml")),
    ArtifactRule("editor-leftovers", dirs=(".idea",), files=("*.orig", "*.rej", "*~", ".*.swp")),
    ArtifactRule("tag-files", files=("tags", "TAGS")),
    ArtifactRule("notebook-checkpoints", dirs=(".ipynb_checkpoints",)),
    ArtifactRule("virtualenvs", dirs=(".venv", "venv")),
)

# Version-control directories are never copied from a local source.
VCS_DIRS = (".git", ".hg", ".svn")


def rule_for(name: str, is_dir: bool) -> ArtifactRule | None:
    """The rule a single path component falls under, if any."""
    for rule in RULES:
        patterns = rule.dirs if is_dir else rule.files
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return rule
    return None


def git_exclude_lines() -> list[str]:
    """VCS dirs and the rules as gitignore lines, for hashing a tree without copying it."""
    lines = [f"{d}/" for d in VCS_DIRS]
    for rule in RULES:
        lines += [f"{p}/" for p in rule.dirs]
        lines += list(rule.files)
    return lines


def remove_artifacts(root: Path) -> dict[str, list[str]]:
    """Delete everything under `root` that a rule names; return rule -> removed relative paths."""
    removed: dict[str, list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root and ".git" in dirnames:
            dirnames.remove(".git")  # the fresh-git step owns .git
        for d in list(dirnames):
            rule = rule_for(d, is_dir=True)
            if rule:
                shutil.rmtree(here / d)
                dirnames.remove(d)
                removed.setdefault(rule.name, []).append(str((here / d).relative_to(root)))
        for f in filenames:
            rule = rule_for(f, is_dir=False)
            if rule:
                (here / f).unlink()
                removed.setdefault(rule.name, []).append(str((here / f).relative_to(root)))
    return {k: sorted(v) for k, v in sorted(removed.items())}

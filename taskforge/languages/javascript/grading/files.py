"""The grading copy of a JavaScript solution: its files, minus what a solution may not bring.

Test files and runner configuration (package.json and the lockfile among it) are put back as
the snapshot has them and added ones removed; every `node_modules` in the solution is left
out (the environment's is linked in for the run: a solution's own would shadow the
dependencies, test helpers included), and so are caches and version control.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from collections.abc import Collection
from pathlib import Path

from taskforge.languages.javascript.files import is_protected

NOT_COPIED = (".git", ".hg", ".svn", "node_modules", ".cache", ".nyc_output", "coverage",
              ".eslintcache", "*.tsbuildinfo")


def tree_files(root: Path) -> set[str]:
    """Every file and symlink under `root` (relative, posix), version control and
    node_modules left out."""
    found = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".hg", ".svn") or "node_modules" in rel.parts:
            continue
        if path.is_file() or path.is_symlink():
            found.add(rel.as_posix())
    return found


def copy_solution(solution: Path, dest: Path) -> list[str]:
    """A real copy (tests may write files; the agent's workspace must not change); returns
    the `node_modules` directories left out below the top level (the top-level one is the
    environment's business, not tampering)."""
    dropped: list[str] = []

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(shutil.ignore_patterns(*NOT_COPIED)(directory, names))
        rel = Path(directory).relative_to(solution)
        if "node_modules" in names and rel != Path("."):
            dropped.append((rel / "node_modules").as_posix())
        return skipped

    shutil.copytree(solution, dest, symlinks=True, ignore=ignore)
    return [f"added {rel} (not used: the environment's packages are)" for rel in sorted(dropped)]


def restore_protected(copy: Path, snapshot: Path, snapshot_files: set[str],
                      copy_files: set[str], hidden: Collection[str] = ()) -> list[str]:
    """Put every protected file back as in the snapshot, remove added ones; return what was
    tampered with ("added X", "deleted X", "edited X"). package.json is reported only when it
    differs as JSON (a reformatted file is restored quietly)."""
    tampered = []
    original = {f for f in snapshot_files if is_protected(f)}
    for rel in sorted(f for f in copy_files if is_protected(f) and f not in original):
        _remove(copy / rel)
        tampered.append(f"added {rel}")
    for rel in sorted(original):
        target = copy / rel
        if _linked_parent(copy, snapshot, rel):
            tampered.append(f"deleted {rel}")
        elif not (target.exists() or target.is_symlink()):
            if rel not in hidden:
                tampered.append(f"deleted {rel}")
        elif _same(snapshot / rel, target):
            continue
        else:
            if not _same_json(snapshot / rel, target):
                tampered.append(f"edited {rel}")
            _remove(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(snapshot / rel, target, follow_symlinks=False)
    return tampered


def _same(original: Path, candidate: Path) -> bool:
    if candidate.is_symlink() or original.is_symlink():
        return candidate.is_symlink() and original.is_symlink() and \
            candidate.readlink() == original.readlink()
    return candidate.is_file() and filecmp.cmp(original, candidate, shallow=False)


def _same_json(original: Path, candidate: Path) -> bool:
    if not original.name.endswith(".json") or candidate.is_symlink() or not candidate.is_file():
        return False
    try:
        return json.loads(original.read_text(encoding="utf-8")) == \
            json.loads(candidate.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False


def _linked_parent(copy: Path, snapshot: Path, rel: str) -> bool:
    """Remove a link or file standing where the snapshot has a directory on the way to
    `rel`, so a restored file cannot be written through a link the solution planted."""
    parts = Path(rel).parts
    for i in range(1, len(parts)):
        sub = Path(*parts[:i])
        if ((copy / sub).is_symlink() and not (snapshot / sub).is_symlink()) or \
                ((copy / sub).exists() and not (copy / sub).is_dir()):
            (copy / sub).unlink()
            return True
    return False


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()

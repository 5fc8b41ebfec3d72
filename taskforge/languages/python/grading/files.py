"""The grading copy: the solution's files, minus what a solution may not bring.

Test files, conftest.py files and pytest configuration are put back as they are in the
snapshot and added ones are removed; startup hooks, `.pth` files, package metadata (which
carries plugin entry points) and shadows of installed modules in the import roots are removed.
Bytecode and tool caches are never copied: they are build output, not solution, and a stale
`.pyc` would be imported instead of its source.
"""

from __future__ import annotations

import configparser
import filecmp
import shutil
import sys
import tomllib
from collections.abc import Collection, Iterable
from pathlib import Path

from taskforge.languages.python.files import SHARED_CONFIG, is_protected

# Files Python or pytest load on their own from an import root.
STARTUP_HOOKS = ("sitecustomize.py", "usercustomize.py")
# Never copied into the grading copy.
NOT_COPIED = (".git", ".hg", ".svn", "__pycache__", "*.pyc", "*.pyo", ".pytest_cache",
              ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox")


def tree_files(root: Path) -> set[str]:
    """Every file and symlink under `root` (relative, posix), version control left out."""
    found = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".hg", ".svn"):
            continue
        if path.is_file() or path.is_symlink():
            found.add(rel.as_posix())
    return found


def copy_solution(solution: Path, dest: Path) -> list[str]:
    """A real copy (tests may rewrite files; the agent's workspace must not change). Returns
    the sourceless bytecode left out: Python imports a `.pyc` outside `__pycache__` when its
    source is missing, and no Python 3 run of the tests writes one there."""
    skip = shutil.ignore_patterns(*NOT_COPIED)
    sourceless: list[str] = []

    def ignore(directory: str, names: list[str]) -> set[str]:
        left_out = skip(directory, names)
        if Path(directory).name != "__pycache__":
            rel = Path(directory).relative_to(solution)
            sourceless.extend((rel / n).as_posix() for n in names if n.endswith((".pyc", ".pyo")))
        return left_out

    shutil.copytree(solution, dest, symlinks=True, ignore=ignore)
    return [f"added sourceless bytecode {rel}" for rel in sorted(sourceless)]


def restore_protected(copy: Path, snapshot: Path, snapshot_files: set[str],
                      copy_files: set[str], hidden: Collection[str] = ()) -> list[str]:
    """Put every protected file back as in the snapshot, remove added ones; return what was
    tampered with ("added X", "deleted X", "edited X"). A `hidden` test file (the task took
    it out of the workspace) is missing by design: restored, not reported."""
    tampered = []
    original = {f for f in snapshot_files if is_protected(f)}
    for rel in sorted(f for f in copy_files if is_protected(f) and f not in original):
        _remove(copy / rel)
        tampered.append(f"added {rel}")
    for rel in sorted(original):
        unlinked = _unlink_linked_parents(copy, snapshot, rel)
        target = copy / rel
        if unlinked or not (target.exists() or target.is_symlink()):
            if unlinked or rel not in hidden:
                tampered.append(f"deleted {rel}")
        elif _same_file(snapshot / rel, target):
            continue
        elif _settings_equal(snapshot / rel, target):
            _remove(target)  # metadata edited, pytest settings untouched: restored, not reported
        else:
            tampered.append(f"edited {rel}")
            _remove(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(snapshot / rel, target, follow_symlinks=False)
    return tampered


def remove_injections(copy: Path, snapshot_files: set[str], copy_files: set[str],
                      import_roots: Iterable[str], installed: Iterable[str]) -> list[str]:
    """Delete what the solution added that would load on its own: startup hooks and `.pth`
    files anywhere, package metadata (`*.dist-info`, `*.egg-info`: plugin entry points) and
    modules named like an installed or standard module in an import root."""
    added = sorted(copy_files - snapshot_files)
    found: dict[str, str] = {}
    for rel in added:
        path = Path(rel)
        if path.name in STARTUP_HOOKS or path.suffix == ".pth":
            found[rel] = f"added {rel}"
        for i, part in enumerate(path.parts[:-1]):
            if part.endswith((".dist-info", ".egg-info")):
                top = Path(*path.parts[:i + 1]).as_posix()
                found[top] = f"added package metadata {top}"
    # `python -m pytest` puts the working directory first on sys.path, then the import roots.
    shadowed = set(installed) | set(sys.stdlib_module_names)
    original_tops = {_top_level(rel, root) for root in {".", *import_roots}
                     for rel in snapshot_files} - {None}
    for root in sorted({".", *import_roots}):
        for rel in added:
            top = _top_level(rel, root)
            if top is not None and top[1] in shadowed and top not in original_tops:
                where = (Path(root) / top[0]).as_posix().removeprefix("./")
                found[where] = f"shadows installed module {top[1]}: {where}"
    for rel in sorted(found):
        _remove(copy / rel)
    return sorted(set(found.values()))


def _top_level(rel: str, root: str) -> tuple[str, str] | None:
    """(first path component under `root`, the module name it would import as), or None."""
    path = Path(rel)
    if root != ".":
        if not path.is_relative_to(root):
            return None
        path = path.relative_to(root)
    first = path.parts[0]
    if len(path.parts) == 1:
        return (first, path.stem) if path.suffix in (".py", ".pyc", ".so", ".pyd") else None
    return (first, first) if first.isidentifier() else None


def _same_file(original: Path, candidate: Path) -> bool:
    if candidate.is_symlink() != original.is_symlink():
        return False
    if candidate.is_symlink():
        return candidate.readlink() == original.readlink()
    return candidate.is_file() and filecmp.cmp(original, candidate, shallow=False)


def _settings_equal(original: Path, candidate: Path) -> bool:
    """Whether a shared config file carries the same pytest settings in both versions."""
    if original.name not in SHARED_CONFIG or candidate.is_symlink() or not candidate.is_file():
        return False
    try:
        return _pytest_settings(original) == _pytest_settings(candidate)
    except (ValueError, UnicodeDecodeError, configparser.Error):
        return False  # an unreadable config file is not "unchanged"


def _pytest_settings(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    if path.name == "pyproject.toml":
        return tomllib.loads(text).get("tool", {}).get("pytest")
    parser = configparser.RawConfigParser(interpolation=None)
    parser.read_string(text)
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    return dict(parser.items(section)) if parser.has_section(section) else None


def _unlink_linked_parents(copy: Path, snapshot: Path, rel: str) -> bool:
    """Remove a symlinked directory on the way to `rel` that the snapshot does not have, so a
    restored file cannot be written through a link the solution planted."""
    parts = Path(rel).parts
    for i in range(1, len(parts)):
        sub = Path(*parts[:i])
        if (copy / sub).is_symlink() and not (snapshot / sub).is_symlink():
            (copy / sub).unlink()
            return True
        if (copy / sub).exists() and not (copy / sub).is_dir():
            (copy / sub).unlink()
            return True
    return False


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()

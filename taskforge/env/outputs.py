"""Files the build writes into the project's tree, carried into the snapshot the tasks use.

The editable install runs in a throwaway copy of the snapshot (env/build.py). What it writes
there the tests may need: the version module of hatch-vcs and setuptools-scm (ignored by
git, so missing from a clone), compiled extensions built in place. They are collected as
build outputs and become part of a derived snapshot (the original files plus the outputs),
which every workspace copies.

A compiled module beside a Python module of the same name is a compiled copy of it (mypyc,
Cython's pure-Python mode): Python imports it before the .py, so the original code would
survive any deletion from the .py (the Python cousin of the decompiled `.class`). Such a
file is left out, and the tests run the Python code the deletions edit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from taskforge.cache import digest
from taskforge.model import Environment, Snapshot
from taskforge.sources.store import recall, remember, snapshot_from_tree

# Directories a build leaves behind that are not outputs the tests use.
_NOT_OUTPUTS_DIRS = {"build", "dist", ".eggs", "__pycache__", ".pytest_cache", ".git", ".tox",
                     ".nox", ".hypothesis"}
_NOT_OUTPUTS_FILES = (".pyc", ".pyo", ".o", ".obj", ".lib", ".exp")
EXTENSION_SUFFIXES = (".so", ".pyd", ".dylib")
MAX_OUTPUT_BYTES = 64 << 20  # one output larger than this is not carried (a bundled binary)


def collect_outputs(build_copy: Path, original: Path, dest: Path) -> tuple[list[str], list[str]]:
    """Copy into `dest` every file the build added to `build_copy` (relative to `original`);
    return the carried paths and one note per file left out."""
    carried: list[str] = []
    left_out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(build_copy):
        dirnames[:] = sorted(d for d in dirnames if d not in _NOT_OUTPUTS_DIRS
                             and not d.endswith((".egg-info", ".dist-info")))
        rel_dir = Path(dirpath).relative_to(build_copy)
        for name in sorted(filenames):
            rel = rel_dir / name
            source = build_copy / rel
            if os.path.lexists(original / rel) or name.endswith(_NOT_OUTPUTS_FILES) \
                    or source.is_symlink() or not source.is_file():
                continue
            if name.endswith(EXTENSION_SUFFIXES) and \
                    (original / rel_dir / f"{name.split('.', 1)[0]}.py").is_file():
                left_out.append(f"{rel.as_posix()}: a compiled copy of "
                                f"{(rel_dir / name.split('.', 1)[0]).as_posix()}.py, left out "
                                "(it would keep the original code of any deletion)")
                continue
            if source.stat().st_size > MAX_OUTPUT_BYTES:
                left_out.append(f"{rel.as_posix()}: larger than {MAX_OUTPUT_BYTES >> 20} MB")
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            carried.append(rel.as_posix())
    return carried, left_out


def with_build_outputs(snapshot: Snapshot, env: Environment, cache: Path) -> Snapshot:
    """`snapshot` with the environment's build outputs added (a snapshot of its own, cached);
    `snapshot` itself when the build wrote none."""
    if not env.outputs:
        return snapshot
    key = digest("with-build-outputs", snapshot.id, env.key)
    known = recall(cache, key)
    if known:
        return known
    (cache / "tmp").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache / "tmp", prefix="outputs-") as scratch:
        tree = Path(scratch) / snapshot.name
        shutil.copytree(snapshot.root, tree, symlinks=True)
        shutil.copytree(env.outputs_dir, tree, symlinks=True, dirs_exist_ok=True)
        # Every file as it is: the outputs are often what .gitignore names.
        derived = snapshot_from_tree(tree, name=snapshot.name, source=snapshot.source,
                                     cache=cache, archive=True, prune=False)
    remember(cache, key, derived)
    return derived

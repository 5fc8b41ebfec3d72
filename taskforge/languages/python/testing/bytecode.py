"""Bytecode of a snapshot's files, made once per snapshot and copied into verification
workspaces, so that a fresh pytest process does not compile and assertion-rewrite the same
modules for every candidate: on click, 0.45 s of a one-test process became 0.25 s.

Two kinds, both loaded only when they match the source they stand for:
- source modules, compiled here with the environment's interpreter as hash-checked bytecode
  (compiling runs none of the project's code);
- test modules, as pytest's assertion rewriter leaves them, which only pytest can make:
  harvested from one collect-only run over a scratch copy of the snapshot, in the sandbox.
  Pytest checks them against the source's hash; anything else that run wrote is dropped.

Only verification workspaces get them, and never for a file the deletion changed. A task's
workspace, a grading copy and the leak scan see no bytecode: an agent's file must never meet
bytecode of the original, however its time stamps are set.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import subprocess
from collections.abc import Collection, Sequence
from pathlib import Path, PurePosixPath

from taskforge.cache import build_once, digest
from taskforge.fileio import write_new
from taskforge.languages.base import Runner
from taskforge.languages.python.files import DEFAULT_TEST_FILES
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Snapshot
from taskforge.workspace import scratch_copy

FORMAT = 1
PYCACHE = "__pycache__"


def snapshot_bytecode(snapshot: Snapshot, runner: Runner) -> Path:
    """The directory (a tree of `__pycache__` dirs mirroring the snapshot) of the snapshot's
    bytecode for `runner.env`, in `runner.cache`; built on first use."""
    key = digest("bytecode", FORMAT, snapshot.id, runner.env.key, runner.sandbox.identity())[:32]
    final = runner.cache / "bytecode" / key
    final.parent.mkdir(parents=True, exist_ok=True)
    return build_once(final, lambda staging: _build(snapshot, runner, staging))


def _build(snapshot: Snapshot, runner: Runner, staging: Path) -> None:
    env = runner.env
    with scratch_copy(snapshot.root, runner.cache, prefix="bytecode-") as workspace:
        # An empty PYTHONDONTWRITEBYTECODE lets pytest write its rewritten test modules.
        run_tests(env, workspace, runner.sandbox, timeout=runner.timeout,
                  extra_args=["--collect-only"], extra_env={"PYTHONDONTWRITEBYTECODE": ""})
        rewritten = [p for p in _pycache_files(workspace) if "-pytest-" in p.name]
        for pyc in rewritten:
            _copy(workspace / pyc, staging / pyc)
        for pyc in _pycache_files(workspace):  # the interpreter's own, from an untrusted run
            (workspace / pyc).unlink()
        compile_tree(str(env.venv / "bin" / "python"), workspace)
        for pyc in _pycache_files(workspace):
            _copy(workspace / pyc, staging / pyc)


def compile_tree(python: str, root: Path) -> None:
    """Hash-checked bytecode for every Python file under `root`, by `python`'s compileall:
    isolated (-I) and without `site` (-S), so no `.pth` file of the environment runs. Files
    that do not compile are left without; this is only a speed-up."""
    subprocess.run([python, "-I", "-S", "-m", "compileall", "-q", "-j0",
                    "--invalidation-mode", "checked-hash", str(root)],
                   capture_output=True, check=False)


def seed_bytecode(workspace: Path, bytecode: Path, changed: Collection[str],
                  run_files: Collection[str] | None = None) -> int:
    """Copy the bytecode of every file but the `changed` ones (relative POSIX paths) into
    `workspace`; returns how many files were copied. Copies, not links: a test that
    rewrites a file in place must not change the cache. Given `run_files` (the files of
    every test the runs will run), a test module's (pytest's `DEFAULT_TEST_FILES`) bytecode,
    pytest's rewritten and the plain, is copied only for those: pytest imports no other
    (and one imported all the same is rewritten from its source, as it would be without
    any bytecode). Test modules
    are most of a tree's bytecode (55-65% of the bytes of the six bench packages'): a
    boltons task's seeding took 4.1-6.1 ms with all of it, 1.0 with its own (medians, two
    A/B pairs)."""
    changed = set(changed)
    files: Sequence[tuple[PurePosixPath, str, bytes | None]] | None = _kept_tree(str(bytecode))
    if files is None:  # too big to hold: copied file by file
        files = [(pyc, source_of(pyc), None) for pyc in _pycache_files(bytecode)]
    made: set[PurePosixPath] = set()
    copied = 0
    root = os.fspath(workspace)
    for pyc, source, data in files:
        if source in changed or (run_files is not None and source not in run_files
                                 and _is_test_module(source.rsplit("/", 1)[-1])):
            continue
        if pyc.parent not in made:
            (workspace / pyc.parent).mkdir(parents=True, exist_ok=True)
            made.add(pyc.parent)
        if data is None:
            shutil.copyfile(bytecode / pyc, workspace / pyc)
        else:
            write_new(os.path.join(root, pyc), data)
        copied += 1
    return copied


KEPT_BYTES = 64 * 1024 * 1024  # a bigger tree is copied from disk each time


@functools.lru_cache(maxsize=4)
def _kept_tree(bytecode: str) -> tuple[tuple[PurePosixPath, str, bytes], ...] | None:
    """The files of a bytecode tree, read once per process: a tree is built once per snapshot
    and environment and never changes after (`build_once`), and every verification
    workspace gets all of it (walking it and copying file by file was 16 ms of boltons'
    117 ms task). None for a tree past KEPT_BYTES."""
    root = Path(bytecode)
    files = _pycache_files(root)
    if sum((root / pyc).stat().st_size for pyc in files) > KEPT_BYTES:
        return None
    return tuple((pyc, source_of(pyc), (root / pyc).read_bytes()) for pyc in files)


def _is_test_module(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_TEST_FILES)


def source_of(pyc: PurePosixPath) -> str:
    """`pkg/__pycache__/mod.cpython-311.pyc` (or pytest's `mod.cpython-311-pytest-9.2.0.pyc`)
    -> `pkg/mod.py`: a module's name holds no dot, so it ends at the first one."""
    return (pyc.parent.parent / (pyc.name.split(".", 1)[0] + ".py")).as_posix()


def _pycache_files(root: Path) -> list[PurePosixPath]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        if os.path.basename(dirpath) == PYCACHE:
            rel = PurePosixPath(Path(dirpath).relative_to(root).as_posix())
            found += [rel / name for name in filenames if name.endswith(".pyc")]
    return sorted(found)


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)

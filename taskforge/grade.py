"""Grade a solution workspace: restore the tests, run them, turn the results into a reward.

The grader works on a copy of the solution, never in place. Test files, conftest.py files and
pytest configuration are put back as they were in the snapshot and added ones are removed,
so editing tests cannot change the reward; what was changed is reported in `tampered`.
"""

from __future__ import annotations

import filecmp
import shutil
import time
from pathlib import Path
from typing import Any

from taskforge.delete import is_test_file
from taskforge.model import Environment, GradeResult
from taskforge.sandbox import Sandbox
from taskforge.testing.runner import run_tests
from taskforge.workspace import scratch_dir

PYTEST_CONFIG = ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "conftest.py")
# Files Python or pytest load on their own: a solution must not bring any.
STARTUP_HOOKS = ("sitecustomize.py", "usercustomize.py")
# Modules of the test machinery a solution could shadow from an import root.
MACHINERY = ("pytest", "_pytest", "pluggy", "coverage", "py", "taskforge_pytest_plugin")


def _protected(rel: str) -> bool:
    return is_test_file(rel) or Path(rel).name in PYTEST_CONFIG


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if (p.is_file() or p.is_symlink()) and ".git" not in p.relative_to(root).parts}


def restore_tests(workspace: Path, snapshot_root: Path) -> list[str]:
    """Put every protected file back as in the snapshot; return what had been tampered with."""
    tampered = []
    original = {f for f in _files(snapshot_root) if _protected(f)}
    for rel in sorted(f for f in _files(workspace) if _protected(f)):
        if rel not in original:
            (workspace / rel).unlink()
            tampered.append(f"added {rel}")
    for rel in sorted(original):
        target = workspace / rel
        if not target.exists():
            tampered.append(f"deleted {rel}")
        elif not filecmp.cmp(snapshot_root / rel, target, shallow=False):
            tampered.append(f"edited {rel}")
        else:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(snapshot_root / rel, target)
    return tampered


def remove_injections(workspace: Path, snapshot_root: Path, import_roots: tuple[str, ...]) -> list[str]:
    """Delete startup hooks, .pth files and shadows of the test machinery the solution added."""
    original = _files(snapshot_root)
    found = []
    for rel in sorted(_files(workspace) - original):
        path = Path(rel)
        if path.name in STARTUP_HOOKS or path.suffix == ".pth":
            found.append(rel)
    # `python -m pytest` puts the working directory first on sys.path, then the import roots.
    for root in sorted({".", *import_roots}):
        for name in MACHINERY:
            for candidate in (Path(root) / f"{name}.py", Path(root) / name):
                rel = candidate.as_posix().removeprefix("./")
                if (workspace / rel).exists() and not (snapshot_root / rel).exists():
                    found.append(rel)
    for rel in sorted(set(found)):
        target = workspace / rel
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    return [f"added {rel}" for rel in sorted(set(found))]


def grade_workspace(record: dict[str, Any], solution: Path, snapshot_root: Path,
                    env: Environment, sandbox: Sandbox, cache: Path,
                    timeout: float = 300.0) -> GradeResult:
    start = time.monotonic()
    expected = sorted(set(record["FAIL_TO_PASS"]) | set(record["PASS_TO_PASS"]))
    with scratch_dir(cache, prefix="grade-") as scratch:
        copy = scratch / "workspace"
        shutil.copytree(solution, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        tampered = restore_tests(copy, snapshot_root)
        tampered += remove_injections(copy, snapshot_root, env.pythonpath)
        run = run_tests(env, copy, sandbox, timeout=timeout, select=expected)
    passed = tuple(t for t in expected if run.outcomes.get(t) == "passed")
    failed = tuple(t for t in expected if run.outcomes.get(t) in ("failed", "skipped"))
    errors = tuple(t for t in expected if run.outcomes.get(t) in ("error", None))
    resolved = len(passed) == len(expected) and not run.timed_out
    return GradeResult(reward=1.0 if resolved else 0.0, resolved=resolved, passed=passed,
                       failed=failed, errors=errors, tampered=tuple(tampered),
                       duration_s=round(time.monotonic() - start, 3))

"""Which files of a Python project are tests, and which the grader puts back: one definition
for every stage (candidates, hidden tests, grading, export). Light on purpose: a data loader
that grades imports this, not the deleters."""

from __future__ import annotations

from pathlib import PurePosixPath

# pytest's default test file patterns (a project's `python_files` may name others).
DEFAULT_TEST_FILES = ("test_*.py", "*_test.py")
# Test modules pytest does not collect by default but projects run directly (`python tests.py`).
STRAY_TEST_FILES = ("tests.py", "test.py")
TEST_DIRS = ("tests", "test", "testing")
# Files that hold nothing but pytest settings: any difference is tampering.
PYTEST_FILES = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "conftest.py")
# Files that hold pytest settings next to other things (project metadata, tox envs). They are
# always restored whole (the environment is rebuilt from the record, so nothing else in them
# can matter), and reported only when their pytest settings differ.
SHARED_CONFIG = ("pyproject.toml", "setup.cfg", "tox.ini")


def is_test_file(path: str) -> bool:
    """A test module, a conftest, a single-file suite (`tests.py`, unittest style) or any file
    under a test directory (helpers and data)."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or name in STRAY_TEST_FILES or any(p in TEST_DIRS for p in parts[:-1]))


def is_protected(rel: str) -> bool:
    """A file the grader restores: tests, their data and helpers, and pytest configuration."""
    name = PurePosixPath(rel).name
    return is_test_file(rel) or name in PYTEST_FILES or name in SHARED_CONFIG

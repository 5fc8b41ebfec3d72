"""`make lint`'s import contracts (pyproject.toml, import-linter) hold on the tree, and break
when a lower layer imports a higher one or a stage imports a language's own modules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

LINT = Path(sys.executable).with_name("lint-imports")


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--config", str(tree / "pyproject.toml"), "--no-cache"],
                          cwd=tree, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(tree)})


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and its contracts, to break on purpose."""
    shutil.copytree(REPO_ROOT / "taskforge", tmp_path / "taskforge",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_its_contracts(tree: Path) -> None:
    proc = lint(tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    # A source that asks the pipeline: a lower layer importing a higher one.
    ("sources/git.py", "from taskforge.generate import generate", "layers below them"),
    # A stage that reaches past the boundary into Python's own modules.
    ("verify/protocol.py", "from taskforge.languages.python.files import is_test_file",
     "registry knows"),
])
def test_an_import_against_the_contracts_fails_lint(tree: Path, module: str, line: str,
                                                    contract: str) -> None:
    path = tree / "taskforge" / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    proc = lint(tree)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 broken" in proc.stdout and contract in proc.stdout

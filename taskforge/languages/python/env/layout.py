"""Where a project keeps its code and tests, and which tests need the network.

Read from the files (parsed, never imported). The facts go into the environment record so a
reader sees what taskforge assumed; the network markers and stray test files change the test
command.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from taskforge.languages.python.files import DEFAULT_TEST_FILES, STRAY_TEST_FILES

# Marker names projects use for tests that reach the network. The sandbox has none, so
# these tests would fail for a reason that has nothing to do with the code.
NETWORK_MARKERS = ("network", "online", "internet", "requires_network", "needs_network",
                   "requires_internet", "remote_data", "webtest", "external")
_SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "build", "dist",
              "node_modules", "__pycache__", ".eggs"}


@dataclass
class Layout:
    test_files: list[str] = field(default_factory=list)
    conftests: list[str] = field(default_factory=list)
    src_layout: bool = False
    namespace_packages: list[str] = field(default_factory=list)
    unittest_files: int = 0
    data_files: int = 0
    network_markers: dict[str, list[str]] = field(default_factory=dict)  # marker -> files
    stray_test_files: list[str] = field(default_factory=list)
    imports: set[str] = field(default_factory=set)  # top-level modules tests and conftests import
    markers: set[str] = field(default_factory=set)  # every `mark.x` tests and conftests use

    def decisions(self) -> list[str]:
        out = []
        if self.src_layout:
            out.append("layout: src/ (imported from the workspace's src)")
        for name in self.namespace_packages:
            out.append(f"layout: namespace package {name} (no __init__.py)")
        out.append(f"tests: {len(self.test_files)} test files"
                   + (f", {self.unittest_files} unittest-style (run by pytest)"
                      if self.unittest_files else ""))
        if len(self.conftests) > 1:
            out.append(f"tests: conftest.py at {len(self.conftests)} levels "
                       f"({', '.join(self.conftests)})")
        if self.data_files:
            out.append(f"tests: {self.data_files} data files beside the tests (kept in the "
                       "workspace)")
        for marker, files in sorted(self.network_markers.items()):
            out.append(f"excluded: tests marked {marker!r} ({len(files)} files): they need the "
                       "network, which the sandbox denies")
        if self.stray_test_files:
            out.append(f"tests: {', '.join(self.stray_test_files)} passed to pytest explicitly "
                       "(not matched by its default file patterns)")
        return out


def _walk(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS
                             and not d.endswith(".egg-info") and not d.startswith("."))
        yield Path(dirpath), sorted(filenames)


def _markers_used(tree: ast.AST) -> set[str]:
    """Names `x` of every `mark.x` the module mentions (decorators, pytestmark, params)."""
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and (
                (isinstance(node.value, ast.Attribute) and node.value.attr == "mark")
                or (isinstance(node.value, ast.Name) and node.value.id == "mark"))}


def _imported(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _is_unittest(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name in ("TestCase", "IsolatedAsyncioTestCase"):
                    return True
    return False


def read_layout(root: Path, python_files: list[str] | None = None) -> Layout:
    layout = Layout()
    patterns = tuple(python_files or DEFAULT_TEST_FILES)
    test_dirs: set[Path] = set()
    stray: list[str] = []
    for directory, files in _walk(root):
        rel_dir = directory.relative_to(root).as_posix()
        for name in files:
            rel = f"{name}" if rel_dir == "." else f"{rel_dir}/{name}"
            if name == "conftest.py":
                layout.conftests.append(rel_dir)
            if name in STRAY_TEST_FILES:
                stray.append(rel)
            if name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in patterns):
                layout.test_files.append(rel)
                test_dirs.add(directory)
    if not layout.test_files:
        # anywhere: jsonpointer's tests.py, decorator's tests/test.py, zope.event's
        # src/zope/event/tests.py (inside the package)
        layout.stray_test_files = sorted(stray)
    conftests = [c + "/conftest.py" if c != "." else "conftest.py" for c in layout.conftests]
    for rel in layout.test_files + layout.stray_test_files + conftests:
        try:
            tree = ast.parse((root / rel).read_text(errors="replace"))
        except (SyntaxError, ValueError):
            continue
        layout.imports |= _imported(tree)
        layout.markers |= _markers_used(tree)
        if rel in conftests:
            continue
        layout.unittest_files += _is_unittest(tree)
        for marker in sorted(_markers_used(tree) & set(NETWORK_MARKERS)):
            layout.network_markers.setdefault(marker, []).append(rel)
    # Data files under the outermost test directories (a nested one is counted once).
    outermost = [d for d in test_dirs
                 if d != root and not any(p != root and p in test_dirs for p in d.parents)]
    for directory in sorted(outermost):
        for path in directory.rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in \
                    path.parts:
                layout.data_files += 1
    src = root / "src"
    layout.src_layout = src.is_dir() and any(p.is_dir() for p in src.iterdir())
    layout.namespace_packages = _namespace_packages(src if layout.src_layout else root)
    return layout


def _namespace_packages(base: Path) -> list[str]:
    """Top-level directories without __init__.py whose subdirectories are packages."""
    found = []
    for child in sorted(base.iterdir()):
        if not child.is_dir() or child.name in _SKIP_DIRS or child.name.startswith((".", "_")) \
                or child.name in ("tests", "test", "docs", "doc", "src", "scripts", "examples") \
                or (child / "__init__.py").exists() or not child.name.isidentifier():
            continue
        if any((sub / "__init__.py").is_file() for sub in child.iterdir() if sub.is_dir()):
            found.append(child.name)
    return found


def network_exclusion(markers: list[str]) -> str:
    """A `-m` expression, without spaces, that deselects the marked tests:
    `not(network)and(not(online))` (the record keeps the command as space-joined words)."""
    return "and".join(f"(not({m}))" for m in sorted(markers))

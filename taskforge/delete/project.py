"""A Python project's source files (tests excluded), parsed once with LibCST."""

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst

from taskforge.sanitize.rules import VCS_DIRS, rule_for

NOT_SOURCE_FILES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"}
NOT_SOURCE_DIRS = {"tests", "test", "testing", "docs", "doc", "examples", "example",
                   "benchmarks", "bench", "scripts", "tools"}


def is_test_file(path: str) -> bool:
    parts = Path(path).parts
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in ("tests", "test", "testing") for p in parts[:-1]))


class PythonProject:
    """The importable, non-test Python files of a tree, under its import roots."""

    def __init__(self, root: Path, import_roots: tuple[str, ...]) -> None:
        self.root = root
        self.import_roots = import_roots
        self.skipped: dict[str, str] = {}  # path -> why it was skipped (syntax errors)

    @functools.cached_property
    def source_files(self) -> tuple[str, ...]:
        found: set[str] = set()
        for import_root in self.import_roots:
            base = self.root / import_root
            for path in sorted(base.rglob("*.py")):
                rel = path.relative_to(self.root)
                inside = rel.relative_to(import_root) if import_root != "." else rel
                if any(p in VCS_DIRS or rule_for(p, True) or p.startswith(".")
                       for p in rel.parts[:-1]):
                    continue
                if inside.parts[0] in NOT_SOURCE_DIRS or rel.name in NOT_SOURCE_FILES:
                    continue
                if is_test_file(rel.as_posix()) or path.is_symlink():
                    continue
                found.add(rel.as_posix())
        return tuple(sorted(found))

    def module_name(self, path: str) -> str:
        rel = Path(path)
        for import_root in sorted(self.import_roots, key=len, reverse=True):
            if import_root != "." and rel.is_relative_to(import_root):
                rel = rel.relative_to(import_root)
                break
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)

    def text(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    @functools.cache  # noqa: B019 - one project object per snapshot, parsed once
    def parse(self, path: str) -> cst.Module | None:
        """The file's syntax tree, or None (and a note in `skipped`) when it does not parse."""
        try:
            return cst.parse_module(self.text(path))
        except cst.ParserSyntaxError as e:
            self.skipped[path] = f"syntax error at line {e.raw_line}: file skipped"
        except UnicodeDecodeError:
            self.skipped[path] = "not UTF-8: file skipped"
        return None

    def parsed_files(self) -> list[tuple[str, cst.Module]]:
        return [(p, m) for p in self.source_files if (m := self.parse(p)) is not None]

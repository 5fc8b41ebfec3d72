"""A JavaScript/TypeScript project's source files (tests, configuration, dependencies and
build outputs excluded), parsed once with tree-sitter."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from tree_sitter import Tree

from taskforge.artifacts import VCS_DIRS, rule_for
from taskforge.languages.javascript.delete.syntax import parse
from taskforge.languages.javascript.files import is_runner_config, is_source, is_test_file
from taskforge.languages.strategy import Strategy

_WORD = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")
NOT_SOURCE_DIRS = {"node_modules", "docs", "doc", "examples", "example", "benchmarks", "bench",
                   "scripts", "tools", "coverage", "dist", "build", "types"}


class JavaScriptProject:
    """The non-test JavaScript/TypeScript files of a tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.skipped: dict[str, str] = {}  # path -> why it was skipped (parse errors)

    @functools.cached_property
    def source_files(self) -> tuple[str, ...]:
        return tuple(rel for rel in self.all_files
                     if is_source(rel) and not is_test_file(rel) and not is_runner_config(rel)
                     and not Path(rel).name.endswith((".config.js", ".config.ts", ".config.mjs",
                                                      ".config.cjs"))
                     and Path(rel).parts[0] not in NOT_SOURCE_DIRS)

    @functools.cached_property
    def all_files(self) -> tuple[str, ...]:
        """Every JavaScript/TypeScript file, tests included: whatever may import a module."""
        found = []
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if any(p in VCS_DIRS or p == "node_modules" or p.startswith(".") or rule_for(p, True)
                   for p in rel.parts[:-1]):
                continue
            if is_source(rel.as_posix()) and path.is_file() and not path.is_symlink():
                found.append(rel.as_posix())
        return tuple(found)

    def text(self, path: str) -> str:
        return self.source(path).decode("utf-8")

    @functools.cache  # noqa: B019 - one project per snapshot, read once per file
    def source(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    @functools.cache  # noqa: B019 - parsed once per file
    def tree(self, path: str) -> Tree | None:
        """The file's tree, or None when it does not parse cleanly (not a candidate)."""
        try:
            tree = parse(path, self.source(path))
        except OSError as e:
            self.skipped[path] = f"unreadable: {e.strerror}"
            return None
        if tree.root_node.has_error:
            self.skipped[path] = "tree-sitter finds a syntax error"
            return None
        return tree

    def parsed_files(self) -> list[tuple[str, Tree]]:
        """Every source file that parses (the others land in `skipped`), with its tree."""
        return [(path, tree) for path in self.source_files
                if (tree := self.tree(path)) is not None]

    @functools.cache  # noqa: B019
    def words(self, path: str) -> frozenset[bytes]:
        try:
            return frozenset(_WORD.findall(self.source(path)))
        except OSError:
            return frozenset()

    def mentioned_outside(self, name: str, path: str) -> list[str]:
        """The other files (tests included) that mention `name` anywhere."""
        word = name.encode()
        return [p for p in self.all_files if p != path and word in self.words(p)]

    def module_name(self, path: str) -> str:
        """`src/duration.js` -> `src/duration`: how a symbol names its file."""
        return path.rsplit(".", 1)[0]

    def symbol(self, path: str, qualname: str) -> str:
        return f"{self.module_name(path)}.{qualname}"


class JavaScriptStrategy(Strategy):
    language = "javascript"

"""A Java project's main sources (`src/main/java`, tests excluded), parsed once with
tree-sitter-java."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from tree_sitter import Tree

from taskforge.languages.java.delete.syntax import methods, parse
from taskforge.languages.java.files import MAIN_DIR, TEST_DIR, java_files
from taskforge.languages.strategy import Strategy

_WORD = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")


class JavaProject:
    """The `.java` files under `src/main/java`; the tests under `src/test/java` are read to
    know who calls what."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.skipped: dict[str, str] = {}

    @functools.cached_property
    def source_files(self) -> tuple[str, ...]:
        return tuple(java_files(self.root, MAIN_DIR))

    @functools.cached_property
    def test_files(self) -> tuple[str, ...]:
        return tuple(java_files(self.root, TEST_DIR))

    def text(self, path: str) -> str:
        return self.source(path).decode("utf-8")

    @functools.cache  # noqa: B019 - one project per snapshot, read once per file
    def source(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    @functools.cache  # noqa: B019 - parsed once per file
    def tree(self, path: str) -> Tree | None:
        """The file's tree, or None when it does not parse cleanly (not a candidate)."""
        try:
            tree = parse(self.source(path))
        except OSError as e:
            self.skipped[path] = f"unreadable: {e.strerror}"
            return None
        if tree.root_node.has_error:
            self.skipped[path] = "tree-sitter finds a syntax error"
            return None
        return tree

    def parsed_files(self) -> list[tuple[str, Tree]]:
        """Every source file that parses (the others land in `skipped`), with its tree:
        `taskforge ingest` asks for them all, to report what does not parse."""
        return [(path, tree) for path in self.source_files
                if (tree := self.tree(path)) is not None]

    @functools.cache  # noqa: B019
    def words(self, path: str) -> frozenset[bytes]:
        try:
            return frozenset(_WORD.findall(self.source(path)))
        except OSError:
            return frozenset()

    def mentioned_in(self, name: str, files: tuple[str, ...]) -> list[str]:
        word = name.encode()
        return [p for p in files if word in self.words(p)]

    @functools.cached_property
    def abstract_names(self) -> frozenset[str]:
        """Names of methods declared without a body (interface and abstract methods): a
        method of that name may implement one, so it is never removed."""
        found = set()
        for path in self.source_files:
            tree = self.tree(path)
            for method in methods(tree) if tree is not None else ():
                if method.body is None or method.owner_kind == "interface_declaration":
                    found.add(method.name)
        return frozenset(found)

    def package(self, path: str) -> str:
        rel = path.removeprefix(MAIN_DIR + "/")
        return rel.rsplit("/", 1)[0].replace("/", ".") if "/" in rel else ""

    def symbol(self, path: str, qualname: str) -> str:
        """`javademo.money.Money.plus`: the package and the method's qualified name."""
        package = self.package(path)
        return f"{package}.{qualname}" if package else qualname

    def qualname(self, path: str, symbol: str) -> str:
        package = self.package(path)
        return symbol.removeprefix(package + ".") if package else symbol


class JavaStrategy(Strategy):
    language = "java"

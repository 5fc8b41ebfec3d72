"""A Python project's source files (tests excluded), parsed once with LibCST."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from taskforge.artifacts import VCS_DIRS, rule_for
from taskforge.languages.python.files import is_test_file
from taskforge.languages.strategy import Strategy

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NOT_SOURCE_FILES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"}
NOT_SOURCE_DIRS = {"tests", "test", "testing", "docs", "doc", "examples", "example",
                   "benchmarks", "bench", "scripts", "tools"}


class PythonProject:
    """The importable, non-test Python files of a tree, under its import roots."""

    def __init__(self, root: Path, import_roots: tuple[str, ...]) -> None:
        self.root = root
        self.import_roots = import_roots
        self.skipped: dict[str, str] = {}  # path -> why it was skipped (syntax errors)
        self._positions: dict[str, Mapping[cst.CSTNode, CodeRange]] = {}

    def __getstate__(self) -> dict[str, object]:
        # Positions are keyed by this process's parsed trees (`parse` is cached per process);
        # a copy in another process (a Ray worker) parses anew and computes its own.
        return {**self.__dict__, "_positions": {}}

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

    @functools.cached_property
    def all_python_files(self) -> tuple[str, ...]:
        """Every Python file of the tree, tests included: whatever may import a source module."""
        found = []
        for path in sorted(self.root.rglob("*.py")):
            rel = path.relative_to(self.root)
            if any(p in VCS_DIRS or rule_for(p, True) or p.startswith(".") for p in rel.parts[:-1]):
                continue
            if not path.is_symlink():
                found.append(rel.as_posix())
        return tuple(found)

    @functools.cache  # noqa: B019 - as parse(): once per file
    def words(self, path: str) -> frozenset[str]:
        """Every identifier-like word of a file, strings and comments included: a name a test
        patches by its dotted path in a string counts as a use."""
        try:
            return frozenset(_WORD.findall(self.text(path)))
        except (UnicodeDecodeError, OSError):
            return frozenset()

    def mentioned_outside(self, name: str, path: str) -> list[str]:
        """The other Python files (tests included) that mention `name` anywhere."""
        return [p for p in self.all_python_files if p != path and name in self.words(p)]

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

    def keep_positions(self, path: str, wrapper: MetadataWrapper) -> None:
        """Keep the positions `wrapper` (over `parse(path)`'s own tree, not a copy) computed,
        for `positions`: a visitor over every file (candidate discovery) and a deletion later
        need the same ones, and computing them regenerates the whole file's code."""
        if path not in self._positions:
            self._positions[path] = wrapper.resolve(PositionProvider)

    def positions(self, path: str) -> Mapping[cst.CSTNode, CodeRange]:
        """Where every node of the file's parsed tree starts and ends (the tree of `parse`);
        kept, as the tree is."""
        if path not in self._positions:
            module = self.parse(path)
            if module is None:
                return {}
            self.keep_positions(path, MetadataWrapper(module, unsafe_skip_copy=True))
        return self._positions[path]

    @functools.cache  # noqa: B019 - as parse(): once per file
    def functions_by_line(self, path: str) -> Mapping[int, cst.FunctionDef]:
        """The file's functions (nodes of its parsed tree) by the line that holds their name."""
        positions = self.positions(path)
        return {positions[node.name].start.line: node for node in positions
                if isinstance(node, cst.FunctionDef)}

    @functools.cache  # noqa: B019 - as parse(): once per file
    def statement_codes(self, path: str) -> tuple[str, tuple[str, ...], str] | None:
        """The file's text cut at its top-level statements: (header, one piece per statement,
        footer), or None when the pieces do not join back to the text (a file without a
        final newline), where only a whole-module rebuild is exact."""
        module = self.parse(path)
        if module is None:
            return None
        header = "".join(module.code_for_node(line) for line in module.header)
        pieces = tuple(module.code_for_node(statement) for statement in module.body)
        footer = "".join(module.code_for_node(line) for line in module.footer)
        if header + "".join(pieces) + footer != self.text(path):
            return None
        return header, pieces, footer

    def replace_node(self, path: str, old: cst.CSTNode, new: cst.CSTNode) -> str:
        """The file's text with `old` (a node of its parsed tree) replaced by `new`."""
        return self.replace_nodes(path, {old: new})

    def replace_nodes(self, path: str, changes: Mapping[cst.CSTNode, cst.CSTNode | None]) -> str:
        """The file's text with each node of its parsed tree replaced by its value in
        `changes` (None removes it; a block left empty gets `pass`).

        Only the top-level statements that hold changed nodes are rebuilt: on a module of
        thousands of lines that is milliseconds, where a transformer over the whole tree
        takes seconds."""
        module = self.parse(path)
        assert module is not None, path
        positions = self.positions(path)
        lines = {positions[old].start.line for old in changes}
        body: list[cst.BaseStatement] = []
        touched = set()
        for statement in module.body:
            where = positions[statement]
            inside = {ln for ln in lines if where.start.line <= ln <= where.end.line}
            touched |= inside
            if not inside or statement in changes:
                body.append(statement)
            else:
                body.append(statement.visit(_Replacer(changes, positions, inside)))  # type: ignore[arg-type]
        if touched != lines:
            raise ValueError(f"{path}: nodes at lines {sorted(lines - touched)} are not in the module")
        new_body = _replaced(module.body, body, changes)
        spliced = self._splice(path, module, new_body, changes)
        if spliced is not None:
            return spliced
        cut = self.statement_codes(path)
        if cut is None:
            return module.with_changes(body=new_body).code
        # Untouched statements keep their text; only the rebuilt ones are generated again.
        header, pieces, footer = cut
        unchanged = {id(statement): piece for statement, piece in zip(module.body, pieces,
                                                                      strict=True)}
        return header + "".join(unchanged.get(id(statement)) or module.code_for_node(statement)
                                for statement in new_body) + footer

    def _splice(self, path: str, module: cst.Module, new_body: Sequence[cst.BaseStatement],
                changes: Mapping[cst.CSTNode, cst.CSTNode | None]) -> str | None:
        """The file's text with only the top-level statements that changed cut out and
        replaced (`new_body`: the module's statements after `changes`, untouched ones the
        same objects), or None where this cannot be exact (the caller then cuts the file at
        every statement, `statement_codes`: code generation of the whole module, where this
        generates only the statements that changed; about as fast over a package's
        deletions, `bench/apply_cost.py`, and it keeps a byte-order mark libcst's code drops).

        With a final newline the module's text is exactly its statements' code one after
        another (libcst's round trip), so a statement's own code (generated once per statement)
        is a piece of the text; found exactly once, that is where it stands. Otherwise (two
        identical statements, a piece that also occurs inside another one) None."""
        text = self.text(path)
        if not module.has_trailing_newline or not text.endswith("\n"):  # read_text: no \r
            return None
        updated = iter(new_body)
        edits: list[tuple[int, int, str]] = []
        for original in module.body:
            new = None if original in changes and changes[original] is None else next(updated)
            if new is original:
                continue
            piece = self._piece(path, original)
            start = text.find(piece)
            if start < 0 or text.find(piece, start + 1) >= 0:
                return None
            edits.append((start, start + len(piece),
                          "" if new is None else module.code_for_node(new)))
        out, at = [], 0
        for start, end, code in sorted(edits):
            if start < at:
                return None
            out += [text[at:start], code]
            at = end
        return "".join(out) + text[at:]

    @functools.cache  # noqa: B019 - the statement of a kept tree: its code, once
    def _piece(self, path: str, statement: cst.BaseStatement) -> str:
        module = self.parse(path)
        assert module is not None, path
        return module.code_for_node(statement)

    def parsed_files(self) -> list[tuple[str, cst.Module]]:
        return [(p, m) for p in self.source_files if (m := self.parse(p)) is not None]


def _replaced(originals: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement],
              changes: Mapping[cst.CSTNode, cst.CSTNode | None]) -> list[cst.BaseStatement]:
    """A block's statements with the changes applied. A removed statement's blank lines pass
    to the statement after it, so the spacing before it is kept (none at the top of a file
    or block); its comments go with it."""
    result: list[cst.BaseStatement] = []
    inherited: Sequence[cst.EmptyLine] | None = None
    for original, statement in zip(originals, updated, strict=True):
        new = changes.get(original, statement)
        if new is None:
            if inherited is None:
                inherited = [ln for ln in original.leading_lines if ln.comment is None]
            continue
        if inherited is not None:
            comments = [ln for ln in new.leading_lines if ln.comment is not None]  # type: ignore[attr-defined]
            new = new.with_changes(leading_lines=[*inherited, *comments])
            inherited = None
        result.append(new)  # type: ignore[arg-type]
    return result


class _Replacer(cst.CSTTransformer):
    """Replaces or removes the given nodes (matched by identity) in one pass."""

    def __init__(self, changes: Mapping[cst.CSTNode, cst.CSTNode | None],
                 positions: Mapping[cst.CSTNode, CodeRange], lines: set[int]) -> None:
        super().__init__()
        self.changes = changes
        self.positions = positions
        self.lines = lines

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Only nodes whose lines hold a changed node can contain one: the rest of a
        # thousand-line class is not walked.
        where = self.positions.get(node)
        return where is None or any(where.start.line <= ln <= where.end.line
                                    for ln in self.lines)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        new = self.changes.get(original_node, updated_node)
        if new is None:  # removed by the block that holds it (leave_IndentedBlock)
            return updated_node
        return super().on_leave(original_node, new) if new is updated_node else new

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        body = _replaced(original_node.body, updated_node.body, self.changes)
        if original_node.body and not body:
            body = [cst.SimpleStatementLine([cst.Pass()])]
        return updated_node.with_changes(body=body)


class PythonStrategy(Strategy):
    """A strategy over a `PythonProject`'s LibCST trees."""

    language = "python"

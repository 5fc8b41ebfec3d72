"""A Python project's source files (tests excluded), parsed once with LibCST."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import libcst as cst
from libcst._nodes.internal import CodegenState
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
        footer), joining up to `_statements_text`; None when they do not, where only a
        whole-module rebuild is exact."""
        module = self.parse(path)
        text = None if module is None else self._statements_text(path, module)
        if module is None or text is None:
            return None
        header = "".join(module.code_for_node(line) for line in module.header)
        pieces = tuple(module.code_for_node(statement) for statement in module.body)
        footer = "".join(module.code_for_node(line) for line in module.footer)
        if header + "".join(pieces) + footer != text:
            return None
        return header, pieces, footer

    def _statements_text(self, path: str, module: cst.Module) -> str | None:
        """The file's text as the code of its statements joins up (libcst's round trip):
        the text itself, or for a file without a final newline the text with one (libcst
        generates the module's code with it, then drops it: boltons' strutils, whose every
        deletion generated the whole module's code, ~90 ms); None where neither is exact."""
        text = self.text(path)
        if module.has_trailing_newline:
            return text if text.endswith("\n") else None  # read_text: no \r
        return text + "\n" if text and not text.endswith("\n") else None

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
        text = self._splice_nested(path, module, changes)
        if text is None:
            new_body = _replaced(module.body, self._new_body(path, module, changes), changes)
            text = self._splice(path, module, new_body, changes)
            if text is None:
                text = self._cut_at_statements(path, module, new_body)
            if text is None:
                return module.with_changes(body=new_body).code
        return _as_file(module, text)

    def _cut_at_statements(self, path: str, module: cst.Module,
                           new_body: Sequence[cst.BaseStatement]) -> str | None:
        """The code of `new_body`'s statements joined up (`_statements_text`'s form), the
        untouched ones' pieces of the file's text as they are (`statement_codes`), the
        rebuilt ones generated again; None where the pieces are not exact."""
        cut = self.statement_codes(path)
        if cut is None:
            return None
        header, pieces, footer = cut
        unchanged = {id(statement): piece for statement, piece in zip(module.body, pieces,
                                                                      strict=True)}
        return header + "".join(unchanged.get(id(statement)) or module.code_for_node(statement)
                                for statement in new_body) + footer

    def _new_body(self, path: str, module: cst.Module,
                  changes: Mapping[cst.CSTNode, cst.CSTNode | None]) -> list[cst.BaseStatement]:
        """The module's top-level statements with the changed nodes inside them replaced
        (the changed statements themselves as they were: `_replaced` swaps those)."""
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
        return body

    def _splice(self, path: str, module: cst.Module, new_body: Sequence[cst.BaseStatement],
                changes: Mapping[cst.CSTNode, cst.CSTNode | None]) -> str | None:
        """The file's text with only the top-level statements that changed cut out and
        replaced (`new_body`: the module's statements after `changes`, untouched ones the
        same objects), or None where this cannot be exact (the caller then cuts the file at
        every statement, `statement_codes`: code generation of the whole module, where this
        generates only the statements that changed; about as fast over a package's
        deletions, `bench/apply_cost.py`, and it keeps a byte-order mark libcst's code drops).

        The module's text (with a final newline, `_statements_text`) is exactly its
        statements' code one after another (libcst's round trip), so a statement's own code
        (generated once per statement) is a piece of the text; found exactly once, that is
        where it stands. Otherwise (two identical statements, a piece that also occurs inside
        another one) None."""
        text = self._statements_text(path, module)
        if text is None:
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
        return _edited(text, edits)

    def _splice_nested(self, path: str, module: cst.Module,
                       changes: Mapping[cst.CSTNode, cst.CSTNode | None]) -> str | None:
        """The file's text with each changed node's own code cut out and replaced, where
        every change replaces (none removes) a node inside a top-level statement (a method,
        a nested function, a branch), or None (then `_splice` and the whole-file cut serve).

        Stubbing one method of a thousand-line class then generates the method's code, not
        the class's: 2-4x less time applying a package's deletions (`bench/apply_cost.py`;
        a few milliseconds a task). A node's code in the file is its code
        generated with the indentation of the blocks around it (libcst's round trip); it
        must stand exactly once within the lines of its top-level statement, or this
        declines (the method's text also in a string of that class, say)."""
        if not changes or any(new is None for new in changes.values()):
            return None
        text = self._statements_text(path, module)
        if text is None:
            return None
        positions = self.positions(path)
        edits: list[tuple[int, int, str]] = []
        for old, new in changes.items():
            where = positions.get(old)
            top = where and next((t for t in module.body if t is not old
                                  and positions[t].start.line <= where.start.line
                                  and where.end.line <= positions[t].end.line), None)
            indents = top and _indents_to(top, old, positions, where.start.line)
            if not top or indents is None or new is None:
                return None
            span = positions[top]
            low, high = _line_offset(text, span.start.line), _line_offset(text, span.end.line + 1)
            piece = _code_in_blocks(module, old, indents)
            start = text.find(piece, low, high)
            if start < 0 or text.find(piece, start + 1, high) >= 0:
                return None
            # ... and it must hold the node itself: an `elif`, generated as `if`, is not its
            # own text, which an `if` of the same test and body further on may be
            first = _line_offset(text, where.start.line) + where.start.column
            last = _line_offset(text, where.end.line) + where.end.column
            if not (start <= first and last <= start + len(piece)):
                return None
            edits.append((start, start + len(piece), _code_in_blocks(module, new, indents)))
        return _edited(text, edits)

    @functools.cache  # noqa: B019 - the statement of a kept tree: its code, once
    def _piece(self, path: str, statement: cst.BaseStatement) -> str:
        module = self.parse(path)
        assert module is not None, path
        return module.code_for_node(statement)

    def parsed_files(self) -> list[tuple[str, cst.Module]]:
        return [(p, m) for p in self.source_files if (m := self.parse(p)) is not None]


def _as_file(module: cst.Module, text: str) -> str:
    """`text`, the code of the module's statements joined up (`_statements_text`), as the
    file holds it: the final newline every statement's code ends in dropped where the file
    has none (as libcst's code of the module drops it)."""
    return text if module.has_trailing_newline or not text.endswith("\n") else text[:-1]


def _edited(text: str, edits: Sequence[tuple[int, int, str]]) -> str | None:
    """`text` with each (start, end) range replaced by its code; None if two overlap."""
    out, at = [], 0
    for start, end, code in sorted(edits):
        if start < at:
            return None
        out += [text[at:start], code]
        at = end
    return "".join(out) + text[at:]


def _indents_to(node: cst.CSTNode, target: cst.CSTNode,
                positions: Mapping[cst.CSTNode, CodeRange], line: int) -> list[str | None] | None:
    """The indentation the blocks between `node` and `target` (a node inside it, starting at
    `line`) add, outermost first (None: the module's default); None: not inside."""
    if node is target:
        return []
    for child in node.children:
        where = positions.get(child)
        if where is not None and not where.start.line <= line <= where.end.line:
            continue  # only nodes whose lines hold the target can contain it
        found = _indents_to(child, target, positions, line)
        if found is None:
            continue
        if (isinstance(node, cst.IndentedBlock) and child in node.body) or \
                (isinstance(node, cst.Match) and (child in node.cases or child in node.footer)):
            return [node.indent, *found]
        return found
    return None


def _code_in_blocks(module: cst.Module, node: cst.CSTNode,
                    indents: Sequence[str | None]) -> str:
    """`node`'s code as it stands in the file, inside blocks of these indents: what
    `Module.code_for_node` gives at the top level. (libcst's code generation state is not
    public API; `code_for_node` builds the same one without indents.)"""
    state = CodegenState(default_indent=module.default_indent,
                         default_newline=module.default_newline,
                         indent_tokens=[module.default_indent if i is None else i
                                        for i in indents])
    node._codegen(state)
    return "".join(state.tokens)


def _line_offset(text: str, line: int) -> int:
    """Where 1-based `line` of `text` starts (its length past the last line)."""
    at = 0
    for _ in range(line - 1):
        at = text.find("\n", at) + 1
        if at == 0:
            return len(text)
    return at


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

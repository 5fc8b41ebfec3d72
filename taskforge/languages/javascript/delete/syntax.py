"""tree-sitter parsing and the edits every JavaScript/TypeScript strategy makes.

Edits splice bytes at node boundaries of the concrete tree (never at line numbers), so every
byte outside a deleted span stays as it was, and every result is parsed again: a tree with an
ERROR or MISSING node is not a task (`Rejected("unparsable")`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node, Tree

from taskforge.errors import Rejected
from taskforge.languages.javascript import NULL_BODIES
from taskforge.sanitize.jssource import parse  # the grammars, shared with the leak scan

STUB = 'throw new Error("not implemented");'
# What stands where code was deleted, by the name `Strategy.apply(body=...)` takes: the task's
# stub, and the trivial solutions a task must not reward (the language's `null_bodies`).
BODIES = {"raise": STUB, **NULL_BODIES}
FUNCTION_VALUES = ("arrow_function", "function_expression", "function",
                   "generator_function")
DECLARATIONS = ("function_declaration", "generator_function_declaration")
CLASSES = ("class_declaration", "abstract_class_declaration", "class")


def parses_cleanly(path: str, source: bytes) -> bool:
    return not parse(path, source).root_node.has_error


def text_of(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


@dataclass(frozen=True)
class Function:
    """A function with a block body: where it is, what it is called, how it is declared."""

    qualname: str  # `name`, `Class.method`, `default`
    kind: str  # function | method
    node: Node  # the function node (declaration, expression, arrow, method)
    body: Node  # its statement_block
    statement: Node  # the top-level statement holding it (export, declaration, class)
    class_name: str | None = None

    @property
    def start_line(self) -> int:  # 1-based, of the statement (decorators, `export` included)
        return self.statement.start_point[0] + 1 if self.kind == "function" \
            else self.node.start_point[0] + 1

    @property
    def end_line(self) -> int:
        return self.node.end_point[0] + 1

    @property
    def body_lines(self) -> range:
        """The lines inside the braces (the lines a test runs when it calls the function:
        the signature's line also runs when the module loads)."""
        first, last = self.body.start_point[0] + 1, self.body.end_point[0] + 1
        return range(first + 1, last) if last - first >= 2 else range(first, last + 1)

    def statements(self) -> list[Node]:
        return [c for c in self.body.named_children if c.type != "comment"]


def _name(node: Node | None) -> str | None:
    return text_of(node) if node is not None else None


def functions(tree: Tree) -> Iterator[Function]:
    """Top-level functions (declarations, `const f = (...) => {...}`, default exports) and
    the methods of top-level classes, each with a block body."""
    for statement in tree.root_node.named_children:
        inner = statement
        default = False
        if statement.type == "export_statement":
            default = any(c.type == "default" for c in statement.children)
            inner = statement.child_by_field_name("declaration") or \
                statement.child_by_field_name("value") or statement
        if inner.type in DECLARATIONS or (default and inner.type in FUNCTION_VALUES):
            body = inner.child_by_field_name("body")
            if body is not None and body.type == "statement_block":
                name = _name(inner.child_by_field_name("name")) or "default"
                yield Function(name, "function", inner, body, statement)
        elif inner.type in ("lexical_declaration", "variable_declaration"):
            for declarator in inner.named_children:
                value = declarator.child_by_field_name("value")
                name = declarator.child_by_field_name("name")
                if declarator.type != "variable_declarator" or value is None or \
                        value.type not in FUNCTION_VALUES or name is None or \
                        name.type != "identifier":
                    continue
                body = value.child_by_field_name("body")
                if body is not None and body.type == "statement_block":
                    yield Function(text_of(name), "function", value, body, statement)
        elif inner.type in CLASSES:
            class_name = _name(inner.child_by_field_name("name")) or "default"
            yield from _methods(inner, class_name, statement)


def _methods(cls: Node, class_name: str, statement: Node) -> Iterator[Function]:
    body = cls.child_by_field_name("body")
    for member in body.named_children if body is not None else ():
        if member.type != "method_definition":
            continue
        block = member.child_by_field_name("body")
        name = _name(member.child_by_field_name("name"))
        if block is None or name is None:
            continue
        accessor = next((c.type for c in member.children if c.type in ("get", "set")), None)
        qual = f"{class_name}.{name}" + (f"[{accessor}]" if accessor else "")
        yield Function(qual, "method", member, block, statement, class_name)


def classes(tree: Tree) -> Iterator[tuple[str, Node, Node, list[Function]]]:
    """Top-level classes: (name, class node, statement, methods)."""
    for statement in tree.root_node.named_children:
        inner = statement
        if statement.type == "export_statement":
            inner = statement.child_by_field_name("declaration") or \
                statement.child_by_field_name("value") or statement
        if inner.type in CLASSES:
            name = _name(inner.child_by_field_name("name")) or "default"
            yield name, inner, statement, list(_methods(inner, name, statement))


def is_trivial(function: Function) -> bool:
    """Nothing to write: an empty body, or one statement that only throws."""
    statements = function.statements()
    return not statements or (len(statements) == 1 and statements[0].type == "throw_statement")


def _line_start(source: bytes, offset: int) -> int:
    return source.rfind(b"\n", 0, offset) + 1


def indentation(source: bytes, offset: int) -> bytes:
    """The whitespace the line holding `offset` starts with."""
    start = _line_start(source, offset)
    end = start
    while end < len(source) and source[end:end + 1] in (b" ", b"\t"):
        end += 1
    return source[start:end]


def stub_block(source: bytes, function: Function, body: str) -> bytes:
    """The function's new block: `{`, the stub (or a trivial body) on a line of its own at
    the body's indentation, `}` where it was."""
    outer = indentation(source, function.body.start_byte)
    statements = function.statements()
    first = statements[0] if statements else None
    if first is not None and first.start_point[0] != function.body.start_point[0]:
        inner = indentation(source, first.start_byte)
    else:
        inner = outer + (b"\t" if outer.startswith(b"\t") else b"  ")
    return b"{\n" + inner + BODIES[body].encode() + b"\n" + outer + b"}"


def leading_doc(source: bytes, statement: Node) -> Node | None:
    """The `/** ... */` comment right before a statement (its documentation), if any."""
    previous = statement.prev_sibling
    if previous is not None and previous.type == "comment" and \
            text_of(previous).startswith("/**") and \
            statement.start_point[0] - previous.end_point[0] <= 1:
        return previous
    return None


def doc_text(node: Node | None) -> str | None:
    """A JSDoc comment's prose, without the comment markers."""
    if node is None:
        return None
    lines = text_of(node).removeprefix("/**").removesuffix("*/").splitlines()
    cleaned = [ln.strip().removeprefix("*").removeprefix(" ").rstrip() for ln in lines]
    return "\n".join(cleaned).strip() or None


def signature_of(source: bytes, function: Function) -> str:
    """The function's text up to its body: what the agent keeps and the statement shows."""
    start = function.statement.start_byte if function.kind == "function" else \
        function.node.start_byte
    return source[start:function.body.start_byte].decode("utf-8", "replace").rstrip()


def splice(source: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """Replace each (start, end) byte span with its text; spans must not overlap."""
    out = source
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out


def checked(path: str, source: bytes) -> str:
    """The edited text, when it still parses without an error node."""
    if not parses_cleanly(path, source):
        raise Rejected("unparsable", f"{path}: the edit does not parse")
    return source.decode("utf-8")


def removal_span(source: bytes, node: Node, doc: Node | None = None, *,
                 blank: bool = True) -> tuple[int, int]:
    """The bytes to delete to remove `node` (and its documentation) with its line: from the
    start of its first line to the end of its last, and (`blank`) one blank line after it
    when there is one before it too."""
    first = doc.start_byte if doc is not None else node.start_byte
    start = _line_start(source, first)
    end = node.end_byte
    if source[end:end + 1] == b";":
        end += 1
    newline = source.find(b"\n", end)
    end = len(source) if newline < 0 else newline + 1
    if source[start:first].strip() or source[node.end_byte:end].strip(b"; \t\r\n"):
        return first, node.end_byte  # shares its lines with other code: only the node
    if blank and start >= 2 and source[start - 2:start] == b"\n\n" and \
            source[end:end + 1] == b"\n":
        end += 1  # one of the blank lines around it goes with it
    return start, end

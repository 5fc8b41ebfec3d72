"""What a set of JavaScript/TypeScript files does when run, as a key: two trees whose changed
files are the same text, once a function body's closing `return undefined;` is dropped,
behave alike, so one test run scores both.

The trivial solutions "empty" and `return undefined;` in place of a stub that is a function's
whole body do the same (a function that ends returns undefined, a constructor `this`, a
generator is done with undefined), so a run of one is a run of the other; in place of a
deleted branch they do not (the `return` leaves the function, the empty block goes on), and
their keys differ. Where `undefined` could name something else (a binding of that name, a
`with` block) there is no key: each body runs."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from tree_sitter import Node

from taskforge.languages.base import files_key
from taskforge.languages.javascript.files import is_source
from taskforge.sanitize.jssource import parse

# The nodes whose block is a function's body.
_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration",
                        "function_expression", "function", "generator_function",
                        "arrow_function", "method_definition"})
# Where a name is bound rather than read: `undefined` there shadows the global one.
_BINDINGS = frozenset({"formal_parameters", "required_parameter", "optional_parameter",
                       "array_pattern", "object_pattern", "pair_pattern", "assignment_pattern",
                       "rest_pattern", "catch_clause"})


def code_key(workspace: Path, paths: Collection[str]) -> str | None:
    """A digest of what `paths` (relative POSIX paths in `workspace`) do: a source file's text
    without its function bodies' closing `return undefined;`, any other file's bytes; None
    when a source does not parse or may rebind `undefined`."""
    return files_key(workspace, paths, lambda path, data: _without_closing_undefined(
        path, data) if is_source(path) else data)


def _without_closing_undefined(path: str, source: bytes) -> bytes | None:
    tree = parse(path, source)
    if tree.root_node.has_error:
        return None
    spans: list[tuple[int, int]] = []
    stack: list[Node] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "with_statement" or _binds_undefined(node):
            return None
        if _closes_a_function_with_undefined(node):
            spans.append((node.start_byte, node.end_byte))
        stack.extend(node.children)
    for start, end in sorted(spans, reverse=True):
        source = source[:start] + source[end:]
    return source


def _binds_undefined(node: Node) -> bool:
    if node.text != b"undefined":
        return False
    # tree-sitter reads a declared name as an identifier and a read one as `undefined`; a
    # parameter or pattern is `undefined` under a binding node
    return node.type in ("identifier", "shorthand_property_identifier_pattern",
                         "type_identifier") or \
        (node.parent is not None and node.parent.type in _BINDINGS)


def _closes_a_function_with_undefined(node: Node) -> bool:
    if node.type != "return_statement":
        return False
    values = [c for c in node.named_children if c.type != "comment"]
    if len(values) != 1 or values[0].type != "undefined":
        return False
    block = node.parent
    if block is None or block.type != "statement_block" or block.parent is None or \
            block.parent.type not in _FUNCTIONS:
        return False
    last = [c for c in block.named_children if c.type != "comment"][-1]
    return last == node

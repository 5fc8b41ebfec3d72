"""The methods of a Java source file as the class files compiled from it name them: binary
class name, method name, parameter types as a descriptor's simple names. What the leak scan
needs to name a deleted method's compiled copy (`classfile`); tree-sitter-java parses."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

TYPES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration")


@functools.cache
def _parser():
    import tree_sitter_java
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_java.language()))


def _text(node) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _type_params(node) -> set[str]:
    params = node.child_by_field_name("type_parameters")
    found = set()
    for p in params.named_children if params is not None else ():
        ident = next((c for c in p.named_children if c.type in ("type_identifier", "identifier")),
                     None)
        if ident is not None:
            found.add(_text(ident))
    return found


def simple_type(text: str, variables: set[str]) -> str:
    """`java.util.List<String>` -> `List`; `T` (a type variable) -> `?`; `int...` -> `int[]`."""
    text = re.sub(r"@[\w.]+(\([^)]*\))?\s*", "", text)
    while re.search(r"<[^<>]*>", text):
        text = re.sub(r"<[^<>]*>", "", text)
    text = re.sub(r"\s+", "", text).replace("...", "[]")
    dims = text.count("[]")
    base = text.replace("[]", "").rsplit(".", 1)[-1]
    return ("?" if base in variables else base) + "[]" * dims


def methods(source: bytes) -> Iterator[tuple[str, str, str, str]]:
    """(binary class name, method name, parameters, body text) of every method and
    constructor (`<init>`) of every declared type."""
    tree = _parser().parse(source)
    package = ""
    for node in tree.root_node.named_children:
        if node.type == "package_declaration":
            package = _text(next((c for c in node.named_children
                                  if c.type in ("scoped_identifier", "identifier")), None))

    def walk(node, prefix: str, variables: set[str]):
        for child in node.named_children:
            if child.type not in TYPES:
                continue
            name = _text(child.child_by_field_name("name"))
            binary = f"{prefix}${name}" if prefix else (f"{package}.{name}" if package else name)
            scope = variables | _type_params(child)
            body = child.child_by_field_name("body")
            members = []
            for m in body.named_children if body is not None else ():
                members += m.named_children if m.type == "enum_body_declarations" else [m]
            for member in members:
                if member.type in ("method_declaration", "constructor_declaration"):
                    inner = scope | _type_params(member)
                    params = member.child_by_field_name("parameters")
                    types = []
                    for p in params.named_children if params is not None else ():
                        if p.type == "formal_parameter":
                            types.append(simple_type(_text(p.child_by_field_name("type")), inner))
                        elif p.type == "spread_parameter":
                            kids = [c for c in p.named_children
                                    if c.type not in ("modifiers", "variable_declarator")]
                            types.append(simple_type(_text(kids[0]) if kids else "?", inner) + "[]")
                    method = "<init>" if member.type == "constructor_declaration" else \
                        _text(member.child_by_field_name("name"))
                    yield binary, method, ",".join(types), _text(member.child_by_field_name("body"))
                elif member.type in TYPES:
                    yield from walk(_Holder(member), binary, scope)
            yield from ()

    yield from walk(tree.root_node, "", set())


class _Holder:
    """A one-child node, so `walk` can descend into a nested type."""

    def __init__(self, node) -> None:
        self.named_children = [node]


def deleted_methods(original: bytes, task: bytes | None) -> set[tuple[str, str]]:
    """(java key, parameters) of each method whose body the task lost or changed."""
    from taskforge.sanitize.classfile import java_key

    kept = {(c, m, p): b for c, m, p, b in methods(task)} if task is not None else {}
    return {(java_key(c, m), p) for c, m, p, body in methods(original)
            if body and kept.get((c, m, p)) != body}

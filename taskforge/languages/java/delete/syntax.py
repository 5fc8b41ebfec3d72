"""tree-sitter-java parsing and the edits every Java strategy makes.

Edits splice bytes at node boundaries of the concrete tree (never at line numbers), so every
byte outside a deleted span stays as it was, and every result is parsed again: a tree with an
ERROR or MISSING node is not a task (`Rejected("unparsable")`). Whether it compiles is the
verification's business (javac of the whole tree).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_java
from tree_sitter import Language, Node, Parser, Tree

from taskforge.errors import Rejected

STUB = 'throw new UnsupportedOperationException("not implemented");'
TYPES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
         "annotation_type_declaration")
# What a trivial body returns, by the method's declared type (anything else: null).
DEFAULTS = {"void": "return;", "boolean": "return false;", "char": "return '\\0';",
            "long": "return 0L;", "float": "return 0.0f;", "double": "return 0.0d;",
            "int": "return 0;", "short": "return 0;", "byte": "return 0;"}
# The second trivial body ("return-other"): the other everyday value of a type (`true`, an
# empty string, the -1 of "not found", an empty collection), by the declared type's name
# without its type arguments and `java.util.`/`java.lang.`; any other type's is the default.
OTHERS = {"boolean": "return true;", "Boolean": "return true;", "String": 'return "";',
          "CharSequence": 'return "";', "int": "return -1;", "Integer": "return -1;",
          "short": "return -1;", "byte": "return -1;", "long": "return -1L;",
          "Long": "return -1L;", "List": "return java.util.Collections.emptyList();",
          "Collection": "return java.util.Collections.emptyList();",
          "Iterable": "return java.util.Collections.emptyList();",
          "Set": "return java.util.Collections.emptySet();",
          "Map": "return java.util.Collections.emptyMap();",
          "Optional": "return java.util.Optional.empty();"}


@functools.cache
def _language() -> Language:
    return Language(tree_sitter_java.language())


def parse(source: bytes) -> Tree:
    return Parser(_language()).parse(source)


def parses_cleanly(source: bytes) -> bool:
    return not parse(source).root_node.has_error


def text_of(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def trivial_statement(return_type: str, body: str = "return-default") -> str:
    """The statement of the trivial solution `body` (a key of the language's `null_bodies`)
    for a method returning `return_type`."""
    if body == "return-other":
        name = return_type.split("<", 1)[0].strip()
        for package in ("java.util.", "java.lang."):
            name = name.removeprefix(package)
        if name in OTHERS:
            return OTHERS[name]
    return DEFAULTS.get(return_type.strip(), "return null;")


@dataclass(frozen=True)
class Method:
    """A method declaration: where it is, what it is called, what it returns."""

    name: str
    qualname: str  # `Outer.Inner.name`, with `(T, U)` when the class overloads the name
    node: Node  # the method_declaration (modifiers, annotations included; javadoc not)
    body: Node | None  # its block, None when abstract/native/an interface's
    return_type: str  # `void`, `int`, `Optional<V>`, ...
    owner: Node  # the class/interface/enum/record declaration
    owner_kind: str
    owner_name: str  # `Outer.Inner`

    @property
    def start_line(self) -> int:  # 1-based, of the declaration (annotations included)
        return self.node.start_point[0] + 1

    @property
    def end_line(self) -> int:
        return self.node.end_point[0] + 1

    @property
    def body_lines(self) -> range:
        """The lines inside the braces (the lines a call runs)."""
        if self.body is None:
            return range(0)
        first, last = self.body.start_point[0] + 1, self.body.end_point[0] + 1
        return range(first + 1, last) if last - first >= 2 else range(first, last + 1)

    def statements(self) -> list[Node]:
        if self.body is None:
            return []
        return [c for c in self.body.named_children if c.type not in ("line_comment",
                                                                      "block_comment")]

    @property
    def annotations(self) -> list[str]:
        mods = next((c for c in self.node.children if c.type == "modifiers"), None)
        return [text_of(c.child_by_field_name("name") or c).lstrip("@")
                for c in (mods.children if mods is not None else ())
                if c.type in ("marker_annotation", "annotation")]

    @property
    def modifiers(self) -> set[str]:
        mods = next((c for c in self.node.children if c.type == "modifiers"), None)
        return {c.type for c in (mods.children if mods is not None else ())}

    @property
    def parameter_types(self) -> str:
        params = self.node.child_by_field_name("parameters")
        types = []
        for p in params.named_children if params is not None else ():
            t = p.child_by_field_name("type")
            if t is not None:
                types.append(re.sub(r"\s+", "", text_of(t)) + ("..." if p.type == "spread_parameter" else ""))
            elif p.type == "spread_parameter":
                kids = [c for c in p.named_children if c.type not in ("modifiers",
                                                                      "variable_declarator")]
                types.append((text_of(kids[0]) if kids else "?") + "...")
        return ", ".join(types)


def _body_of(declaration: Node) -> Node | None:
    return declaration.child_by_field_name("body")


def types(tree: Tree) -> Iterator[tuple[Node, str, str]]:
    """Every declared type (top-level and nested; not anonymous or local ones):
    (node, kind, qualified name within the file)."""
    def walk(node: Node, prefix: str) -> Iterator[tuple[Node, str, str]]:
        for child in node.named_children:
            if child.type in TYPES:
                name = text_of(child.child_by_field_name("name"))
                qual = f"{prefix}.{name}" if prefix else name
                yield child, child.type, qual
                body = _body_of(child)
                if body is not None:
                    yield from walk(body, qual)
                    for inner in body.named_children:  # an enum's members
                        if inner.type == "enum_body_declarations":
                            yield from walk(inner, qual)
    yield from walk(tree.root_node, "")


def _members(type_node: Node) -> list[Node]:
    body = _body_of(type_node)
    if body is None:
        return []
    found = []
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            found += child.named_children
        else:
            found.append(child)
    return found


def methods(tree: Tree) -> Iterator[Method]:
    """Every method declaration of every declared type (constructors are not methods)."""
    for type_node, kind, qual in types(tree):
        declared = [m for m in _members(type_node) if m.type == "method_declaration"]
        names = [text_of(m.child_by_field_name("name")) for m in declared]
        for member, name in zip(declared, names, strict=True):
            body = member.child_by_field_name("body")
            method = Method(name, f"{qual}.{name}", member, body,
                            text_of(member.child_by_field_name("type")) or "void", type_node,
                            kind, qual)
            if names.count(name) > 1:
                method = Method(name, f"{qual}.{name}({method.parameter_types})", member, body,
                                method.return_type, type_node, kind, qual)
            yield method


def is_trivial(method: Method) -> bool:
    """Nothing to write: no body, an empty one, or one statement that only throws."""
    statements = method.statements()
    return method.body is None or not statements or (
        len(statements) == 1 and statements[0].type == "throw_statement")


def line_start(source: bytes, offset: int) -> int:
    return source.rfind(b"\n", 0, offset) + 1


def indentation(source: bytes, offset: int) -> bytes:
    start = line_start(source, offset)
    end = start
    while end < len(source) and source[end:end + 1] in (b" ", b"\t"):
        end += 1
    return source[start:end]


def body_text(method: Method, body: str) -> str:
    """What stands in the block: the stub (`raise`), or the trivial solution."""
    return STUB if body == "raise" else trivial_statement(method.return_type, body)


def stub_block(source: bytes, method: Method, body: str) -> bytes:
    """The method's new block: `{`, the stub (or the trivial statement) on a line of its own
    at the body's indentation, `}` where it was."""
    assert method.body is not None
    outer = indentation(source, method.body.end_byte - 1)
    statements = method.statements()
    first = statements[0] if statements else None
    if first is not None and first.start_point[0] != method.body.start_point[0]:
        inner = indentation(source, first.start_byte)
    else:
        inner = outer + (b"\t" if outer.startswith(b"\t") else b"    ")
    return b"{\n" + inner + body_text(method, body).encode() + b"\n" + outer + b"}"


def leading_doc(node: Node) -> Node | None:
    """The `/** ... */` comment right before a declaration (its javadoc), if any."""
    previous = node.prev_sibling
    if previous is not None and previous.type == "block_comment" and \
            text_of(previous).startswith("/**") and \
            node.start_point[0] - previous.end_point[0] <= 1:
        return previous
    return None


def doc_text(node: Node | None) -> str | None:
    if node is None:
        return None
    lines = text_of(node).removeprefix("/**").removesuffix("*/").splitlines()
    cleaned = [ln.strip().removeprefix("*").removeprefix(" ").rstrip() for ln in lines]
    return "\n".join(cleaned).strip() or None


def signature_of(source: bytes, method: Method) -> str:
    """The declaration up to its body (annotations, modifiers, generics, throws)."""
    end = method.body.start_byte if method.body is not None else method.node.end_byte
    return source[method.node.start_byte:end].decode("utf-8", "replace").rstrip()


def splice(source: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    out = source
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out


def checked(path: str, source: bytes) -> str:
    if not parses_cleanly(source):
        raise Rejected("unparsable", f"{path}: the edit does not parse")
    return source.decode("utf-8")


def removal_span(source: bytes, node: Node, doc: Node | None = None) -> tuple[int, int]:
    """The bytes to delete to remove a declaration (and its javadoc) with its lines, and one
    of the blank lines around it."""
    first = doc.start_byte if doc is not None else node.start_byte
    start = line_start(source, first)
    newline = source.find(b"\n", node.end_byte)
    end = len(source) if newline < 0 else newline + 1
    if source[start:first].strip() or source[node.end_byte:end].strip():
        return first, node.end_byte
    if start >= 2 and source[start - 2:start] == b"\n\n" and source[end:end + 1] in (b"\n", b"\r"):
        end += 1
    elif source[end:end + 1] == b"\n" and start >= 1 and source[start - 1:start] == b"\n" and \
            source[line_start(source, start - 1):start - 1].strip().endswith(b"{"):
        end += 1  # the first member of its class: the blank line after it goes
    return start, end


# -- the trivial solution on a record's patch --------------------------------------------------

_SIGNATURE = re.compile(r"([\w$.]+(?:\s*<[^()]*>)?(?:\s*\[\s*\])*)\s+[\w$]+\s*\([^)]*\)?[^;{]*\{?\s*$")


def _return_type_above(lines: list[str]) -> str:
    """The return type of the method whose signature ends the new-side `lines` (the hunk's
    context and added lines before a stub)."""
    text = ""
    for line in reversed(lines[-12:]):
        text = line + " " + text
        if "(" in line:
            break
    text = re.sub(r"@\w+(\.\w+)*(\([^)]*\))?", " ", text)  # annotations
    text = re.sub(r"^\s*((public|protected|private|static|final|abstract|synchronized|native|"
                  r"strictfp|default)\s+)*", "", text)
    text = re.sub(r"^\s*<(?:[^<>]|<[^<>]*>)*>\s*", "", text)  # the method's type parameters
    m = re.match(r"\s*([\w$.]+(?:\s*<.*?>)?(?:\s*\[\s*\])*)\s+[\w$]+\s*\(", text)
    return re.sub(r"\s+", "", m.group(1)) if m else "Object"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


def null_body_patch(patch: str, body: str) -> str:
    """A unified diff whose added stub lines become the trivial statement for their method's
    return type (read from the new-side lines above each stub in its hunk), and whose removed
    methods (remove-method) come back with the trivial statement as their body: what the
    strategies write with `apply(body=...)`, hunk by hunk."""
    out: list[str] = []
    hunk: list[str] = []
    header: re.Match[str] | None = None
    shift = 0

    def flush() -> None:
        nonlocal shift, header, hunk
        if header is None:
            return
        lines = _restore_removed(_stubs_to_trivial(hunk, body), body)
        old_start, new_start = int(header.group(1)), int(header.group(3))
        old_count = sum(1 for ln in lines if ln[:1] in (" ", "-"))
        new_count = sum(1 for ln in lines if ln[:1] in (" ", "+"))
        start = new_start + shift
        shift += new_count - int(header.group(4) if header.group(4) is not None else 1)
        out.append(f"@@ -{old_start},{old_count} +{start},{new_count} @@{header.group(5)}\n")
        out.extend(lines)
        header, hunk = None, []

    for line in patch.splitlines(keepends=True):
        match = _HUNK.match(line.rstrip("\r\n"))
        if match:
            flush()
            header = match
        elif line.startswith("diff ") or (line.startswith(("---", "+++")) and header is None):
            flush()
            shift = 0 if line.startswith("diff ") else shift
            out.append(line)
        elif header is not None:
            hunk.append(line)
        else:
            out.append(line)
    flush()
    return "".join(out)


def _stubs_to_trivial(hunk: list[str], body: str) -> list[str]:
    out: list[str] = []
    new_side: list[str] = []
    for line in hunk:
        content = line[1:].rstrip("\r\n")
        if line.startswith("+") and content.strip() == STUB:
            indent = content[:len(content) - len(content.lstrip())]
            ending = line[len(line.rstrip("\r\n")):]
            out.append("+" + indent + trivial_statement(_return_type_above(new_side), body)
                       + ending)
            new_side.append(content)
            continue
        if line.startswith((" ", "+")):
            new_side.append(content)
        out.append(line)
    return out


def _restore_removed(hunk: list[str], body: str) -> list[str]:
    """Each run of removed lines that holds whole method declarations: the lines outside
    the methods' bodies back as context, each body's lines removed and the trivial statement
    added in their place (its indentation: the body's first statement's, as `stub_block`)."""
    out: list[str] = []
    i = 0
    while i < len(hunk):
        if not hunk[i].startswith("-") or hunk[i].startswith("---"):
            out.append(hunk[i])
            i += 1
            continue
        j = i
        while j < len(hunk) and hunk[j].startswith("-"):
            j += 1
        # A diff may align the run a few lines off the declarations (`}` of the method
        # before it removed, its own `}` kept): slide it down over equal context lines.
        for k in range(0, 8):
            if k and not (j + k - 1 < len(hunk) and hunk[j + k - 1].startswith(" ")
                          and hunk[j + k - 1][1:] == hunk[i + k - 1][1:]):
                break
            run = [*hunk[i + k:j], *("-" + ln[1:] for ln in hunk[j:j + k])]
            restored = _restore_run(run, body)
            if restored is not run:
                out.extend(" " + ln[1:] for ln in hunk[i:i + k])
                out.extend(restored)
                i = j + k
                break
        else:
            out.extend(hunk[i:j])
            i = j
            continue
        if i < j:  # or up, over equal context lines before it
            for k in range(1, 8):
                if not (i - k >= 0 and out and out[-1 - (k - 1)].startswith(" ")
                        and hunk[i - k].startswith(" ") and hunk[i - k][1:] == hunk[j - k][1:]):
                    break
                run = [*("-" + ln[1:] for ln in hunk[i - k:i]), *hunk[i:j - k]]
                restored = _restore_run(run, body)
                if restored is not run:
                    del out[len(out) - k:]
                    out.extend(restored)
                    out.extend(" " + ln[1:] for ln in hunk[j - k:j])
                    i = j
                    break
        if i < j:  # no alignment parsed: the run as it was
            out.extend(hunk[i:j])
            i = j
    return out


def _restore_run(run: list[str], body: str) -> list[str]:
    texts = [ln[1:] for ln in run]
    prefix = "class __Removed {\n"
    source = (prefix + "".join(texts) + "\n}\n").encode("utf-8")
    tree = parse(source)
    if tree.root_node.has_error:
        return run
    bodies: dict[int, tuple[int, int, str, str]] = {}  # first body line -> (last, stmt, indent)
    for method in methods(tree):
        if method.body is None:
            continue
        first, last = method.body.start_point[0] - 1, method.body.end_point[0] - 1
        if first == last:  # a one-line body: left removed (not what stub_block writes)
            return run
        statements = method.statements()
        outer = indentation(source, method.body.end_byte - 1).decode()
        if statements and statements[0].start_point[0] != method.body.start_point[0]:
            inner = indentation(source, statements[0].start_byte).decode()
        else:
            inner = outer + ("\t" if outer.startswith("\t") else "    ")
        bodies[first] = (last, inner + trivial_statement(method.return_type, body), "")
    if not bodies:
        return run
    out: list[str] = []
    k = 0
    while k < len(run):
        if k in bodies:
            last, statement, _ = bodies[k]
            out.append(" " + texts[k])  # the line with `{`
            out.extend("-" + t for t in texts[k + 1:last])
            ending = texts[k][len(texts[k].rstrip("\r\n")):] or "\n"
            out.append("+" + statement + ending)
            out.append(" " + texts[last])  # the line with `}`
            k = last + 1
            continue
        out.append(" " + texts[k])
        k += 1
    return out

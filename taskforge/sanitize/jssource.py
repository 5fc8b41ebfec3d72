"""JavaScript and TypeScript as the leak scan reads them: tree-sitter's grammars (the PyPI
tree-sitter-javascript and -typescript), and the tokens of a file that fingerprints are made
of: identifiers, and the literal text of strings, template strings and regular expressions.

The grammar knows what a line-by-line pattern cannot: a `//` inside a template string or a
regular expression is no comment, `#name` is a private member, not a comment, a quote inside
`/["']/` opens no string, and a block comment's words are prose. The deleters
(`languages/javascript/delete/syntax.py`) parse with the same grammars, from here: the leak
scan is a lower layer than the languages and may not import them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tree-sitter is loaded when a JavaScript file is first parsed
    from tree_sitter import Language, Node, Tree

# The suffixes of JavaScript/TypeScript sources (languages/javascript/files.py's
# SOURCE_SUFFIXES, which this layer cannot import).
SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
# Names as the grammar has them: variables and parameters, properties, `#private` members,
# `{ a }` shorthands, TypeScript types, labels.
IDENTIFIERS = frozenset({
    "identifier", "property_identifier", "private_property_identifier",
    "shorthand_property_identifier", "shorthand_property_identifier_pattern",
    "type_identifier", "statement_identifier"})


@functools.cache
def grammar(suffix: str) -> Language:
    """The grammar of a file with this suffix: TypeScript's for `.ts`/`.mts`/`.cts`, TSX's
    for `.tsx`, JavaScript's (JSX included) for anything else."""
    from tree_sitter import Language

    if suffix in (".ts", ".mts", ".cts"):
        import tree_sitter_typescript

        return Language(tree_sitter_typescript.language_typescript())
    if suffix == ".tsx":
        import tree_sitter_typescript

        return Language(tree_sitter_typescript.language_tsx())
    import tree_sitter_javascript

    return Language(tree_sitter_javascript.language())


def parse(path: str, source: bytes) -> Tree:
    from tree_sitter import Parser

    suffix = "." + path.rsplit(".", 1)[-1] if "." in path else ".js"
    return Parser(grammar(suffix)).parse(source)


@dataclass(frozen=True)
class Token:
    """A name, or the text pieces of one literal, with the 1-based rows it spans."""

    kind: str  # ident | literal
    pieces: tuple[str, ...]  # the name; a literal's text between quotes and substitutions
    first_row: int
    last_row: int
    escapes: bool = True  # a string's escapes are read as such; a regex is kept as written


def _pieces(source: bytes, node: Node, start: int, end: int) -> tuple[str, ...]:
    """The text of `source[start:end]` around the template substitutions (`${...}`) in it."""
    cuts = [(c.start_byte, c.end_byte) for c in node.named_children
            if c.type == "template_substitution"]
    pieces, at = [], start
    for cut_start, cut_end in cuts:
        pieces.append(source[at:cut_start])
        at = cut_end
    pieces.append(source[at:end])
    return tuple(p.decode("utf-8", "replace") for p in pieces)


def _token(source: bytes, node: Node) -> Token | None:
    rows = (node.start_point[0] + 1, node.end_point[0] + 1)
    if node.type in IDENTIFIERS:
        # `this.#count` is `count` in a copy whatever it calls the member
        return Token("ident", ((node.text or b"").decode("utf-8", "replace").lstrip("#"),),
                     *rows)
    if node.type in ("string", "template_string") and node.end_byte - node.start_byte >= 2:
        return Token("literal", _pieces(source, node, node.start_byte + 1, node.end_byte - 1),
                     *rows)
    if node.type == "regex_pattern":
        return Token("literal", ((node.text or b"").decode("utf-8", "replace"),), *rows,
                     escapes=False)
    return None


@functools.lru_cache(maxsize=16)  # the same original file serves many candidates
def tokens(path: str, text: str) -> tuple[Token, ...] | None:
    """The names and literals of a JavaScript/TypeScript file, in file order; comments
    give none. None when the grammar finds a syntax error (the caller falls back to
    reading lines)."""
    source = text.encode("utf-8", "surrogatepass")
    tree = parse(path, source)
    if tree.root_node.has_error:
        return None
    found: list[Token] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        token = _token(source, node)
        if token is not None:
            found.append(token)
            if node.type != "template_string":
                continue  # a template's substitutions hold more names and literals
        stack.extend(reversed(node.children))
    return tuple(found)

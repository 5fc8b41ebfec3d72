"""What the Java strategies share: finding a candidate's method again, and the facts a
problem statement may say about it."""

from __future__ import annotations

from typing import Any

from tree_sitter import Tree

from taskforge.errors import Rejected
from taskforge.languages.java.delete.project import JavaProject
from taskforge.languages.java.delete.syntax import (
    STUB,
    Method,
    doc_text,
    leading_doc,
    line_start,
    methods,
    signature_of,
)
from taskforge.model import Candidate

# What a stub does, in a problem statement's words (statement.py's `raises`).
RAISES = f"throws `{STUB.removesuffix(';').removeprefix('throw ')}`"


def tree_of(project: JavaProject, path: str) -> Tree:
    tree = project.tree(path)
    if tree is None:
        raise Rejected("unparsable", path)
    return tree


def method_of(project: JavaProject, candidate: Candidate) -> Method:
    """The candidate's method in the snapshot's tree (by qualified name and line)."""
    qualname = project.qualname(candidate.path, candidate.symbol)
    for method in methods(tree_of(project, candidate.path)):
        if method.qualname == qualname and method.start_line == candidate.start_line:
            return method
    raise Rejected("not-found", candidate.symbol)


def facts_of(source: bytes, method: Method, symbol: str, path: str,
             keep_docstrings: bool) -> dict[str, Any]:
    return {"symbol": symbol, "path": path, "kind": "method",
            "signature": signature_of(source, method),
            "docstring": doc_text(leading_doc(method.node)) if keep_docstrings else None,
            "fence": "java", "raises": RAISES}


def doc_removal(source: bytes, method: Method, keep_docstrings: bool
                ) -> list[tuple[int, int, bytes]]:
    """The edit that drops the method's javadoc (`task.keep_docstrings: false`)."""
    doc = None if keep_docstrings else leading_doc(method.node)
    if doc is None:
        return []
    return [(line_start(source, doc.start_byte), line_start(source, method.node.start_byte), b"")]

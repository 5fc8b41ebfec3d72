"""What the strategies share: finding a candidate's function again, and the facts a problem
statement may say about it."""

from __future__ import annotations

from typing import Any

from tree_sitter import Tree

from taskforge.errors import Rejected
from taskforge.languages.javascript.delete.project import JavaScriptProject
from taskforge.languages.javascript.delete.syntax import (
    STUB,
    Function,
    doc_text,
    functions,
    leading_doc,
    removal_span,
    signature_of,
)
from taskforge.languages.javascript.files import TYPESCRIPT_SUFFIXES
from taskforge.model import Candidate

# What a stub does, in a problem statement's words (statement.py's `raises`).
RAISES = f"throws `{STUB.removesuffix(';').removeprefix('throw ')}`"


def tree_of(project: JavaScriptProject, path: str) -> Tree:
    tree = project.tree(path)
    if tree is None:
        raise Rejected("unparsable", path)
    return tree


def qualname_of(project: JavaScriptProject, candidate: Candidate) -> str:
    return candidate.symbol.removeprefix(project.module_name(candidate.path) + ".")


def function_of(project: JavaScriptProject, candidate: Candidate) -> Function:
    """The candidate's function in the snapshot's tree (by name and line)."""
    qualname = qualname_of(project, candidate)
    for function in functions(tree_of(project, candidate.path)):
        if function.qualname == qualname and function.start_line == candidate.start_line:
            return function
    raise Rejected("not-found", candidate.symbol)


def declared_alone(function: Function) -> bool:
    """The function's statement declares it and nothing else (`const a = () => {...}, b = 1`
    does not): the statement can go with the function."""
    inner = function.statement
    if inner.type == "export_statement":
        inner = inner.child_by_field_name("declaration") or inner
    if inner.type in ("lexical_declaration", "variable_declaration"):
        return len([c for c in inner.named_children if c.type == "variable_declarator"]) == 1
    return True


def fence(path: str) -> str:
    return "typescript" if path.endswith(TYPESCRIPT_SUFFIXES) else "javascript"


def facts_of(source: bytes, function: Function, symbol: str, path: str,
             keep_docstrings: bool) -> dict[str, Any]:
    """One definition's facts: what the statement may show (signature, documentation)."""
    doc = leading_doc(source, function.statement if function.kind == "function"
                      else function.node)
    return {"symbol": symbol, "path": path, "kind": function.kind,
            "signature": signature_of(source, function),
            "docstring": doc_text(doc) if keep_docstrings else None,
            "fence": fence(path), "raises": RAISES}


def doc_removal(source: bytes, function: Function, keep_docstrings: bool
                ) -> list[tuple[int, int, bytes]]:
    """The edit that drops the function's JSDoc comment (`task.keep_docstrings: false`)."""
    if keep_docstrings:
        return []
    doc = leading_doc(source, function.statement if function.kind == "function"
                      else function.node)
    if doc is None:
        return []
    start, end = removal_span(source, doc)
    return [(start, end, b"")]

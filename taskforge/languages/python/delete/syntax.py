"""Shared syntax helpers for Python strategies: what a function's body is, whether it is
trivial, how it is found (with its qualified name and positions) and how it is stubbed.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from taskforge.languages.python import NULL_BODIES
from taskforge.languages.python.delete.project import PythonProject

SKIP_DECORATORS = {"overload", "abstractmethod", "abc.abstractmethod", "typing.overload"}
# The task's body, and the trivial solutions a task must not reward.
BODIES = {name: cst.parse_statement(text + "\n") for name, text in (
    ("raise", "raise NotImplementedError"), *NULL_BODIES.items())}


def is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString))


def is_trivial(stmts: Sequence[cst.BaseStatement]) -> bool:
    """A body with nothing to re-implement: docstring, pass, ..., raise NotImplementedError."""
    for stmt in stmts:
        if is_docstring(stmt):
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis):
                continue
            if isinstance(small, cst.Raise) and small.exc is not None and "NotImplementedError" in \
                    cst.Module([]).code_for_node(small.exc):
                continue
            return False
    return True


def decorator_names(node: cst.FunctionDef) -> set[str]:
    names = set()
    for dec in node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        names.add(cst.Module([]).code_for_node(expr))
    return names


def body_statements(node: cst.FunctionDef) -> Sequence[cst.BaseStatement]:
    body = node.body
    return body.body if isinstance(body, cst.IndentedBlock) else [cst.SimpleStatementLine(body.body)]


def accessor_suffix(node: cst.FunctionDef) -> str:
    """`.setter` / `.deleter` for a property's accessors, which share the getter's name."""
    for name in decorator_names(node):
        if name.endswith((".setter", ".deleter")) and name.split(".")[0] == node.name.value:
            return "." + name.rsplit(".", 1)[1]
    return ""


class FunctionFinder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self) -> None:
        # (qualname, node, def line, body start, end line, code object's first line)
        self.found: list[tuple[str, cst.FunctionDef, int, int, int, int]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        names = self.get_metadata(QualifiedNameProvider, node)
        qualname = min((q.name for q in names), default=node.name.value)
        if "<locals>" in qualname:
            return  # nested functions are part of their enclosing function
        if decorator_names(node) & SKIP_DECORATORS:
            return  # declarations, not implementations
        position = self.get_metadata(PositionProvider, node)
        def_line = self.get_metadata(PositionProvider, node.name).start.line
        if isinstance(node.body, cst.IndentedBlock):
            stmts = [s for s in node.body.body if not is_docstring(s)]
            if not stmts:
                return
            body_start = self.get_metadata(PositionProvider, stmts[0]).start.line
        else:  # `def f(): return x`: the body shares the def line
            body_start = def_line
        qualname += accessor_suffix(node)
        # Redefinitions (under `if`, or overloads' implementations) keep distinct symbols.
        seen = sum(1 for f in self.found if f[0] == qualname or f[0].startswith(qualname + "#"))
        if seen:
            qualname += f"#{seen + 1}"
        code_line = (self.get_metadata(PositionProvider, node.decorators[0]).start.line
                     if node.decorators else def_line)
        self.found.append((qualname, node, def_line, body_start, position.end.line, code_line))


def stubbed(node: cst.FunctionDef, keep_docstring: bool, body: str = "raise") -> cst.FunctionDef:
    """`node` with its body replaced by BODIES[body] (after the docstring, if kept)."""
    stmts = list(body_statements(node))
    new_body: list[cst.BaseStatement] = []
    if keep_docstring and stmts and is_docstring(stmts[0]):
        new_body.append(stmts[0].with_changes(leading_lines=()))
    new_body.append(BODIES[body])
    if isinstance(node.body, cst.IndentedBlock):
        # Comments at the end of the block belong to the deleted body; blank lines stay.
        footer = [line for line in node.body.footer if line.comment is None]
        return node.with_changes(body=node.body.with_changes(body=new_body, footer=footer))
    return node.with_changes(body=cst.IndentedBlock(body=new_body))


def function_at(project: PythonProject, path: str, def_line: int) -> cst.FunctionDef | None:
    """The function (of the project's parsed tree) whose name is on `def_line`."""
    return project.functions_by_line(path).get(def_line)


def signature_of(module: cst.Module, node: cst.FunctionDef) -> str:
    """Decorators and `def` line(s), without the body."""
    header = node.with_changes(body=cst.SimpleStatementSuite([cst.Expr(cst.Ellipsis())]),
                               leading_lines=())
    return module.code_for_node(header).rstrip().removesuffix("...").rstrip().rstrip(":") + ":"


def bare_stub(node: cst.FunctionDef, body: str = "raise") -> cst.FunctionDef:
    """A definition that keeps only the name importable: `def name(*args, **kwargs)` and
    BODIES[body]; methods keep their first parameter. Blank lines before it stay, comments
    (part of what is deleted) go."""
    params = node.params.params[:1] if _first_param_is_bound(node) else ()
    first = f"{params[0].name.value}, " if params else ""
    header = f"{'async ' if node.asynchronous else ''}def {node.name.value}({first}*args, **kwargs):"
    stub = cst.parse_statement(f"{header}\n    pass\n")
    assert isinstance(stub, cst.FunctionDef)
    return stub.with_changes(body=stub.body.with_changes(body=[BODIES[body]]),
                             leading_lines=[ln for ln in node.leading_lines if ln.comment is None])


def _first_param_is_bound(node: cst.FunctionDef) -> bool:
    """Whether `self`/`cls` leads the parameters (a method that is not a staticmethod)."""
    return bool(node.params.params) and node.params.params[0].name.value in ("self", "cls") \
        and "staticmethod" not in decorator_names(node)


def class_header(module: cst.Module, node: cst.ClassDef) -> str:
    """Decorators and the `class` line, without the body."""
    header = node.with_changes(body=cst.SimpleStatementSuite([cst.Expr(cst.Ellipsis())]),
                               leading_lines=())
    return module.code_for_node(header).rstrip().removesuffix("...").rstrip().rstrip(":") + ":"


def describe(module: cst.Module, node: cst.FunctionDef | cst.ClassDef, symbol: str, path: str,
             kind: str, keep_docstring: bool) -> dict[str, str | None]:
    """What a problem statement may say about one deleted definition: never its body."""
    header = signature_of(module, node) if isinstance(node, cst.FunctionDef) \
        else class_header(module, node)
    return {"symbol": symbol, "path": path, "kind": kind, "signature": header,
            "docstring": node.get_docstring() if keep_docstring else None}


def quotable(items: Sequence[dict[str, str | None]]) -> list[str]:
    """The lines a statement may repeat although they were deleted: documentation, which
    the recipe chose to show (`task.keep_docstrings`), and signatures."""
    lines = []
    for item in items:
        for text in (item.get("docstring"), item.get("signature")):
            lines += [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines


def dunder_all(module: cst.Module) -> set[str] | None:
    """The names a literal module-level `__all__` lists, or None when there is none."""
    names: set[str] | None = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                [small.target] if isinstance(small, cst.AnnAssign | cst.AugAssign) else []
            if not any(isinstance(t, cst.Name) and t.value == "__all__" for t in targets):
                continue
            value = getattr(small, "value", None)
            if isinstance(value, cst.List | cst.Tuple | cst.Set):
                names = (names or set()) | {e.value.evaluated_value for e in value.elements
                                            if isinstance(e.value, cst.SimpleString)}
    return names

"""`remove-module`: a whole module's code goes; its public names are re-declared as stubs.

What stays: the module docstring (per recipe), its imports (other modules may import names
through it), `__all__`, `if TYPE_CHECKING:` blocks and public constants whose values need
nothing the module defines. Each public function becomes `def name(*args, **kwargs): raise
NotImplementedError` and each public class `class Name(<its bases>)` whose `__init__` raises,
so importers still import; private functions, classes and data are removed. A module with
other module-level code (loops, calls, computed public values) is not a candidate: there is
no honest stub for it.
"""

from __future__ import annotations

import builtins

import libcst as cst

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.scopes import ModuleScopes, candidate_scopes, scopes_of
from taskforge.languages.python.delete.syntax import (
    BODIES,
    bare_stub,
    describe,
    dunder_all,
    is_docstring,
    quotable,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion

BUILTINS = frozenset(dir(builtins))


class _Names(cst.CSTVisitor):
    """Names an expression reads (not attribute names or keyword-argument names)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def _reads(node: cst.CSTNode) -> set[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.names


def _imported(statement: cst.BaseStatement) -> set[str] | None:
    """The names an import line binds, or None when the line is not only imports."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    names: set[str] = set()
    for small in statement.body:
        if not isinstance(small, cst.Import | cst.ImportFrom):
            return None
        if isinstance(small.names, cst.ImportStar):
            continue
        for alias in small.names:
            bound = alias.asname.name if alias.asname else alias.name
            code = cst.Module([]).code_for_node(bound)
            names.add(code.split(".")[0])
    return names


def _assigned(statement: cst.BaseStatement) -> tuple[set[str], list[cst.BaseExpression]] | None:
    """Target names and values of an assignment line, or None for anything else."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    names: set[str] = set()
    values: list[cst.BaseExpression] = []
    for small in statement.body:
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            targets = [small.target]
        else:
            return None
        if not all(isinstance(t, cst.Name) for t in targets):
            return None
        names |= {t.value for t in targets}  # type: ignore[attr-defined]
        values.append(small.value)  # type: ignore[arg-type]
    return names, values


def _is_guard(statement: cst.BaseStatement, name: str) -> bool:
    """`if TYPE_CHECKING:` / `if typing.TYPE_CHECKING:`, or `if __name__ == ...:`."""
    if not isinstance(statement, cst.If):
        return False
    test = statement.test
    if isinstance(test, cst.Comparison):
        test = test.left
    return name in _reads(test) or (isinstance(test, cst.Attribute) and test.attr.value == name)


def _class_stub(node: cst.ClassDef, body: str) -> cst.ClassDef:
    init = cst.parse_statement("def __init__(self, *args, **kwargs):\n    pass\n")
    assert isinstance(init, cst.FunctionDef)
    init = init.with_changes(body=init.body.with_changes(body=[BODIES[body]]))
    return node.with_changes(decorators=(), body=cst.IndentedBlock(body=[init]),
                             leading_lines=[ln for ln in node.leading_lines if ln.comment is None])


def stub_module(scopes: ModuleScopes, keep_docstring: bool,
                body: str = "raise") -> tuple[cst.Module, list[cst.CSTNode]] | None:
    """The module with its code replaced by stubs, and the public definitions it stubbed;
    None when the module holds code that has no stub (see the module docstring)."""
    module = scopes.module
    listed = dunder_all(module)

    def public(name: str) -> bool:
        return name in listed if listed is not None else not name.startswith("_")

    known = set(BUILTINS) | {"__name__", "__file__", "__doc__"}
    kept: list[cst.BaseStatement] = []
    stubbed: list[cst.CSTNode] = []
    for i, statement in enumerate(module.body):
        if i == 0 and is_docstring(statement):
            if keep_docstring:
                kept.append(statement)
        elif (names := _imported(statement)) is not None:
            known |= names
            kept.append(statement)
        elif _is_guard(statement, "TYPE_CHECKING"):
            kept.append(statement)
        elif _is_guard(statement, "__name__"):
            continue
        elif isinstance(statement, cst.FunctionDef):
            if public(statement.name.value):
                kept.append(bare_stub(statement, body))
                stubbed.append(statement)
                known.add(statement.name.value)
        elif isinstance(statement, cst.ClassDef):
            if public(statement.name.value):
                bases = set().union(*(_reads(a) for a in (*statement.bases, *statement.keywords)))
                if not bases <= known:
                    return None  # a base the stub cannot name
                kept.append(_class_stub(statement, body))
                stubbed.append(statement)
                known.add(statement.name.value)
        elif (assignment := _assigned(statement)) is not None:
            names, values = assignment
            if names == {"__all__"}:
                kept.append(statement)
            elif any(public(n) for n in names):
                if not all(_reads(v) <= known for v in values):
                    return None  # a public value computed from the module's own code
                kept.append(statement)
                known |= names
        else:
            return None
    if not stubbed:
        return None
    return module.with_changes(body=kept), stubbed


class RemoveModule(PythonStrategy):
    name = "remove-module"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for scopes in scopes_of(project):
            stubs = stub_module(scopes, keep_docstring=True)
            if stubs is None:
                continue
            removed = [d for d in scopes.definitions if d.owner_class is None]
            last = scopes.project.positions(scopes.path)[scopes.module.body[-1]].end.line
            found.append(make_candidate(
                self.name, baseline, select, path=scopes.path,
                symbol=project.module_name(scopes.path), kind="module", start_line=1,
                end_line=last, body_lines=sum(len(d.lines) for d in removed),
                spans=[(scopes.path, d.lines) for d in removed], symbols=len(removed),
                module_level=True))
        return [c for c in found if c is not None]

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        scopes, _ = candidate_scopes(project, candidate)
        stubs = stub_module(scopes, options.keep_docstrings, body)
        if stubs is None:
            raise Rejected("not-found", candidate.symbol)
        module, public = stubs
        items = []
        for node in public:
            assert isinstance(node, cst.FunctionDef | cst.ClassDef)
            kind = "class" if isinstance(node, cst.ClassDef) else "function"
            items.append(describe(scopes.module, node, scopes.symbol(node.name.value),
                                  candidate.path, kind, options.keep_docstrings))
            if isinstance(node, cst.ClassDef):
                items += [describe(scopes.module, d.node, scopes.symbol(d.qualname),
                                   candidate.path, "method", options.keep_docstrings)
                          for d in scopes.functions() if d.owner_class == node.name.value
                          and (not d.name.startswith("_") or d.name.endswith("__"))]
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, scopes.symbol(d.qualname),
                                        "class" if isinstance(d.node, cst.ClassDef)
                                        else "function", d.def_line, d.end_line)
                          for d in scopes.definitions if d.owner_class is None),
            new_texts={candidate.path: module.code},
            statement_facts={"kind": "module", "state": "stub", "symbol": candidate.symbol,
                             "path": candidate.path,
                             "docstring": scopes.module.get_docstring()
                             if options.keep_docstrings else None,
                             "items": items, "quotable": quotable(items)})

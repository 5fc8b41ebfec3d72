"""`stub-class`: every method of a class gets the body `raise NotImplementedError`.

The class statement, its bases, decorators, class attributes and every signature stay; the
agent re-implements the class's behaviour. Docstrings (the class's and the methods') are kept
or dropped per recipe. Each method stays the code object it was, so the fast path screens
the candidate by swapping all of them at once.
"""

from __future__ import annotations

import libcst as cst

from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.scopes import (
    Definition,
    ModuleScopes,
    candidate_scopes,
    only_definition,
    scopes_of,
)
from taskforge.languages.python.delete.syntax import (
    body_statements,
    describe,
    is_docstring,
    is_trivial,
    quotable,
    stubbed,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion

MIN_METHODS = 2  # one method is `stub-function`'s task


def stubbable_methods(scopes: ModuleScopes, class_name: str) -> list[Definition]:
    return [d for d in scopes.functions()
            if d.owner_class == class_name and not d.declaration_only
            and isinstance(d.node, cst.FunctionDef) and not is_trivial(body_statements(d.node))]


class StubClass(PythonStrategy):
    name = "stub-class"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for scopes in scopes_of(project):
            for cls in scopes.classes():
                methods = stubbable_methods(scopes, cls.qualname)
                if len(methods) < MIN_METHODS:
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=scopes.path,
                    symbol=scopes.symbol(cls.qualname), kind="class",
                    start_line=cls.def_line, end_line=cls.end_line,
                    body_lines=sum(len(m.body_lines) for m in methods),
                    spans=[(scopes.path, m.body_lines) for m in methods],
                    symbols=len(methods),
                    targets=tuple((scopes.path, m.first_line, m.name) for m in methods)))
        return [c for c in found if c is not None]

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        scopes, class_name = candidate_scopes(project, candidate)
        cls = only_definition(scopes, class_name, candidate.symbol, cst.ClassDef).node
        # Every method that is not a declaration; a method stubbed already stays as it is.
        methods = [d for d in scopes.functions()
                   if d.owner_class == class_name and not d.declaration_only]
        items = [describe(scopes.module, cls, candidate.symbol, candidate.path, "class",
                          options.keep_docstrings)]
        stubs = {}
        for method in methods:
            assert isinstance(method.node, cst.FunctionDef)
            stubs[method.node] = stubbed(method.node, options.keep_docstrings, body)
            items.append(describe(scopes.module, method.node, scopes.symbol(method.qualname),
                                  candidate.path, "method", options.keep_docstrings))
        block = cls.body
        assert isinstance(block, cst.IndentedBlock)  # it has methods
        statements = [stubs.get(s, s) for s in block.body]
        if not options.keep_docstrings and is_docstring(statements[0]):
            # The docstring goes, and the blank lines that separated it from the rest.
            statements = [statements[1].with_changes(leading_lines=()), *statements[2:]]
        new_class = cls.with_changes(body=block.with_changes(body=statements))
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, scopes.symbol(m.qualname), "method",
                                        m.def_line, m.end_line)
                          for m in methods if not is_trivial(body_statements(m.node))),
            new_texts={candidate.path: project.replace_node(candidate.path, cls, new_class)},
            statement_facts={"kind": "class", "state": "stub", "symbol": candidate.symbol,
                             "path": candidate.path, "items": items,
                             "quotable": quotable(items)})

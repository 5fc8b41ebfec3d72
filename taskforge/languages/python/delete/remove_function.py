"""`remove-function`: a module-level function's whole definition is removed.

The agent has to write it again, from the statement's name, signature and documentation.
A name something needs at import time (another file imports or patches it, the module uses
it while loading, `__all__` lists it) cannot simply vanish: per `task.broken_imports` it is
re-declared as a bare stub (`def name(*args, **kwargs): raise NotImplementedError`, so the
signature is still to be written) or the candidate is rejected.
"""

from __future__ import annotations

import libcst as cst

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.scopes import candidate_scopes, only_definition, scopes_of
from taskforge.languages.python.delete.syntax import (
    bare_stub,
    body_statements,
    describe,
    is_trivial,
    quotable,
    stubbed,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


class RemoveFunction(PythonStrategy):
    name = "remove-function"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for scopes in scopes_of(project):
            for qualname, definitions in scopes.by_qualname.items():
                # Redefinitions (overloads, conditional variants) are not one thing to remove.
                if "." in qualname or len(definitions) != 1:
                    continue
                (definition,) = definitions
                node = definition.node
                if not isinstance(node, cst.FunctionDef) or definition.declaration_only \
                        or is_trivial(body_statements(node)):
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=scopes.path,
                    symbol=scopes.symbol(qualname), kind="function",
                    start_line=definition.def_line, end_line=definition.end_line,
                    body_lines=len(definition.body_lines),
                    spans=[(scopes.path, definition.body_lines)], module_level=True))
        return [c for c in found if c is not None]

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        scopes, qualname = candidate_scopes(project, candidate)
        node = only_definition(scopes, qualname, candidate.symbol, cst.FunctionDef).node
        assert isinstance(node, cst.FunctionDef)
        facts = describe(scopes.module, node, candidate.symbol, candidate.path, "function",
                         options.keep_docstrings)
        needed = scopes.import_use(node.name.value)
        if needed and options.broken_imports == "reject":
            raise Rejected("breaks-imports", needed)
        if needed:
            new: cst.FunctionDef | None = bare_stub(node, body)
        elif body == "raise":
            new = None
        else:  # a trivial solution: the definition back, with a trivial body
            new = stubbed(node, keep_docstring=False, body=body)
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, "function",
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: project.replace_nodes(candidate.path, {node: new})},
            statement_facts={"kind": "function", "state": "stub" if needed else "removed",
                             "symbol": candidate.symbol, "path": candidate.path,
                             "items": [facts], "quotable": quotable([facts])})

"""`remove-method`: one method of a class, or several, removed with their whole definitions.

One method is every definition of its name in the class: a property's getter, setter and
deleter, or overloads and their implementation, go together. "Several" is every public
method of a class that qualifies (at least two), as one task. A method the class body uses
while it is built (`area = property(_area)`, an alias) is not a candidate: removing it
would break the import.
"""

from __future__ import annotations

import libcst as cst

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.scopes import Definition, ModuleScopes, candidate_scopes, scopes_of
from taskforge.languages.python.delete.syntax import body_statements, describe, is_trivial, quotable, stubbed
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


def removable_methods(scopes: ModuleScopes, class_name: str) -> dict[str, list[Definition]]:
    """Method name -> its definitions, for the methods of `class_name` worth re-writing."""
    found = {}
    for qualname, definitions in scopes.by_qualname.items():
        if not qualname.startswith(class_name + ".") or \
                not isinstance(definitions[0].node, cst.FunctionDef):
            continue
        name = qualname.rsplit(".", 1)[1]
        implementations = [d for d in definitions if not d.declaration_only]
        if not implementations or all(is_trivial(body_statements(d.node)) for d in implementations
                                      if isinstance(d.node, cst.FunctionDef)):
            continue
        if scopes.used_at_import(name, exclude=qualname) or \
                scopes.used_at_import("." + name, exclude=qualname):
            continue  # the class body uses it while the class is built
        found[name] = definitions
    return found


def method_group_symbol(scopes: ModuleScopes, class_name: str, names: list[str]) -> str:
    return scopes.symbol(f"{class_name}.{names[0]}" if len(names) == 1
                         else f"{class_name}.{{{','.join(names)}}}")


class RemoveMethod(PythonStrategy):
    name = "remove-method"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for scopes in scopes_of(project):
            for cls in scopes.classes():
                methods = removable_methods(scopes, cls.qualname)
                public = [n for n in methods if not n.startswith("_")]
                groups = [[n] for n in methods] + ([public] if len(public) >= 2 else [])
                for names in groups:
                    definitions = [d for n in names for d in methods[n]]
                    found.append(make_candidate(
                        self.name, baseline, select, path=scopes.path,
                        symbol=method_group_symbol(scopes, cls.qualname, names),
                        kind="method" if len(names) == 1 else "methods",
                        start_line=min(d.def_line for d in definitions),
                        end_line=max(d.end_line for d in definitions),
                        body_lines=sum(len(d.body_lines) for d in definitions),
                        spans=[(scopes.path, d.body_lines) for d in definitions],
                        symbols=len(names), module_level=True))
        return [c for c in found if c is not None]

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        scopes, qualname = candidate_scopes(project, candidate)
        class_name, _, member = qualname.partition(".")
        names = member.strip("{}").split(",")
        definitions = [d for n in names for d in scopes.by_qualname.get(f"{class_name}.{n}", [])]
        if not definitions:
            raise Rejected("not-found", candidate.symbol)
        changes: dict[cst.CSTNode, cst.CSTNode | None] = {}
        items = []
        for definition in definitions:
            node = definition.node
            assert isinstance(node, cst.FunctionDef)
            # A trivial solution puts the methods back with a trivial body.
            changes[node] = None if body == "raise" else stubbed(node, False, body)
            if not definition.declaration_only:
                items.append(describe(scopes.module, node, scopes.symbol(definition.qualname),
                                      candidate.path, "method", options.keep_docstrings))
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, scopes.symbol(d.qualname), "method",
                                        d.def_line, d.end_line) for d in definitions),
            new_texts={candidate.path: project.replace_nodes(candidate.path, changes)},
            statement_facts={"kind": candidate.kind, "state": "removed",
                             "symbol": candidate.symbol, "path": candidate.path,
                             "class": scopes.symbol(class_name), "items": items,
                             "quotable": quotable(items)})

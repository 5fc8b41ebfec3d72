"""`stub-class`: the body of every method of a top-level class (two or more with code)
becomes `throw new Error("not implemented");`. The class statement, its fields, the
constructor and every signature stay: the constructor builds the state the methods use, and
with it stubbed no instance could be made to test the others."""

from __future__ import annotations

from taskforge.errors import Rejected
from taskforge.languages.javascript.delete.common import RAISES, facts_of, qualname_of, tree_of
from taskforge.languages.javascript.delete.project import JavaScriptProject, JavaScriptStrategy
from taskforge.languages.javascript.delete.syntax import (
    Function,
    checked,
    classes,
    is_trivial,
    splice,
    stub_block,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


def _stubbable(methods: list[Function]) -> list[Function]:
    return [m for m in methods if not is_trivial(m) and not m.qualname.endswith(".constructor")]


class StubClass(JavaScriptStrategy):
    name = "stub-class"

    def candidates(self, project: JavaScriptProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path in project.source_files:
            tree = project.tree(path)
            for name, node, statement, methods in classes(tree) if tree is not None else ():
                chosen = _stubbable(methods)
                if len(chosen) < 2:
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=path, symbol=project.symbol(path, name),
                    kind="class", start_line=statement.start_point[0] + 1,
                    end_line=node.end_point[0] + 1,
                    body_lines=sum(len(m.body_lines) for m in chosen),
                    spans=[(path, m.body_lines) for m in chosen], symbols=len(chosen)))
        return [c for c in found if c is not None]

    def apply(self, project: JavaScriptProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        name = qualname_of(project, candidate)
        source = project.source(candidate.path)
        found = [methods for cls, _node, statement, methods in classes(tree_of(project, candidate.path))
                 if cls == name and statement.start_point[0] + 1 == candidate.start_line]
        if not found:
            raise Rejected("not-found", candidate.symbol)
        chosen = _stubbable(found[0])
        edits = [(m.body.start_byte, m.body.end_byte, stub_block(source, m, body)) for m in chosen]
        new_text = checked(candidate.path, splice(source, edits))
        items = [facts_of(source, m, project.symbol(candidate.path, m.qualname), candidate.path,
                          options.keep_docstrings) for m in chosen]
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, project.symbol(candidate.path, m.qualname),
                                        "method", m.start_line, m.end_line) for m in chosen),
            new_texts={candidate.path: new_text},
            statement_facts={"kind": "class", "symbol": candidate.symbol, "path": candidate.path,
                             "items": items, "raises": RAISES,
                             "quotable": [i["signature"] for i in items]})

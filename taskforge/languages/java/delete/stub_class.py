"""`stub-class`: the body of every method of a class (two or more with code) becomes the
stub. The class declaration, its fields, constructors, nested types and every signature
stay: the constructors build the state the methods use."""

from __future__ import annotations

from taskforge.errors import Rejected
from taskforge.languages.java.delete.common import RAISES, facts_of, tree_of
from taskforge.languages.java.delete.project import JavaProject, JavaStrategy
from taskforge.languages.java.delete.syntax import (
    Method,
    checked,
    is_trivial,
    methods,
    splice,
    stub_block,
    types,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion

CLASSES = ("class_declaration", "enum_declaration", "record_declaration")


def _classes(project: JavaProject, path: str) -> list[tuple[str, int, int, list[Method]]]:
    """(qualified name, first line, last line, methods to stub) of each class of a file."""
    tree = project.tree(path)
    if tree is None:
        return []
    every = list(methods(tree))
    found = []
    for node, kind, qual in types(tree):
        if kind not in CLASSES:
            continue
        own = [m for m in every if m.owner == node and not is_trivial(m)]
        found.append((qual, node.start_point[0] + 1, node.end_point[0] + 1, own))
    return found


class StubClass(JavaStrategy):
    name = "stub-class"

    def candidates(self, project: JavaProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path in project.source_files:
            for qual, first, last, chosen in _classes(project, path):
                if len(chosen) < 2:
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=path, symbol=project.symbol(path, qual),
                    kind="class", start_line=first, end_line=last,
                    body_lines=sum(len(m.body_lines) for m in chosen),
                    spans=[(path, m.body_lines) for m in chosen], symbols=len(chosen)))
        return [c for c in found if c is not None]

    def apply(self, project: JavaProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        tree_of(project, candidate.path)
        qual = project.qualname(candidate.path, candidate.symbol)
        found = [c for c in _classes(project, candidate.path)
                 if c[0] == qual and c[1] == candidate.start_line]
        if not found:
            raise Rejected("not-found", candidate.symbol)
        chosen = found[0][3]
        source = project.source(candidate.path)
        edits = [(m.body.start_byte, m.body.end_byte, stub_block(source, m, body))
                 for m in chosen if m.body is not None]
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

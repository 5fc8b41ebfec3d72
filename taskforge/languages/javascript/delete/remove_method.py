"""`remove-method`: one method of a top-level class is removed (with its JSDoc comment);
the class keeps every other member. Getters and setters are methods of their own name
(`Class.size[get]`); the constructor is never removed."""

from __future__ import annotations

from taskforge.languages.javascript.delete.common import RAISES, facts_of, function_of
from taskforge.languages.javascript.delete.project import JavaScriptProject, JavaScriptStrategy
from taskforge.languages.javascript.delete.syntax import (
    checked,
    functions,
    is_trivial,
    leading_doc,
    removal_span,
    splice,
    stub_block,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


class RemoveMethod(JavaScriptStrategy):
    name = "remove-method"

    def candidates(self, project: JavaScriptProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path in project.source_files:
            tree = project.tree(path)
            for function in functions(tree) if tree is not None else ():
                if function.kind != "method" or is_trivial(function) or \
                        function.qualname.endswith(".constructor"):
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=path,
                    symbol=project.symbol(path, function.qualname), kind="method",
                    start_line=function.start_line, end_line=function.end_line,
                    body_lines=len(function.body_lines), spans=[(path, function.body_lines)]))
        return [c for c in found if c is not None]

    def apply(self, project: JavaScriptProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        function = function_of(project, candidate)
        source = project.source(candidate.path)
        facts = facts_of(source, function, candidate.symbol, candidate.path,
                         options.keep_docstrings)
        if body != "raise":  # a trivial solution: the method back, with a trivial body
            edits = [(function.body.start_byte, function.body.end_byte,
                      stub_block(source, function, body))]
        else:
            start, end = removal_span(source, function.node, leading_doc(source, function.node))
            edits = [(start, end, b"")]
        new_text = checked(candidate.path, splice(source, edits))
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, "method",
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: new_text},
            statement_facts={"kind": "method", "state": "removed", "symbol": candidate.symbol,
                             "path": candidate.path, "class": function.class_name,
                             "items": [facts], "raises": RAISES,
                             "quotable": [facts["signature"]]})

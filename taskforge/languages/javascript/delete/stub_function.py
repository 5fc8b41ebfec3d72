"""`stub-function`: a function's or method's body becomes `throw new Error("not
implemented");`.

Function declarations, `const f = (...) => {...}` and function expressions bound to names,
default and named exports, and the methods of top-level classes, each with a block body. The
signature (TypeScript types included), the JSDoc comment (unless the recipe drops it) and
every other byte of the file stay as they were. Applying it twice gives the same text.
"""

from __future__ import annotations

from taskforge.languages.javascript.delete.common import (
    doc_removal,
    facts_of,
    function_of,
    tree_of,
)
from taskforge.languages.javascript.delete.project import JavaScriptProject, JavaScriptStrategy
from taskforge.languages.javascript.delete.syntax import checked, functions, is_trivial, splice, stub_block
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


class StubFunction(JavaScriptStrategy):
    name = "stub-function"

    def candidates(self, project: JavaScriptProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path in project.source_files:
            tree = project.tree(path)
            for function in functions(tree) if tree is not None else ():
                if is_trivial(function):
                    continue
                lines = function.body_lines
                found.append(make_candidate(
                    self.name, baseline, select, path=path,
                    symbol=project.symbol(path, function.qualname), kind=function.kind,
                    start_line=function.start_line, end_line=function.end_line,
                    body_lines=len(lines), spans=[(path, lines)],
                    targets=((path, function.start_line, function.qualname),)))
        return [c for c in found if c is not None]

    def apply(self, project: JavaScriptProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        tree_of(project, candidate.path)
        function = function_of(project, candidate)
        source = project.source(candidate.path)
        edits = [(function.body.start_byte, function.body.end_byte,
                  stub_block(source, function, body))]
        edits += doc_removal(source, function, options.keep_docstrings)
        new_text = checked(candidate.path, splice(source, edits))
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, candidate.kind,
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: new_text},
            statement_facts=facts_of(source, function, candidate.symbol, candidate.path,
                                     options.keep_docstrings))

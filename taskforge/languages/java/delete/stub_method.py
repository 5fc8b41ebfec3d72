"""`stub-method`: a method's body becomes
`throw new UnsupportedOperationException("not implemented");`.

Every method with a block body of every declared type (classes, nested classes, enums,
records, interfaces' `default` and `static` methods); not constructors (the state other
methods use), not bodies that only throw. The signature (generics, annotations, `throws`),
the javadoc (unless the recipe drops it) and every other byte of the file stay. Registered
under `stub-method` only: see the README (Java, "Strategies") for why not `stub-function`.
"""

from __future__ import annotations

from taskforge.languages.java.delete.common import doc_removal, facts_of, method_of, tree_of
from taskforge.languages.java.delete.project import JavaProject, JavaStrategy
from taskforge.languages.java.delete.syntax import checked, is_trivial, methods, splice, stub_block
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


class StubMethod(JavaStrategy):
    name = "stub-method"

    def candidates(self, project: JavaProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path in project.source_files:
            tree = project.tree(path)
            for method in methods(tree) if tree is not None else ():
                if is_trivial(method):
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=path,
                    symbol=project.symbol(path, method.qualname), kind="method",
                    start_line=method.start_line, end_line=method.end_line,
                    body_lines=len(method.body_lines), spans=[(path, method.body_lines)],
                    targets=((path, method.start_line, method.qualname),)))
        return [c for c in found if c is not None]

    def apply(self, project: JavaProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        tree_of(project, candidate.path)
        method = method_of(project, candidate)
        source = project.source(candidate.path)
        assert method.body is not None
        edits = [(method.body.start_byte, method.body.end_byte, stub_block(source, method, body))]
        edits += doc_removal(source, method, options.keep_docstrings)
        new_text = checked(candidate.path, splice(source, edits))
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, "method",
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: new_text},
            statement_facts=facts_of(source, method, candidate.symbol, candidate.path,
                                     options.keep_docstrings))

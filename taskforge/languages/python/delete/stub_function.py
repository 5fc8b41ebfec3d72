"""`stub-function`: a function's or method's body becomes `raise NotImplementedError`.

The signature, decorators, annotations and every other byte of the file stay as they were;
the docstring is kept or dropped per recipe. Applying it twice gives the same text.
"""

from __future__ import annotations

from libcst.metadata import MetadataWrapper

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.syntax import (
    FunctionFinder,
    body_statements,
    function_at,
    is_trivial,
    signature_of,
    stubbed,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


class StubFunction(PythonStrategy):
    name = "stub-function"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        stable = set(baseline.stable)
        found: list[Candidate] = []
        for path, module in project.parsed_files():
            finder = FunctionFinder()
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # the project's own tree
            wrapper.visit(finder)
            before = len(found)
            for qualname, node, def_line, body_start, end_line, code_line in finder.found:
                if is_trivial(body_statements(node)):
                    continue
                body_lines = end_line - body_start + 1
                if body_lines < select.min_body_lines:
                    continue
                body = range(body_start, end_line + 1)
                tests, import_time = baseline.tests_covering(path, body)
                if import_time:  # code run while importing can change any test's outcome
                    tests = stable
                covering = tuple(sorted(tests & stable))
                if len(covering) < select.min_covering_tests:
                    continue
                kind = "method" if "." in qualname else "function"
                found.append(Candidate(
                    strategy=self.name, path=path,
                    symbol=f"{project.module_name(path)}.{qualname}", kind=kind,
                    start_line=def_line, end_line=end_line, body_lines=body_lines,
                    covering_tests=covering, import_time=import_time,
                    subprocess=baseline.reached_by_subprocess(path, body),
                    targets=((path, code_line, node.name.value),)))
            if len(found) > before:  # `apply` needs them again; only these files are kept
                project.keep_positions(path, wrapper)
        return found

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        module = project.parse(candidate.path)
        if module is None:
            raise Rejected("unparsable", candidate.path)
        node = function_at(project, candidate.path, candidate.start_line)
        if node is None:
            raise Rejected("not-found", candidate.symbol)
        new_text = project.replace_node(candidate.path, node,
                                        stubbed(node, options.keep_docstrings, body))
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, candidate.kind,
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: new_text},
            statement_facts={
                "symbol": candidate.symbol, "path": candidate.path, "kind": candidate.kind,
                "signature": signature_of(module, node),
                "docstring": node.get_docstring() if options.keep_docstrings else None,
            })


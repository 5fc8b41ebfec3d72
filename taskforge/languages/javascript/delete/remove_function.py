"""`remove-function`: a top-level function's whole definition is removed (a declaration, or a
`const` bound to an arrow function or function expression), with its JSDoc comment.

A name another file mentions (an import, a re-export) or the rest of its own file uses cannot
simply vanish: an ES module importing a missing name fails to load. Per `task.broken_imports`
it is re-declared as a bare stub (`function name(...args) { throw ... }`, with the original
`export` keywords, so the parameters are still to be written) or the candidate is rejected.
"""

from __future__ import annotations

import re

from taskforge.errors import Rejected
from taskforge.languages.javascript.delete.common import (
    RAISES,
    declared_alone,
    facts_of,
    function_of,
)
from taskforge.languages.javascript.delete.project import JavaScriptProject, JavaScriptStrategy
from taskforge.languages.javascript.delete.syntax import (
    BODIES,
    Function,
    checked,
    functions,
    indentation,
    is_trivial,
    leading_doc,
    removal_span,
    splice,
    stub_block,
)
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


def _exported(function: Function) -> bytes:
    """The `export ` / `export default ` the statement starts with."""
    statement = function.statement
    if statement.type != "export_statement":
        return b""
    default = any(c.type == "default" for c in statement.children)
    return b"export default " if default else b"export "


class RemoveFunction(JavaScriptStrategy):
    name = "remove-function"

    def candidates(self, project: JavaScriptProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path in project.source_files:
            tree = project.tree(path)
            names = [f.qualname for f in functions(tree) if f.kind == "function"] if tree else []
            for function in functions(tree) if tree is not None else ():
                if function.kind != "function" or is_trivial(function) or \
                        names.count(function.qualname) != 1 or not declared_alone(function):
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=path,
                    symbol=project.symbol(path, function.qualname), kind="function",
                    start_line=function.start_line, end_line=function.end_line,
                    body_lines=len(function.body_lines), spans=[(path, function.body_lines)],
                    module_level=True))
        return [c for c in found if c is not None]

    def apply(self, project: JavaScriptProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        function = function_of(project, candidate)
        source = project.source(candidate.path)
        name = function.qualname
        facts = facts_of(source, function, candidate.symbol, candidate.path,
                         options.keep_docstrings)
        needed = self._needed(project, candidate.path, function, source)
        if needed and options.broken_imports == "reject":
            raise Rejected("breaks-imports", needed)
        doc = leading_doc(source, function.statement)
        if body != "raise":
            # A trivial solution: the definition back as it was, with a trivial body.
            edits = [(function.body.start_byte, function.body.end_byte,
                      stub_block(source, function, body))]
        elif needed:
            indent = indentation(source, function.statement.start_byte)
            start, end = removal_span(source, function.statement, doc, blank=False)
            async_ = b"async " if (function.node.text or b"").startswith(b"async") else b""
            stub = (indent + _exported(function) + async_ + b"function " +
                    (name.encode() if name != "default" else b"") + b"(...args) {\n" +
                    indent + b"  " + BODIES["raise"].encode() + b"\n" + indent + b"}\n")
            edits = [(start, end, stub)]
        else:
            start, end = removal_span(source, function.statement, doc)
            edits = [(start, end, b"")]
        new_text = checked(candidate.path, splice(source, edits))
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, "function",
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: new_text},
            statement_facts={"kind": "function", "state": "stub" if needed else "removed",
                             "symbol": candidate.symbol, "path": candidate.path,
                             "items": [facts], "raises": RAISES,
                             "quotable": [facts["signature"]]})

    @staticmethod
    def _needed(project: JavaScriptProject, path: str, function: Function,
                source: bytes) -> str:
        """Why the name must stay declared ('' when nothing needs it): another file
        mentions it, or its own file uses it outside the definition."""
        if function.qualname == "default":
            return f"{path}: the default export"
        others = project.mentioned_outside(function.qualname, path)
        if others:
            return f"{function.qualname} is used by {others[0]}"
        rest = source[:function.statement.start_byte] + source[function.statement.end_byte:]
        if re.search(rb"(?<![\w$.])" + re.escape(function.qualname.encode()) + rb"(?![\w$])",
                     rest):
            return f"{function.qualname} is used elsewhere in {path}"
        return ""

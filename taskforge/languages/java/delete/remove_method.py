"""`remove-method`: a method is removed with its overloads (the same name in the same type)
and their javadoc; the type keeps every other member.

Never a method another type must have: no `@Override`, no name that some interface or
abstract method of the project declares, no method of an interface. Never one the main
sources call (outside its own overloads): the tree would not compile. The test files that
call it no longer compile in the task state, so every test of those files is a covering test
(it fails there and passes with the reference).
"""

from __future__ import annotations

import dataclasses
import re

from taskforge.errors import Rejected
from taskforge.languages.java.delete.common import RAISES, facts_of
from taskforge.languages.java.delete.project import JavaProject, JavaStrategy
from taskforge.languages.java.delete.syntax import (
    Method,
    checked,
    is_trivial,
    leading_doc,
    methods,
    removal_span,
    splice,
    stub_block,
)
from taskforge.languages.java.testing import file_of
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


def _overloads(project: JavaProject, path: str, method: Method) -> list[Method]:
    tree = project.tree(path)
    return [m for m in (methods(tree) if tree is not None else ())
            if m.owner == method.owner and m.name == method.name]


def _removable(project: JavaProject, path: str, group: list[Method]) -> bool:
    first = group[0]
    if first.owner_kind in ("interface_declaration", "annotation_type_declaration") or \
            first.name in project.abstract_names or first.name in ("main", "toString",
                                                                   "equals", "hashCode",
                                                                   "compareTo", "iterator"):
        return False
    if any(m.body is None or "Override" in m.annotations or is_trivial(m) for m in group):
        return False
    call = re.compile(rb"(?<![\w$])" + re.escape(first.name.encode()) + rb"\s*\(|::\s*"
                      + re.escape(first.name.encode()) + rb"(?![\w$])")
    for other in project.mentioned_in(first.name, project.source_files):
        source = project.source(other)
        if other == path:  # the file itself, without the overloads' own text
            for m in sorted(group, key=lambda m: -m.node.start_byte):
                source = source[:m.node.start_byte] + source[m.node.end_byte:]
        if call.search(source):
            return False
    return True


class RemoveMethod(JavaStrategy):
    name = "remove-method"

    def candidates(self, project: JavaProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate] = []
        stable = set(baseline.stable)
        for path in project.source_files:
            tree = project.tree(path)
            seen: set[tuple[int, str]] = set()
            for method in methods(tree) if tree is not None else ():
                key = (method.owner.start_byte, method.name)
                if key in seen:
                    continue
                seen.add(key)
                group = _overloads(project, path, method)
                if not _removable(project, path, group):
                    continue
                candidate = make_candidate(
                    self.name, baseline, select, path=path,
                    symbol=project.symbol(path, f"{method.owner_name}.{method.name}"),
                    kind="method", start_line=method.start_line,
                    end_line=max(m.end_line for m in group),
                    body_lines=sum(len(m.body_lines) for m in group),
                    spans=[(path, m.body_lines) for m in group], symbols=len(group))
                if candidate is None:
                    continue
                callers = set(project.mentioned_in(method.name, project.test_files))
                broken = {t for t in stable if file_of(t) in callers}
                found.append(dataclasses.replace(
                    candidate, covering_tests=tuple(sorted(set(candidate.covering_tests) | broken))))
        return found

    def apply(self, project: JavaProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        first = next((m for m in methods(project.tree(candidate.path) or _no(candidate))
                      if m.start_line == candidate.start_line
                      and project.symbol(candidate.path, f"{m.owner_name}.{m.name}")
                      == candidate.symbol), None)
        if first is None:
            raise Rejected("not-found", candidate.symbol)
        group = _overloads(project, candidate.path, first)
        source = project.source(candidate.path)
        items = [facts_of(source, m, project.symbol(candidate.path, m.qualname), candidate.path,
                          options.keep_docstrings) for m in group]
        if body != "raise":  # a trivial solution: the methods back, with trivial bodies
            edits = [(m.body.start_byte, m.body.end_byte, stub_block(source, m, body))
                     for m in group if m.body is not None]
        else:
            edits = [(*removal_span(source, m.node, leading_doc(m.node)), b"") for m in group]
        new_text = checked(candidate.path, splice(source, edits))
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, project.symbol(candidate.path, m.qualname),
                                        "method", m.start_line, m.end_line) for m in group),
            new_texts={candidate.path: new_text},
            statement_facts={"kind": "method", "state": "removed", "symbol": candidate.symbol,
                             "path": candidate.path, "class": first.owner_name,
                             "items": items, "raises": RAISES,
                             "quotable": [i["signature"] for i in items]})


def _no(candidate: Candidate):
    raise Rejected("unparsable", candidate.path)

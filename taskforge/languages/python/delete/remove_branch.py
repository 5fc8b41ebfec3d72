"""`remove-branch`: inside a function, the body of the `if`/`elif`/`case` that handles one
option or mode becomes `raise NotImplementedError`.

A branch handles an option when its condition compares something with a constant (`mode ==
"fast"`, `op in ("+", "-")`, `kind is Kind.WORD`, alone or as one side of an `and`) or when it
is a `match` case with a real pattern (not `case _`). Its covering tests are the ones that
executed the branch's own lines (line-level coverage), so the rest of the function still
works and is still tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.scopes import Definition, ModuleScopes, candidate_scopes, scopes_of
from taskforge.languages.python.delete.syntax import BODIES, describe, is_trivial, quotable
from taskforge.languages.strategy import SelectOptions, TaskOptions, make_candidate
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion

OPTION_OPERATORS = (cst.Equal, cst.Is, cst.In)
MAX_CONDITION = 60  # characters of the condition kept in the symbol


def _constant(expr: cst.BaseExpression) -> bool:
    """A literal option value, a tuple of them, or an enum-like member (`Kind.WORD`)."""
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString | cst.Integer | cst.Float):
        return True
    if isinstance(expr, cst.Tuple | cst.List | cst.Set):
        return bool(expr.elements) and all(_constant(e.value) for e in expr.elements)
    if isinstance(expr, cst.Attribute):
        return expr.attr.value.isupper() or (isinstance(expr.value, cst.Name)
                                             and expr.value.value[:1].isupper())
    return False


def is_option_test(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.And):
        return is_option_test(expr.left) or is_option_test(expr.right)
    if not isinstance(expr, cst.Comparison):
        return False
    left = expr.left
    if isinstance(left, cst.Name) and left.value == "__name__":
        return False
    for target in expr.comparisons:
        if isinstance(target.operator, OPTION_OPERATORS) and \
                (_constant(left) or _constant(target.comparator)):
            return True
        left = target.comparator
    return False


def _real_pattern(pattern: cst.MatchPattern) -> bool:
    return not (isinstance(pattern, cst.MatchAs) and pattern.pattern is None)


@dataclass(frozen=True)
class Branch:
    owner: Definition  # the function or method that holds it
    node: cst.If | cst.MatchCase
    condition: str  # `if mode == "fast"` / `case Point(x=0)`, whitespace collapsed
    line: int  # the line of `if`/`elif`/`case`
    body_start: int
    end_line: int

    @property
    def body(self) -> list[cst.BaseStatement]:
        block = self.node.body
        return list(block.body) if isinstance(block, cst.IndentedBlock) \
            else [cst.SimpleStatementLine(block.body)]

    @property
    def lines(self) -> range:
        return range(self.body_start, self.end_line + 1)


class _BranchFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.If | cst.MatchCase] = []

    def visit_If(self, node: cst.If) -> None:
        if is_option_test(node.test):
            self.found.append(node)

    def visit_MatchCase(self, node: cst.MatchCase) -> None:
        if _real_pattern(node.pattern):
            self.found.append(node)


def branches_of(scopes: ModuleScopes) -> dict[str, Branch]:
    """Symbol -> branch, for every option branch of every function and method."""
    positions = scopes.project.positions(scopes.path)
    code = scopes.module.code_for_node
    found: dict[str, Branch] = {}
    for definition in scopes.functions():
        finder = _BranchFinder()
        definition.node.body.visit(finder)
        for node in finder.found:
            if isinstance(node, cst.If):
                header = f"if {code(node.test)}"
            else:
                guard = f" if {code(node.guard)}" if node.guard else ""
                header = f"case {code(node.pattern)}{guard}"
            header = re.sub(r"\s+", " ", header).strip()[:MAX_CONDITION]
            block = node.body
            first = block.body[0] if isinstance(block, cst.IndentedBlock) else block
            branch = Branch(definition, node, header, positions[node].start.line,
                            positions[first].start.line, positions[block].end.line)
            symbol = scopes.symbol(f"{definition.qualname}[{header}]")
            if symbol in found:  # the same condition twice in one function
                symbol += f"#{sum(s.startswith(symbol) for s in found) + 1}"
            found[symbol] = branch
    return found


class RemoveBranch(PythonStrategy):
    name = "remove-branch"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for scopes in scopes_of(project):
            for symbol, branch in branches_of(scopes).items():
                if is_trivial(branch.body):
                    continue
                found.append(make_candidate(
                    self.name, baseline, select, path=scopes.path, symbol=symbol,
                    kind="branch", start_line=branch.line, end_line=branch.end_line,
                    body_lines=len(branch.lines), spans=[(scopes.path, branch.lines)]))
        return [c for c in found if c is not None]

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        scopes, _ = candidate_scopes(project, candidate)
        branch = branches_of(scopes).get(candidate.symbol)
        if branch is None:
            raise Rejected("not-found", candidate.symbol)
        block = branch.node.body
        if isinstance(block, cst.IndentedBlock):
            # Comments at the end of the block belong to the deleted body; blank lines stay.
            new_block = block.with_changes(
                body=[BODIES[body]], footer=[ln for ln in block.footer if ln.comment is None])
        else:
            new_block = cst.IndentedBlock(body=[BODIES[body]])
        owner = branch.owner
        assert isinstance(owner.node, cst.FunctionDef)
        item = describe(scopes.module, owner.node, scopes.symbol(owner.qualname), candidate.path,
                        "method" if owner.owner_class else "function", options.keep_docstrings)
        return Deletion(
            strategy=self.name,
            deleted=(DeletedSymbol(candidate.path, candidate.symbol, "branch",
                                   candidate.start_line, candidate.end_line),),
            new_texts={candidate.path: project.replace_nodes(
                candidate.path, {branch.node: branch.node.with_changes(body=new_block)})},
            statement_facts={"kind": "branch", "state": "stub", "symbol": item["symbol"],
                             "path": candidate.path, "condition": branch.condition,
                             "items": [item], "quotable": quotable([item])})

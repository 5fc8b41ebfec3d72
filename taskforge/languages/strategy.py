"""The strategy interface, for every language: find candidates in a project, apply one to
make the task state.

A strategy is a small class with two methods. `apply` never splices text by line numbers: it
transforms a concrete syntax tree (LibCST for Python, tree-sitter for other languages), so
every byte outside the deleted span stays as it was.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from taskforge.model import Baseline, Candidate, Deletion

# What a removing strategy does with a name other code imports or uses at import time:
# re-declare it as a stub (the importers keep importing) or give the candidate up.
BROKEN_IMPORTS = ("stub", "reject")
# How much a problem statement says, from most to least (see taskforge.statement).
STATEMENT_DETAIL = ("full", "brief", "minimal")


@dataclass(frozen=True)
class SelectOptions:
    min_covering_tests: int = 1
    min_body_lines: int = 3
    min_lines: int = 0  # lines of code a deletion takes away (bodies, definitions, branches)
    max_lines: int | None = None
    min_symbols: int = 1  # symbols one deletion takes away (a cluster, several methods ...)
    max_symbols: int | None = None

    def allows(self, lines: int, symbols: int) -> bool:
        return (self.min_lines <= lines and (self.max_lines is None or lines <= self.max_lines)
                and self.min_symbols <= symbols
                and (self.max_symbols is None or symbols <= self.max_symbols))


@dataclass(frozen=True)
class TaskOptions:
    keep_docstrings: bool = True
    tests_visible: bool = True
    broken_imports: str = "stub"  # one of BROKEN_IMPORTS
    statement: str = "full"  # one of STATEMENT_DETAIL


def make_candidate(strategy: str, baseline: Baseline, select: SelectOptions, *, path: str,
                   symbol: str, kind: str, start_line: int, end_line: int, body_lines: int,
                   spans: Iterable[tuple[str, range]], symbols: int = 1,
                   targets: tuple[tuple[str, int, str], ...] = (),
                   module_level: bool = False) -> Candidate | None:
    """A candidate over the deleted `spans` (path, lines), or None when the recipe's select
    options exclude it. Tests that ran the spans must reach `min_covering_tests`.

    When the spans ran at import time, or the deletion changes module-level code
    (`module_level`: definitions removed, names re-declared), any test's outcome may change:
    every stable test covers it, and a collect-only check runs (`import_time`)."""
    if body_lines < select.min_body_lines or not select.allows(body_lines, symbols):
        return None
    stable = set(baseline.stable)
    spans = list(spans)
    tests: set[str] = set()
    import_time = module_level
    for span_path, lines in spans:
        ran, at_import = baseline.tests_covering(span_path, lines)
        tests |= ran
        import_time |= at_import
    if len(tests & stable) < select.min_covering_tests:
        return None
    covering = stable if import_time else tests & stable
    return Candidate(strategy=strategy, path=path, symbol=symbol, kind=kind,
                     start_line=start_line, end_line=end_line, body_lines=body_lines,
                     covering_tests=tuple(sorted(covering)), import_time=import_time,
                     targets=targets, symbols=symbols,
                     subprocess=any(baseline.reached_by_subprocess(p, lines) for p, lines in spans))


class Project(Protocol):
    """A language's parsed view of a snapshot's source files (tests excluded)."""

    root: Path
    source_files: tuple[str, ...]

    def text(self, path: str) -> str:
        """The text of one file of the tree, as the snapshot holds it."""
        ...


class Strategy(abc.ABC):
    name: ClassVar[str]
    language: ClassVar[str]

    @abc.abstractmethod
    def candidates(self, project: Project, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        """Every unit this strategy could delete, with the stable tests that executed it."""

    @abc.abstractmethod
    def apply(self, project: Project, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        """The task state for one candidate. Raises `Rejected` when it cannot be applied.

        `body` names what stands where code was deleted: "raise" (the task), or one of the
        trivial solutions a task must not reward (a key of the language's `null_bodies`)."""


def cluster_depths(entry: str, calls: dict[str, str], refs: dict[str, set[str]],
                   keeps: Callable[[str, set[str]], bool]) -> dict[str, int]:
    """A feature cluster's members by call depth from `entry` (depth 0), for any language.

    `calls`: each helper that may join (qualified name -> the word a call to it uses: a plain
    name, or `.name` for a method); `refs`: the words each function's body uses. Members are
    the helpers `entry` reaches through calls; a helper that something outside the cluster
    also uses (`keeps(helper, members)` is False) leaves it, with what only it reached, until
    the cluster holds still."""
    def reach(among: set[str]) -> dict[str, int]:
        depth = {entry: 0}
        frontier = [entry]
        while frontier:
            nxt = []
            for owner in frontier:
                names = refs.get(owner, set())
                for q in sorted({q for q in among if calls[q] in names} - set(depth)):
                    depth[q] = depth[owner] + 1
                    nxt.append(q)
            frontier = nxt
        return depth

    members = set(reach(set(calls)))
    while True:
        depth = reach({q for q in members - {entry} if keeps(q, members)})
        if set(depth) == members:
            return depth
        members = set(depth)

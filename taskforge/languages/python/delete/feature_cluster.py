"""`feature-cluster`: a public function or method, and every private helper only it reaches.

The call graph is read from the module: a module-level `_helper` is reached where a body
names it, a private method `_step` of the entry's class where a body uses `._step`. A
helper belongs to the cluster only when nothing outside the cluster refers to it: no other
function or method of the module, nothing at import time, no other file (tests included).
The entry point keeps its signature (importers keep working) and gets the body
`raise NotImplementedError`; the helpers are removed. The agent rebuilds the feature, with
whatever helpers it likes.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from taskforge.languages.python.delete.project import PythonProject, PythonStrategy
from taskforge.languages.python.delete.scopes import (
    Definition,
    ModuleScopes,
    candidate_scopes,
    only_definition,
    scopes_of,
)
from taskforge.languages.python.delete.syntax import body_statements, describe, is_trivial, quotable, stubbed
from taskforge.languages.strategy import (
    SelectOptions,
    TaskOptions,
    cluster_depths,
    make_candidate,
)
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


@dataclass(frozen=True)
class Cluster:
    entry: Definition
    helpers: tuple[Definition, ...]  # in file order
    depth: int  # the longest chain of calls from the entry through helpers


def _unique_function(scopes: ModuleScopes, qualname: str) -> Definition | None:
    definitions = scopes.by_qualname.get(qualname, [])
    if len(definitions) != 1 or not isinstance(definitions[0].node, cst.FunctionDef) \
            or definitions[0].declaration_only:
        return None
    return definitions[0]


def cluster_of(scopes: ModuleScopes, qualname: str) -> Cluster | None:
    """The cluster whose entry point is `qualname`, or None when it has no helper."""
    entry = _unique_function(scopes, qualname)
    if entry is None:
        return None
    cls = entry.owner_class
    pool: dict[str, tuple[Definition, str]] = {}  # qualname -> (helper, the word that uses it)
    for definition in scopes.functions():
        owner = definition.owner_class
        if not _private(definition.name) or definition.qualname == qualname or \
                _unique_function(scopes, definition.qualname) is None:
            continue
        if owner is None:
            pool[definition.qualname] = (definition, definition.name)
        elif owner == cls:
            pool[definition.qualname] = (definition, "." + definition.name)

    depth = cluster_depths(qualname, {q: word for q, (_d, word) in pool.items()}, scopes.refs,
                           lambda q, members: _only_in(scopes, pool[q][0], pool[q][1], members))
    members = set(depth)
    if len(members) < 2:
        return None
    chosen = sorted((pool[q][0] for q in members - {qualname}), key=lambda d: d.first_line)
    return Cluster(entry, tuple(chosen), max(depth.values()))


def _only_in(scopes: ModuleScopes, helper: Definition, word: str, members: set[str]) -> bool:
    """Whether nothing outside `members` refers to `helper` (used as `word`)."""
    for used in {word, helper.name}:
        if not scopes.owners_of(used) <= members:
            return False  # import time (None), a decorator ("@..."), another function
    return not scopes.project.mentioned_outside(helper.name, scopes.path)


class FeatureCluster(PythonStrategy):
    name = "feature-cluster"

    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for scopes in scopes_of(project):
            for definition in scopes.functions():
                if definition.name.startswith("_") or \
                        is_trivial(body_statements(definition.node)):  # type: ignore[arg-type]
                    continue
                cluster = cluster_of(scopes, definition.qualname)
                if cluster is None:
                    continue
                parts = (cluster.entry, *cluster.helpers)
                found.append(make_candidate(
                    self.name, baseline, select, path=scopes.path,
                    symbol=scopes.symbol(definition.qualname), kind="cluster",
                    start_line=definition.def_line, end_line=definition.end_line,
                    body_lines=len(cluster.entry.body_lines)
                    + sum(len(h.lines) for h in cluster.helpers),
                    spans=[(scopes.path, d.body_lines) for d in parts], symbols=len(parts),
                    module_level=True))
        return [c for c in found if c is not None]

    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        scopes, qualname = candidate_scopes(project, candidate)
        entry = only_definition(scopes, qualname, candidate.symbol, cst.FunctionDef)
        # Applied again to its own result the entry has no helpers left: it is stubbed
        # again, which gives the same text.
        cluster = cluster_of(scopes, qualname) or Cluster(entry, (), 0)
        assert isinstance(entry.node, cst.FunctionDef)
        changes: dict[cst.CSTNode, cst.CSTNode | None] = {
            entry.node: stubbed(entry.node, options.keep_docstrings, body)}
        # The helpers go in every state: a trivial entry point calls none of them.
        changes.update({helper.node: None for helper in cluster.helpers})
        item = describe(scopes.module, entry.node, candidate.symbol, candidate.path,
                        "method" if entry.owner_class else "function", options.keep_docstrings)
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, scopes.symbol(d.qualname),
                                        "method" if d.owner_class else "function",
                                        d.def_line, d.end_line)
                          for d in (entry, *cluster.helpers)),
            new_texts={candidate.path: project.replace_nodes(candidate.path, changes)},
            statement_facts={"kind": "cluster", "state": "stub", "symbol": candidate.symbol,
                             "path": candidate.path, "items": [item],
                             "helpers": len(cluster.helpers), "call_depth": cluster.depth,
                             "quotable": quotable([item])})

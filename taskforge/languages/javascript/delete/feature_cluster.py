"""`feature-cluster`: a public function or method, and every private helper only it reaches.

Python's strategy of the same name (`languages/python/delete/feature_cluster.py`), read from
tree-sitter's tree. The entry point is an exported top-level function (`export function`,
`export const f = () => {...}`, `export default function`, a name in `export { ... }`) or a
public method of a top-level class. Its helpers are what the module keeps to itself:

- a top-level function that is not exported (a module's own function: no other file can
  import it), reached where a body names it;
- a private method of the entry's class (`#step`, TypeScript's `private step`, or `_step`),
  reached where a body uses `.step` (`this.#step(...)`, `this._step(...)`).

A helper belongs to the cluster only when nothing outside the cluster refers to it: no other
function or method of the module, nothing at import time (module-level code, class fields,
decorators, `module.exports = {...}`, `export { helper }`), no other file (tests included;
a `#name` cannot be named outside its class). The entry point keeps its signature (importers
keep working) and gets the body `throw new Error("not implemented");`; the helpers are
removed with their JSDoc. A helper must be the one definition of its name (no TypeScript
overloads, no getter/setter pair) and not decorated; accessors are never helpers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from tree_sitter import Node, Tree

from taskforge.languages.javascript.delete.common import (
    RAISES,
    declared_alone,
    doc_removal,
    facts_of,
    function_of,
    tree_of,
)
from taskforge.languages.javascript.delete.project import JavaScriptProject, JavaScriptStrategy
from taskforge.languages.javascript.delete.syntax import (
    Function,
    checked,
    functions,
    is_trivial,
    leading_doc,
    removal_span,
    splice,
    stub_block,
    text_of,
)
from taskforge.languages.strategy import (
    SelectOptions,
    TaskOptions,
    cluster_depths,
    make_candidate,
)
from taskforge.model import Baseline, Candidate, DeletedSymbol, Deletion

# Top-level statements that declare a name (inside `export` too), to tell a function with
# one definition from one with TypeScript overloads, a redeclaration or a same-named class.
_DECLARING = ("function_declaration", "generator_function_declaration", "function_signature",
              "class_declaration", "abstract_class_declaration", "lexical_declaration",
              "variable_declaration", "ambient_declaration")


@dataclass(frozen=True)
class Cluster:
    entry: Function
    helpers: tuple[Function, ...]  # in file order
    depth: int  # the longest chain of calls from the entry through helpers


def _member_name(function: Function) -> str:
    """A method's own name (`#step`, `step`); a function's qualified name."""
    name = function.node.child_by_field_name("name")
    return text_of(name) if function.kind == "method" and name is not None \
        else function.qualname


def _accessor(function: Function) -> bool:
    return any(c.type in ("get", "set") for c in function.node.children)


def _decorated(function: Function) -> bool:
    """A decorator stands before the method in the class body (tree-sitter's sibling)."""
    previous = function.node.prev_named_sibling
    return previous is not None and previous.type == "decorator"


def _private_method(function: Function) -> bool:
    name = _member_name(function)
    return name.startswith(("#", "_")) or any(
        c.type == "accessibility_modifier" and text_of(c) == "private"
        for c in function.node.children)


class ModuleRefs:
    """Who in one file refers to what. The owner of a reference is the qualified name of
    the top-level function or method of a top-level class whose body holds it (nested
    functions count as their owner's), or None: module-level code, class fields, decorators,
    export lists, functions the strategies do not take (an arrow with an expression body),
    and signatures (a parameter's default or type, which the task keeps: a helper named
    there must stay, as Python counts defaults and annotations to the code around the
    `def`). Words are names (`helper`) and member names (`.step`, `.#step`); a `#step`
    outside a member expression (`#step in obj`) is the bare word."""

    def __init__(self, tree: Tree) -> None:
        self.functions = list(functions(tree))
        owners = {f.body.id: f.qualname for f in self.functions}
        # The definitions' own names are no references (a `const f = () => {}`'s name lies
        # outside the arrow function, at module level; `const f = function g() {}` has both).
        own_names: set[int] = set()
        for f in self.functions:
            names = [f.node.child_by_field_name("name")]
            if f.kind == "function" and f.node.parent is not None and \
                    f.node.parent.type == "variable_declarator":
                names.append(f.node.parent.child_by_field_name("name"))
            own_names |= {name.id for name in names if name is not None}
        self.refs: dict[str | None, set[str]] = defaultdict(set)
        stack: list[tuple[Node, str | None]] = [(tree.root_node, None)]
        while stack:
            node, owner = stack.pop()
            owner = owners.get(node.id, owner)
            word = None if node.id in own_names else self._word(node)
            if word is not None:
                self.refs[owner].add(word)
            stack.extend((child, owner) for child in node.named_children)
        self.declared = Counter(_declared_names(tree))
        self.exported = _exported_names(tree)

    @staticmethod
    def _word(node: Node) -> str | None:
        parent = node.parent
        if node.type in ("identifier", "shorthand_property_identifier",
                         "shorthand_property_identifier_pattern"):
            return text_of(node)
        if node.type in ("property_identifier", "private_property_identifier") and \
                parent is not None and parent.type == "member_expression" and \
                parent.child_by_field_name("property") == node:
            return "." + text_of(node)
        if node.type == "private_property_identifier" and parent is not None and \
                parent.type not in ("method_definition", "field_definition",
                                    "public_field_definition"):
            return text_of(node)
        return None

    def owners_of(self, word: str) -> set[str | None]:
        return {owner for owner, names in self.refs.items() if word in names}


def _declared_names(tree: Tree) -> list[str]:
    names = []
    for statement in tree.root_node.named_children:
        inner = statement
        if statement.type == "export_statement":
            inner = statement.child_by_field_name("declaration") or statement
        if inner.type == "ambient_declaration":  # `declare function f(): void;`
            inner = next(iter(inner.named_children), inner)
        if inner.type not in _DECLARING:
            continue
        if inner.type in ("lexical_declaration", "variable_declaration"):
            names += [text_of(name) for d in inner.named_children
                      if d.type == "variable_declarator"
                      and (name := d.child_by_field_name("name")) is not None]
        elif (name := inner.child_by_field_name("name")) is not None:
            names.append(text_of(name))
    return names


def _exported_names(tree: Tree) -> set[str]:
    """Names an `export { a, b as c }` or `export default name` statement exports."""
    names = set()
    for statement in tree.root_node.named_children:
        if statement.type != "export_statement" or \
                statement.child_by_field_name("declaration") is not None:
            continue
        for node in statement.named_children:
            if node.type == "identifier":
                names.add(text_of(node))
            elif node.type == "export_clause":
                names |= {text_of(s.child_by_field_name("name"))
                          for s in node.named_children if s.type == "export_specifier"
                          and s.child_by_field_name("name") is not None}
    return names


def _public(refs: ModuleRefs, function: Function) -> bool:
    """What other code may call: an exported function, a public method (not the
    constructor)."""
    if function.kind == "method":
        return not _private_method(function) and not function.qualname.endswith(".constructor")
    return function.statement.type == "export_statement" or function.qualname in refs.exported


def _unique(refs: ModuleRefs, function: Function) -> bool:
    """The one definition of its name, with a body (no overloads, no redeclaration)."""
    if function.kind == "function":
        return refs.declared[function.qualname] == 1
    name = _member_name(function)
    siblings = function.node.parent.named_children if function.node.parent is not None else []
    # methods, overload signatures and fields (`name` in TypeScript, `property` in JavaScript)
    return sum(1 for member in siblings
               if (n := member.child_by_field_name("name") or
                   member.child_by_field_name("property")) is not None
               and text_of(n) == name) == 1


def cluster_of(project: JavaScriptProject, path: str, refs: ModuleRefs,
               entry: Function) -> Cluster | None:
    """The cluster whose entry point is `entry`, or None when it has no helper."""
    qualname = entry.qualname
    pool: dict[str, tuple[Function, str]] = {}  # qualname -> (helper, the word that uses it)
    for function in refs.functions:
        if function.qualname == qualname or not _unique(refs, function):
            continue
        if function.kind == "function":
            if not _public(refs, function) and declared_alone(function):
                pool[function.qualname] = (function, function.qualname)
        elif function.class_name == entry.class_name and entry.kind == "method" and \
                _private_method(function) and not _accessor(function) and \
                not _decorated(function):
            pool[function.qualname] = (function, "." + _member_name(function))

    # Drop the helpers something outside the cluster uses, and what only they reached,
    # until the cluster holds still (as Python's does).
    depth = cluster_depths(qualname, {q: word for q, (_f, word) in pool.items()}, refs.refs,
                           lambda q, members: _only_in(project, path, refs, pool[q][0],
                                                       pool[q][1], members))
    members = set(depth)
    if len(members) < 2:
        return None
    chosen = sorted((pool[q][0] for q in members - {qualname}), key=lambda f: f.node.start_byte)
    return Cluster(entry, tuple(chosen), max(depth.values()))


def _only_in(project: JavaScriptProject, path: str, refs: ModuleRefs, helper: Function,
             word: str, members: set[str]) -> bool:
    """Whether nothing outside `members` refers to `helper` (used as `word`)."""
    name = _member_name(helper)
    for used in {word, name}:
        if not refs.owners_of(used) <= members:
            return False  # import time (None) or another function
    # A `#name` is the class's own; any other name another file mentions may be imported,
    # called or patched from there.
    return name.startswith("#") or not project.mentioned_outside(name, path)


class FeatureCluster(JavaScriptStrategy):
    name = "feature-cluster"

    def candidates(self, project: JavaScriptProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        found: list[Candidate | None] = []
        for path, tree in project.parsed_files():
            refs = ModuleRefs(tree)
            for function in refs.functions:
                if not _public(refs, function) or is_trivial(function) or \
                        not _unique(refs, function):
                    continue
                cluster = cluster_of(project, path, refs, function)
                if cluster is None:
                    continue
                parts = (cluster.entry, *cluster.helpers)
                found.append(make_candidate(
                    self.name, baseline, select, path=path,
                    symbol=project.symbol(path, function.qualname), kind="cluster",
                    start_line=function.start_line, end_line=function.end_line,
                    body_lines=len(function.body_lines)
                    + sum(h.end_line - h.start_line + 1 for h in cluster.helpers),
                    spans=[(path, f.body_lines) for f in parts], symbols=len(parts),
                    module_level=True))
        return [c for c in found if c is not None]

    def apply(self, project: JavaScriptProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        entry = function_of(project, candidate)
        source = project.source(candidate.path)
        # Applied again to its own result the entry has no helpers left: it is stubbed
        # again, which gives the same text.
        cluster = cluster_of(project, candidate.path, ModuleRefs(tree_of(project, candidate.path)),
                             entry) or Cluster(entry, (), 0)
        edits = [(entry.body.start_byte, entry.body.end_byte, stub_block(source, entry, body))]
        edits += doc_removal(source, entry, options.keep_docstrings)
        # The helpers go in every state: a trivial entry point calls none of them.
        for helper in cluster.helpers:
            node = helper.statement if helper.kind == "function" else helper.node
            edits.append((*removal_span(source, node, leading_doc(source, node)), b""))
        new_text = checked(candidate.path, splice(source, edits))
        facts = facts_of(source, entry, candidate.symbol, candidate.path,
                         options.keep_docstrings)
        return Deletion(
            strategy=self.name,
            deleted=tuple(DeletedSymbol(candidate.path, project.symbol(candidate.path, f.qualname),
                                        f.kind, f.start_line, f.end_line)
                          for f in (entry, *cluster.helpers)),
            new_texts={candidate.path: new_text},
            statement_facts={"kind": "cluster", "state": "stub", "symbol": candidate.symbol,
                             "path": candidate.path, "items": [facts],
                             "helpers": len(cluster.helpers), "call_depth": cluster.depth,
                             "raises": RAISES, "quotable": [facts["signature"]]})

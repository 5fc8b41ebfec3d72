"""One module's definitions and who refers to what: the facts the removing strategies need.

A name a function's body refers to is only looked up when the function runs, so removing it
fails the tests that call that function. A name referred to at import time (module level,
class bodies, decorators, default values, annotations) fails the import itself. `refs` keeps
the two apart: owner None is import time, otherwise the qualified name of the module-level
function or method whose body holds the reference (nested functions count as their owner's),
or "@" and that name for its decorators (which run at import time).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass

import libcst as cst

from taskforge.errors import Rejected
from taskforge.languages.python.delete.project import PythonProject
from taskforge.languages.python.delete.syntax import (
    SKIP_DECORATORS,
    decorator_names,
    dunder_all,
    is_docstring,
)
from taskforge.model import Candidate


@dataclass(frozen=True)
class Definition:
    """A module-level function, a method of a top-level class, or a top-level class."""

    qualname: str  # "f", "Class.m" or "Class"
    node: cst.FunctionDef | cst.ClassDef
    first_line: int  # decorators included
    def_line: int  # the line of the name
    end_line: int
    body_start: int  # first statement after the docstring (def_line for one-line bodies)

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def owner_class(self) -> str | None:
        return self.qualname.rsplit(".", 1)[0] if "." in self.qualname else None

    @property
    def declaration_only(self) -> bool:
        """An overload or abstract method: a declaration, nothing to re-implement."""
        return isinstance(self.node, cst.FunctionDef) and \
            bool(decorator_names(self.node) & SKIP_DECORATORS)

    @property
    def lines(self) -> range:
        return range(self.first_line, self.end_line + 1)

    @property
    def body_lines(self) -> range:
        return range(self.body_start, self.end_line + 1)


class _References(cst.CSTVisitor):
    """Collects names (`x`) and attribute names (`.x`) by owner; see the module docstring."""

    def __init__(self) -> None:
        self.refs: dict[str | None, set[str]] = defaultdict(set)
        self.owner: str | None = None
        self.classes: list[str] = []

    def _visit_all(self, nodes: object) -> None:
        for node in nodes:  # type: ignore[attr-defined]
            if node is not None:
                node.visit(self)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        owner = self.owner
        qualname = ".".join([*self.classes, node.name.value])
        # Decorators run at import time; they are kept apart (owner "@qualname") so that a
        # property's `@area.setter` does not count as a use of `area` by anything else.
        if owner is None and len(self.classes) <= 1:
            self.owner = "@" + qualname
        self._visit_all(node.decorators)
        self.owner = owner
        # Defaults and annotations are evaluated when the `def` runs: the current owner's.
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params,
                      *[p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]):
            self._visit_all((param.default, param.annotation))
        self._visit_all((node.returns,))
        if owner is None and len(self.classes) <= 1:
            self.owner = qualname
        node.body.visit(self)
        self.owner = owner
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._visit_all(node.decorators)
        self._visit_all(node.bases)
        self._visit_all(node.keywords)
        self.classes.append(node.name.value)
        node.body.visit(self)
        self.classes.pop()
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.refs[self.owner].add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.refs[self.owner].add("." + node.attr.value)


class ModuleScopes:
    """The definitions of one parsed module and the references between them."""

    def __init__(self, project: PythonProject, path: str, module: cst.Module) -> None:
        self.project = project
        self.path = path
        self.module = module
        positions = project.positions(path)
        self.definitions: list[Definition] = []

        def define(qualname: str, node: cst.FunctionDef | cst.ClassDef) -> None:
            first = positions[node.decorators[0]].start.line if node.decorators else \
                positions[node].start.line
            def_line = positions[node.name].start.line
            body = node.body
            if isinstance(body, cst.IndentedBlock):
                stmts = [s for s in body.body if not is_docstring(s)]
                body_start = positions[stmts[0]].start.line if stmts else positions[node].end.line
            else:
                body_start = def_line
            self.definitions.append(Definition(qualname, node, first, def_line,
                                               positions[node].end.line, body_start))

        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                define(statement.name.value, statement)
            elif isinstance(statement, cst.ClassDef):
                define(statement.name.value, statement)
                for member in statement.body.body:
                    if isinstance(member, cst.FunctionDef):
                        define(f"{statement.name.value}.{member.name.value}", member)
        visitor = _References()
        module.visit(visitor)
        self.refs = visitor.refs

    @functools.cached_property
    def by_qualname(self) -> dict[str, list[Definition]]:
        """Qualified name -> its definitions (several for overloads, property accessors and
        conditional redefinitions), in file order."""
        found: dict[str, list[Definition]] = defaultdict(list)
        for definition in self.definitions:
            found[definition.qualname].append(definition)
        return dict(found)

    def functions(self) -> list[Definition]:
        return [d for d in self.definitions if isinstance(d.node, cst.FunctionDef)]

    def classes(self) -> list[Definition]:
        return [d for d in self.definitions if isinstance(d.node, cst.ClassDef)]

    def owners_of(self, word: str) -> set[str | None]:
        """Who refers to `word` (a name, or `.name` for an attribute) in this module."""
        return {owner for owner, names in self.refs.items() if word in names}

    def used_at_import(self, word: str, exclude: str = "") -> bool:
        """Whether `word` is referred to while the module is imported, other than by the
        decorators of `exclude` (a qualified name)."""
        return any(owner is None or (owner.startswith("@") and owner != "@" + exclude)
                   for owner in self.owners_of(word))

    def import_use(self, name: str) -> str | None:
        """Why removing the module-level `name` would break an import, or None: it is used
        while this module is imported, listed in `__all__`, or mentioned by another file
        (which may import it; a test may patch it by its dotted path)."""
        if self.used_at_import(name, exclude=name):
            return f"{name} is used when {self.path} is imported"
        if name in (dunder_all(self.module) or ()):
            return f"{name} is listed in {self.path}'s __all__"
        others = self.project.mentioned_outside(name, self.path)
        return f"{name} is named in {others[0]}" if others else None

    def symbol(self, qualname: str) -> str:
        return f"{self.project.module_name(self.path)}.{qualname}"


def scopes_of(project: PythonProject) -> list[ModuleScopes]:
    """Every parsed source module of the project, with its definitions and references."""
    return [ModuleScopes(project, path, module) for path, module in project.parsed_files()]


def module_scopes(project: PythonProject, path: str) -> ModuleScopes | None:
    module = project.parse(path)
    return None if module is None else ModuleScopes(project, path, module)


def candidate_scopes(project: PythonProject, candidate: Candidate) -> tuple[ModuleScopes, str]:
    """The candidate's module as it is now, and the candidate's name inside it."""
    scopes = module_scopes(project, candidate.path)
    if scopes is None:
        raise Rejected("unparsable", candidate.path)
    return scopes, candidate.symbol.removeprefix(project.module_name(candidate.path) + ".")


def only_definition(scopes: ModuleScopes, qualname: str, symbol: str,
                    kind: type[cst.FunctionDef | cst.ClassDef]) -> Definition:
    """The one definition of `qualname`, of `kind`; Rejected("not-found") otherwise."""
    definitions = scopes.by_qualname.get(qualname, [])
    if len(definitions) != 1 or not isinstance(definitions[0].node, kind):
        raise Rejected("not-found", symbol)
    return definitions[0]

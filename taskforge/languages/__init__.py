"""The languages taskforge makes tasks in, each one package behind `base.Language`.

A new language is a package with a `Language` subclass and one line in `_HOMES`. Languages
are imported when first asked for, so a data loader grading Python tasks loads nothing else.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from taskforge.errors import UserError
from taskforge.languages.base import Language
from taskforge.model import TaskRecord

# name -> (module, class). The order is detection's: the first language whose `detect`
# accepts a snapshot is its language.
# Java first: a build file with Java test sources is never a Python project, while a Java
# project may carry a stray Python script. JavaScript comes next but declines a tree with Python
# project files (pyproject.toml, setup.py, setup.cfg): a polyglot repository with both is
# Python's, and a JavaScript package with a stray script in Python is JavaScript's (Python would
# accept any .py file). TypeScript is the JavaScript package with a tsconfig.json or TypeScript
# sources.
_HOMES: dict[str, tuple[str, str]] = {
    "java": ("taskforge.languages.java", "JavaLanguage"),
    "typescript": ("taskforge.languages.javascript", "TypeScriptLanguage"),
    "javascript": ("taskforge.languages.javascript", "JavaScriptLanguage"),
    "python": ("taskforge.languages.python", "PythonLanguage"),
}
_LOADED: dict[str, Language] = {}


def language_names() -> tuple[str, ...]:
    return tuple(_HOMES)


def language_named(name: str) -> Language:
    """The language registered as `name`; a UserError names the known ones."""
    if name not in _LOADED:
        if name not in _HOMES:
            raise UserError(f"unknown language {name!r}; known: {', '.join(_HOMES)}")
        module, cls = _HOMES[name]
        _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return _LOADED[name]


def language_of(record: TaskRecord) -> Language:
    """The language a task record names (records before languages were recorded: Python)."""
    return language_named(str(record.get("language") or "python"))


def detect_language(root: Path, source: str) -> Language:
    """The first language, in registration order, that finds its code and tests at `root`."""
    for name in _HOMES:
        language = language_named(name)
        if language.detect(root):
            return language
    raise UserError(f"{source}: no code of a supported language found "
                    f"({', '.join(_HOMES)})")


def strategy_names() -> tuple[str, ...]:
    """Every strategy name some language registers (what a recipe may name)."""
    return tuple(sorted({s for n in _HOMES for s in language_named(n).strategies}))


__all__ = ["Language", "detect_language", "language_named", "language_names", "language_of",
           "strategy_names"]

"""The strategy interface: find candidates in a project, apply one to make the task state.

A strategy is a small class with two methods. `apply` never splices text by line numbers: it
transforms a concrete syntax tree, so every byte outside the deleted span stays as it was.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

from taskforge.delete.project import PythonProject
from taskforge.model import Baseline, Candidate, Deletion


@dataclass(frozen=True)
class SelectOptions:
    min_covering_tests: int = 1
    min_body_lines: int = 3


@dataclass(frozen=True)
class TaskOptions:
    keep_docstrings: bool = True
    tests_visible: bool = True


class Strategy(abc.ABC):
    name: ClassVar[str]
    language: ClassVar[str] = "python"

    @abc.abstractmethod
    def candidates(self, project: PythonProject, baseline: Baseline,
                   select: SelectOptions) -> list[Candidate]:
        """Every unit this strategy could delete, with the stable tests that executed it."""

    @abc.abstractmethod
    def apply(self, project: PythonProject, candidate: Candidate, options: TaskOptions,
              body: str = "raise") -> Deletion:
        """The task state for one candidate. Raises `Rejected` when it cannot be applied.

        `body` names what stands where code was deleted: "raise" (the task), or one of the
        trivial solutions "pass" and "return-none" that a task must not reward."""

"""Difficulty: measured properties of a task, and one number that orders tasks by them.

Every record's `difficulty` holds what was measured (lines and symbols deleted, files
touched, FAIL_TO_PASS and covering tests, the cluster's call depth) and what the agent is
shown (docstrings, tests, how detailed the statement is). `score` folds them into one
number (see docs/curriculum.md): each doubling of the deleted lines adds one, every further
symbol, file and level of call depth adds one, and each thing hidden (docstrings, tests,
statement detail) adds one. The same formula estimates a candidate's score before it is
verified, which is what the curriculum selects on.
"""

from __future__ import annotations

import math
from typing import Any

from taskforge.languages.strategy import STATEMENT_DETAIL, TaskOptions
from taskforge.model import Candidate, Deletion


def score(*, lines: int, symbols: int, files: int, call_depth: int, docstring_visible: bool,
          tests_visible: bool, statement: str) -> float:
    value = (math.log2(1 + lines) + (symbols - 1) + (files - 1) + call_depth
             + (not docstring_visible) + (not tests_visible) + STATEMENT_DETAIL.index(statement))
    return round(value, 2)


def measure(deletion: Deletion, lines_deleted: int, fail_to_pass: list[str],
            covering_tests: int, options: TaskOptions) -> dict[str, Any]:
    """The record's `difficulty`."""
    facts = deletion.statement_facts
    measured: dict[str, Any] = {
        "lines_deleted": lines_deleted, "symbols": len(deletion.deleted),
        "files": len(deletion.new_texts), "fail_to_pass": len(fail_to_pass),
        "covering_tests": covering_tests, "call_depth": int(facts.get("call_depth", 0)),
        "docstring_visible": options.keep_docstrings, "tests_visible": options.tests_visible,
        "statement": options.statement,
    }
    measured["score"] = score(lines=lines_deleted, symbols=measured["symbols"],
                              files=measured["files"], call_depth=measured["call_depth"],
                              docstring_visible=options.keep_docstrings,
                              tests_visible=options.tests_visible, statement=options.statement)
    return measured


def estimate(candidate: Candidate, options: TaskOptions) -> float:
    """The score a candidate's task would get, before it is built: its deleted lines stand
    for the diff's, and a cluster's depth is taken as one."""
    symbols = max(1, candidate.symbols)
    return score(lines=candidate.body_lines, symbols=symbols, files=1,
                 call_depth=1 if candidate.kind == "cluster" else 0,
                 docstring_visible=options.keep_docstrings, tests_visible=options.tests_visible,
                 statement=options.statement)

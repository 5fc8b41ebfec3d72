"""Curriculum: from a training run's solve rates, generate tasks harder than those solved.

`harder_than(stats)` reads one JSON object a line, `{"instance_id": ..., "solve_rate": 0.8}`
(or `"solved"` and `"attempts"`), optionally with the task's `difficulty` and `repo` (copied
from its record); a line without them is completed from the task records found (the run's
output directory). The heuristic (docs/curriculum.md):

- a task is *solved* when its solve rate is at least SOLVED;
- the *frontier* of a repository is the highest structural score (lines, symbols, files,
  call depth: what was deleted, not how it is presented) among its solved tasks;
- new candidates of that repository must lie beyond it (their estimated structural score
  above the frontier): bigger clusters, more lines, more symbols;
- presentation moves one step past the hardest presentation among solved tasks: docstrings
  hidden, then a brief statement, then a minimal one, then the failing tests hidden too;
- strategies the model solves less often weigh more: weight x (2 - mean solve rate), and a
  strategy the stats never saw weighs double;
- only repositories named in the stats are generated from (the snapshots involved).
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskforge.difficulty import estimate, score
from taskforge.errors import UserError
from taskforge.languages.strategy import STATEMENT_DETAIL, TaskOptions
from taskforge.model import Candidate, TaskRecord
from taskforge.store.shards import read_records

SOLVED = 0.5
# Presentation, easiest first: (keep_docstrings, statement, tests_visible).
PRESENTATION = ((True, "full", True), (False, "full", True), (False, "brief", True),
                (False, "minimal", True), (False, "minimal", False))


@dataclass(frozen=True)
class Curriculum:
    frontier: dict[str, float]  # repo -> highest structural score among its solved tasks
    task: TaskOptions  # how the new tasks are presented
    weights: dict[str, float]  # strategy -> weight multiplier
    solved: int
    unsolved: int
    unknown: int  # stats lines whose task was not found

    def select(self, repo: str, candidates: Iterable[Candidate]) -> list[Candidate]:
        """The candidates of `repo` whose tasks would lie beyond its frontier."""
        if repo not in self.frontier:
            return []
        plain = TaskOptions()
        return [c for c in candidates if estimate(c, plain) > self.frontier[repo]]

    def weigh(self, weights: dict[str, float]) -> dict[str, float]:
        return {name: w * self.weights.get(name, 2.0) for name, w in weights.items()}

    def describe(self) -> str:
        frontiers = ", ".join(f"{repo} > {value:g}" for repo, value in sorted(self.frontier.items()))
        return (f"curriculum: {self.solved} solved, {self.unsolved} unsolved, {self.unknown} "
                f"unknown tasks; structural score {frontiers or 'none'}; docstrings "
                f"{'shown' if self.task.keep_docstrings else 'hidden'}, statement "
                f"{self.task.statement}, tests {'shown' if self.task.tests_visible else 'hidden'}")


def parse_difficulty(spec: str) -> Path:
    """`harder-than=STATS.jsonl` -> the stats file (UserError naming what is wrong)."""
    kind, _, value = spec.partition("=")
    if kind != "harder-than" or not value:
        raise UserError(f"--difficulty {spec!r}: expected harder-than=STATS.jsonl")
    path = Path(value)
    if not path.is_file():
        raise UserError(f"--difficulty: {path}: stats file does not exist")
    return path


def structural(difficulty: dict[str, Any]) -> float:
    """A task's score with its presentation left out: what was deleted."""
    return score(lines=difficulty["lines_deleted"], symbols=difficulty["symbols"],
                 files=difficulty["files"], call_depth=difficulty.get("call_depth", 0),
                 docstring_visible=True, tests_visible=True, statement="full")


def _presentation(difficulty: dict[str, Any]) -> int:
    key = (bool(difficulty.get("docstring_visible", True)), difficulty.get("statement", "full"),
           bool(difficulty.get("tests_visible", True)))
    return PRESENTATION.index(key) if key in PRESENTATION else 0


def _rate(entry: dict[str, Any], where: str) -> float:
    if "solve_rate" in entry:
        rate = entry["solve_rate"]
    elif "solved" in entry and entry.get("attempts"):
        rate = entry["solved"] / entry["attempts"]
    else:
        raise UserError(f"{where}: expected solve_rate, or solved and attempts")
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise UserError(f"{where}: solve rate must be a number from 0 to 1, got {rate!r}")
    return float(rate)


def known_records(*directories: Path) -> list[dict[str, Any]]:
    """The task records of those directories that hold shards (to complete stats lines)."""
    records: list[TaskRecord] = []
    for directory in directories:
        if directory.is_dir() and any(directory.glob("tasks-*.jsonl")):
            records += read_records(directory)
    return records


def harder_than(stats: Path, records: Iterable[dict[str, Any]], base: TaskOptions) -> Curriculum:
    """The curriculum for tasks harder than those `stats` says are solved. `records` are
    task records to complete stats lines that carry no difficulty or repo."""
    known = {r["instance_id"]: r for r in records}
    frontier: dict[str, float] = {}
    rates: dict[str, list[float]] = defaultdict(list)
    hardest_shown = 0
    solved = unsolved = unknown = 0
    for number, line in enumerate(stats.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{stats}: line {number}"
        try:
            entry = json.loads(line)
        except ValueError:
            raise UserError(f"{where}: not a JSON object") from None
        if not isinstance(entry, dict) or "instance_id" not in entry:
            raise UserError(f"{where}: expected an object with instance_id")
        rate = _rate(entry, where)
        record = {**known.get(entry["instance_id"], {}), **entry}
        if "difficulty" not in record or "repo" not in record:
            unknown += 1
            continue
        repo = record["repo"]
        rates[record.get("strategy", "")].append(rate)
        frontier.setdefault(repo, 0.0)
        if rate >= SOLVED:
            solved += 1
            frontier[repo] = max(frontier[repo], structural(record["difficulty"]))
            hardest_shown = max(hardest_shown, _presentation(record["difficulty"]))
        else:
            unsolved += 1
    step = min(len(PRESENTATION) - 1, hardest_shown + 1) if solved else hardest_shown
    keep_docstrings, statement, tests_visible = PRESENTATION[step]
    # Never easier than the recipe asks, in either respect.
    statement = max(statement, base.statement, key=STATEMENT_DETAIL.index)
    return Curriculum(
        frontier=frontier,
        task=dataclasses.replace(base, keep_docstrings=keep_docstrings and base.keep_docstrings,
                                 statement=statement,
                                 tests_visible=tests_visible and base.tests_visible),
        weights={name: 2.0 - sum(r) / len(r) for name, r in rates.items() if name},
        solved=solved, unsolved=unsolved, unknown=unknown)

"""The curriculum heuristic on hand-written solve rates (docs/curriculum.md), and the bad
inputs of `generate --difficulty`. The end-to-end run is in test_strategies_pipeline.py,
where a generated task set already exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, stderr_lines, write_recipe

from taskforge.curriculum import Curriculum, harder_than, parse_difficulty, structural
from taskforge.errors import UserError
from taskforge.languages.strategy import TaskOptions
from taskforge.model import Candidate


def difficulty(lines: int, symbols: int = 1, depth: int = 0, docstrings: bool = True,
               statement: str = "full") -> dict:
    return {"lines_deleted": lines, "symbols": symbols, "files": 1, "call_depth": depth,
            "docstring_visible": docstrings, "tests_visible": True, "statement": statement}


def record(instance_id: str, repo: str, strategy: str, diff: dict) -> dict:
    return {"instance_id": instance_id, "repo": repo, "strategy": strategy, "difficulty": diff}


RECORDS = [
    record("a1", "alpha", "stub-function", difficulty(3)),
    record("a2", "alpha", "stub-function", difficulty(15)),
    record("a3", "alpha", "feature-cluster", difficulty(40, symbols=3, depth=2)),
    record("b1", "beta", "remove-branch", difficulty(7)),
]


def write_stats(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((json.dumps(line) if not isinstance(line, str) else line) + "\n"
                            for line in lines))
    return path


def candidate(symbol: str, body_lines: int, symbols: int = 1, kind: str = "function",
              strategy: str = "stub-function") -> Candidate:
    return Candidate(strategy=strategy, path="m.py", symbol=symbol, kind=kind, start_line=1,
                     end_line=body_lines + 1, body_lines=body_lines, covering_tests=("t",),
                     symbols=symbols)


def test_frontier_is_the_hardest_solved_task_per_repository(tmp_path: Path) -> None:
    stats = write_stats(tmp_path / "stats.jsonl", [
        {"instance_id": "a1", "solve_rate": 1.0},
        {"instance_id": "a2", "solved": 3, "attempts": 4},
        {"instance_id": "a3", "solve_rate": 0.1},  # the cluster is not solved yet
        {"instance_id": "b1", "solve_rate": 0.0},
        {"instance_id": "gone", "solve_rate": 1.0},  # no record, no difficulty: unknown
    ])
    plan = harder_than(stats, RECORDS, TaskOptions())
    assert (plan.solved, plan.unsolved, plan.unknown) == (2, 2, 1)
    assert plan.frontier == {"alpha": structural(difficulty(15)), "beta": 0.0}
    # One presentation step past what was solved: the docstrings go.
    assert plan.task == TaskOptions(keep_docstrings=False, statement="full")
    # Strategies the model fails weigh more; one it never saw weighs double.
    assert plan.weigh({"stub-function": 1.0, "feature-cluster": 1.0, "remove-module": 1.0}) == \
        {"stub-function": 2.0 - 0.875, "feature-cluster": 1.9, "remove-module": 2.0}
    small, big = candidate("m.small", 10), candidate("m.big", 12, symbols=2, kind="cluster",
                                                      strategy="feature-cluster")
    assert plan.select("alpha", [small, big]) == [big]
    assert plan.select("beta", [small]) == [small]
    assert plan.select("gamma", [small, big]) == []  # not one of the snapshots involved
    assert "2 solved" in plan.describe() and "docstrings hidden" in plan.describe()


def test_presentation_climbs_one_step_at_a_time(tmp_path: Path) -> None:
    steps = []
    shown = difficulty(5)
    for _ in range(5):
        stats = write_stats(tmp_path / "s.jsonl", [
            {"instance_id": "x", "repo": "alpha", "difficulty": shown, "solve_rate": 0.9}])
        task = harder_than(stats, [], TaskOptions()).task
        steps.append((task.keep_docstrings, task.statement, task.tests_visible))
        shown = {**difficulty(5, docstrings=task.keep_docstrings, statement=task.statement),
                 "tests_visible": task.tests_visible}
    # the last step hides the failing tests too (test_patch restores them at grading)
    assert steps == [(False, "full", True), (False, "brief", True), (False, "minimal", True),
                     (False, "minimal", False), (False, "minimal", False)]
    # Nothing solved: the presentation stays as the recipe has it.
    stats = write_stats(tmp_path / "none.jsonl", [
        {"instance_id": "x", "repo": "alpha", "difficulty": difficulty(5), "solve_rate": 0.2}])
    assert harder_than(stats, [], TaskOptions(statement="brief")).task.statement == "brief"


@pytest.mark.parametrize("line,words", [
    ("not json", "line 1: not a JSON object"),
    ({"solve_rate": 1}, "line 1: expected an object with instance_id"),
    ({"instance_id": "a1"}, "line 1: expected solve_rate"),
    ({"instance_id": "a1", "solve_rate": 1.5}, "line 1: solve rate must be"),
])
def test_bad_stats_lines_are_user_errors(tmp_path: Path, line: object, words: str) -> None:
    stats = write_stats(tmp_path / "stats.jsonl", [line])
    with pytest.raises(UserError, match=words):
        harder_than(stats, RECORDS, TaskOptions())


def test_difficulty_spec(tmp_path: Path) -> None:
    stats = write_stats(tmp_path / "stats.jsonl", [])
    assert parse_difficulty(f"harder-than={stats}") == stats
    with pytest.raises(UserError, match=r"expected harder-than=STATS\.jsonl"):
        parse_difficulty(f"easier-than={stats}")
    with pytest.raises(UserError, match="stats file does not exist"):
        parse_difficulty(f"harder-than={tmp_path / 'missing.jsonl'}")
    assert isinstance(harder_than(stats, [], TaskOptions()), Curriculum)


def test_cli_bad_difficulty_is_one_line_and_exit_2(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "r.yaml", f"""\
        name: r
        sources: [{{path: {tmp_path}}}]
    """)
    proc = run_cli("generate", str(recipe), "--out", str(tmp_path / "out"),
                   "--difficulty", "harder-than=nowhere.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert stderr_lines(proc) == ["taskforge: error: --difficulty: nowhere.jsonl: stats file "
                                  "does not exist"]
    assert not (tmp_path / "out").exists()

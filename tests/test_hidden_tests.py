"""Hidden tests (`task.tests_visible: false`), end to end on a purpose-built project.

One real generate run with two strategies: verification runs on the source-only deletion,
the agent's workspace lacks the test files that hold FAIL_TO_PASS tests, `test_patch`
restores them byte for byte (a CRLF file and an executable one included), grading restores
them without calling that tampering, and the leak scan does not take them for deleted code.
The same run gives `stats` two strategies to report yield and difficulty for.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, run_cli, write_recipe

import taskforge
from taskforge.export import export_tasks
from taskforge.generate import Summary
from taskforge.patches import created_files

# Real generate runs with hidden tests:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

STRATEGIES = ("remove-function", "stub-function")
# Hidden from the agent when they hold FAIL_TO_PASS tests; test_other.py never does.
TEXT_TESTS = "tests/test_text.py"
NUMBER_TESTS = "tests/test_numbers.py"
OTHER_TESTS = "tests/test_other.py"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("hidden"), {
        "pyproject.toml": """\
            [project]
            name = "hidekit"
            version = "0.1.0"

            [tool.pytest.ini_options]
            testpaths = ["tests"]
        """,
        "hidekit/__init__.py": "",
        "hidekit/text.py": '''\
            def shout(text):
                """Upper-case the stripped text and end it with an exclamation mark."""
                cleaned = text.strip()
                loud = cleaned.upper()
                return loud + "!"


            def whisper(text):
                return text.lower()
        ''',
        "hidekit/numbers.py": '''\
            def clamp(value, low, high):
                """`value` moved into [low, high]."""
                if value < low:
                    return low
                if value > high:
                    return high
                return value
        ''',
        NUMBER_TESTS: """\
            from hidekit.numbers import clamp


            def test_clamp_inside():
                assert clamp(2, 0, 3) == 2


            def test_clamp_above():
                assert clamp(5, 0, 3) == 3


            def test_clamp_below():
                assert clamp(-1, 0, 3) == 0
        """,
        OTHER_TESTS: """\
            from hidekit.text import whisper


            def test_whisper():
                assert whisper("HeLLo") == "hello"
        """,
    })
    # CRLF line endings and the executable bit must survive hiding and restoring.
    (root / TEXT_TESTS).write_bytes(
        b"from hidekit.text import shout\r\n\r\n\r\n"
        b"def test_shout():\r\n    assert shout(' hi ') == 'HI!'\r\n\r\n\r\n"
        b"def test_shout_empty():\r\n    assert shout('') == '!'\r\n")
    (root / NUMBER_TESTS).chmod(0o755)
    return root


@pytest.fixture(scope="module")
def run(project: Path, tf_cache: Path, tmp_path_factory: pytest.TempPathFactory
        ) -> tuple[Summary, Path]:
    directory = tmp_path_factory.mktemp("hidden-run")
    recipe = write_recipe(directory / "hidden.yaml", f"""\
        name: hidden
        seed: 1
        sources:
          - path: {project}
        strategies: [{", ".join(STRATEGIES)}]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 10}}
        task: {{tests_visible: false, keep_docstrings: true}}
        verify: {{repeats: 2, timeout_s: 120}}
        sandbox: none
    """)
    out = directory / "out"
    return taskforge.generate(recipe, out=out, cache=tf_cache), out


@pytest.fixture(scope="module")
def tasks(run: tuple[Summary, Path]) -> taskforge.TaskSet:
    return taskforge.load_tasks(run[1])


def hidden_files(record: dict) -> set[str]:
    return {test_id.split("::")[0] for test_id in record["FAIL_TO_PASS"]}


def test_each_strategy_gives_hidden_test_tasks(tasks: taskforge.TaskSet) -> None:
    by = {(t.record["strategy"], t.record["deleted"][0]["symbol"]) for t in tasks}
    for strategy in STRATEGIES:
        assert {(strategy, "hidekit.text.shout"), (strategy, "hidekit.numbers.clamp")} <= by
    for task in tasks:
        record = task.record
        assert record["difficulty"]["tests_visible"] is False
        assert sorted(created_files(record["test_patch"])) == sorted(hidden_files(record))
        # `patch` is the source-only reference; `deletion_patch` also takes the tests away.
        assert "tests/" not in record["patch"]
        for path in hidden_files(record):
            assert f"diff --git a/{path} b/{path}\ndeleted file mode" in record["deletion_patch"]
        assert OTHER_TESTS not in record["deletion_patch"]


def test_workspace_lacks_the_hidden_tests_and_test_patch_restores_them(
        tasks: taskforge.TaskSet, project: Path, tmp_path: Path) -> None:
    for n, task in enumerate(tasks):
        ws = task.materialize(tmp_path / f"ws{n}")
        hidden = hidden_files(task.record)
        assert hidden and not any((ws / path).exists() for path in hidden)
        assert (ws / OTHER_TESTS).is_file()
        apply_patch(ws, task.record["test_patch"])
        for path in hidden:
            assert (ws / path).read_bytes() == (project / path).read_bytes(), path
            assert stat.S_IMODE((ws / path).stat().st_mode) & 0o111 == \
                stat.S_IMODE((project / path).stat().st_mode) & 0o111, path
        assert os.access(ws / NUMBER_TESTS, os.X_OK)  # hidden and restored, or never hidden


def test_grade_restores_hidden_tests_without_calling_it_tampering(tasks: taskforge.TaskSet,
                                                                  tmp_path: Path) -> None:
    task = next(t for t in tasks if t.record["strategy"] == "stub-function"
                and t.record["deleted"][0]["symbol"] == "hidekit.text.shout")
    start = task.grade(task.materialize(tmp_path / "start"), sandbox="none")
    assert start.reward == 0.0
    assert set(task.record["FAIL_TO_PASS"]) <= set(start.failed) | set(start.errors)
    assert start.tampered == ()

    solved = task.materialize(tmp_path / "solved")
    apply_patch(solved, task.record["patch"])
    result = task.grade(solved, sandbox="none")
    assert result.reward == 1.0
    assert result.tampered == ()

    # Deleting a test file the task did not hide is still tampering.
    (solved / OTHER_TESTS).unlink()
    assert task.grade(solved, sandbox="none").tampered == (f"deleted {OTHER_TESTS}",)


def test_leak_scan_does_not_take_hidden_tests_for_deleted_code(run: tuple[Summary, Path],
                                                             tasks: taskforge.TaskSet,
                                                             tmp_path: Path) -> None:
    out = run[1]
    for n, task in enumerate(tasks):
        assert task.record["sanitizer"]["leak_scan"]["clean"] is True
        ws = task.materialize(tmp_path / f"ws{n}")
        apply_patch(ws, task.record["test_patch"])
        proc = run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # The deleted code itself is still found: the scan did not just go blind.
        apply_patch(ws, task.record["patch"])
        assert run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path).returncode == 1


def test_exports_carry_the_hidden_tests(tasks: taskforge.TaskSet, run: tuple[Summary, Path],
                                            project: Path, tmp_path: Path) -> None:
    dest = tmp_path / "swebench.jsonl"
    export_tasks(run[1], "swebench", dest)
    instances = {i["instance_id"]: i for i in map(json.loads, dest.read_text().splitlines())}
    for task in tasks:
        assert instances[task.instance_id]["test_patch"] == task.record["test_patch"] != ""
    # Harbor: the workspace in the image lacks them, its verifier puts them back.
    harbor = tmp_path / "harbor"
    export_tasks(run[1], "harbor", harbor, images=False)
    for task in tasks:
        root = harbor / task.instance_id
        hidden = hidden_files(task.record)
        assert hidden <= set(json.loads((root / "tests" / "config.json").read_text())["restore"])
        assert not any((root / "environment" / "workspace" / path).exists() for path in hidden)


def test_stats_report_yield_and_difficulty_per_strategy(run: tuple[Summary, Path],
                                                        tasks: taskforge.TaskSet,
                                                        tmp_path: Path) -> None:
    summary, out = run
    proc = run_cli("stats", str(out), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert set(stats["strategies"]) == set(STRATEGIES)
    assert stats["strategies"] == json.loads((out / "manifest.json").read_text())["strategies"]
    for name, row in stats["strategies"].items():
        mine = [t.record for t in tasks if t.record["strategy"] == name]
        assert row["emitted"] == len(mine) > 0
        assert row["tried"] == row["emitted"] + sum(row["rejections"].values())
        assert row["yield"] == round(row["emitted"] / row["tried"], 4)
        assert row["difficulty"]["fail_to_pass"]["mean"] == \
            round(sum(len(r["FAIL_TO_PASS"]) for r in mine) / len(mine), 2)
        # Every task hides its tests: one point of score for that alone.
        assert row["difficulty"]["score"]["mean"] >= 1
        assert summary.strategies[name] == row
    assert sum(r["candidates"] for r in stats["strategies"].values()) == stats["funnel"]["candidates"]
    text = run_cli("stats", str(out), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "per strategy" in text.stdout
    assert all(name in text.stdout for name in STRATEGIES)

"""`taskforge verify` re-runs every gate `generate` ran, not only the labels: three records
tampered so that each of the other gates fails (trivial-solution, collection-breaks,
leak-scan) each fail verify with that gate's name, while their labels still verify (so a
labels-only verify, the one before, passed all three); the genuine tasks pass."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, count_calls, make_project, run_cli, setuptools_pyproject, write_recipe

import taskforge
from taskforge.errors import Rejected
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.python.delete.project import PythonProject
from taskforge.languages.python.delete.stub_function import StubFunction
from taskforge.languages.strategy import TaskOptions
from taskforge.model import Candidate
from taskforge.patches import apply_patch, diff_texts
from taskforge.sandbox import get_sandbox

SHARD = "tasks-00000-of-00001.jsonl"
SCALE_BODY = """\
    result = []
    for value in values:
        result.append(value * factor)
    return result
"""


def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, {
        "pyproject.toml": setuptools_pyproject("vg", "1.0"),
        "vg/__init__.py": "",
        "vg/core.py": """\
            def scale(values, factor):
                \"\"\"Multiply every value by factor.\"\"\"
                result = []
                for value in values:
                    result.append(value * factor)
                return result


            def check_positive(x):
                \"\"\"Raise ValueError for a value that is not positive.\"\"\"
                if x <= 0:
                    raise ValueError(f"{x} is not positive")
                return None


            def build_table():
                table = {}
                for i in range(4):
                    table[i] = i * i
                return table
        """,
        # Calls build_table at import time: stubbing it breaks its importers' collection.
        "vg/squares.py": """\
            from vg.core import build_table

            SQUARES = build_table()
        """,
        "tests/test_core.py": """\
            import pytest

            from vg.core import check_positive, scale


            def test_scale():
                assert scale([1, 2], 3) == [3, 6]


            def test_scale_empty():
                assert scale([], 3) == []


            def test_positive_is_accepted():
                assert check_positive(3) is None


            def test_zero_is_rejected():
                with pytest.raises(ValueError):
                    check_positive(0)
        """,
        "tests/test_squares.py": """\
            from vg.squares import SQUARES


            def test_squares():
                assert SQUARES[3] == 9
        """,
    }, name="vg")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> Path:
    tmp = tmp_path_factory.mktemp("verify-gates")
    root = project(tmp)
    assert SCALE_BODY in (root / "vg/core.py").read_text()
    recipe = write_recipe(tmp / "recipe.yaml", f"""\
        name: vg
        sources:
          - path: {root}
        strategies: [stub-function]
        select: {{min_body_lines: 1}}
        verify: {{allow_collection_breaks: true}}
        sandbox: none
    """)
    out = tmp / "out"
    taskforge.generate(recipe, out=out, cache=tf_cache)
    return out


def records(out: Path) -> dict[str, dict]:
    found = [json.loads(line) for line in (out / SHARD).read_text().splitlines()]
    return {r["deleted"][0]["symbol"]: r for r in found}


def entity_html(text: str) -> str:
    """`text` with every character an HTML entity: no line of it is in the raw bytes."""
    return "<pre>" + "".join(f"&#{ord(c)};" for c in text) + "</pre>\n"


def tamper(out: Path, dest: Path) -> dict[str, str]:
    """A copy of `out` whose records are tampered, one gate each; {instance id: gate}."""
    shutil.copytree(out, dest)
    by_symbol = records(out)
    assert {"vg.core.scale", "vg.core.check_positive", "vg.core.build_table"} <= set(by_symbol)
    expected = {}
    # trivial-solution: drop the FAIL_TO_PASS test a `pass` body fails; what is left, a
    # `pass` body satisfies (the labels still hold: the targeted run is that test alone).
    checked = by_symbol["vg.core.check_positive"]
    accepted = "tests/test_core.py::test_positive_is_accepted"
    assert set(checked["FAIL_TO_PASS"]) == {accepted, "tests/test_core.py::test_zero_is_rejected"}
    checked["FAIL_TO_PASS"] = [accepted]
    checked["verification"]["tests_run"] = [accepted]
    expected[checked["instance_id"]] = "trivial-solution"
    # collection-breaks: the record says breaks were not allowed (the recipe said they were).
    table = by_symbol["vg.core.build_table"]
    assert table["verification"]["collateral"]["collection_errors"] == ["tests/test_squares.py"]
    table["verification"]["collateral"]["allowed"] = False
    expected[table["instance_id"]] = "collection-breaks"
    # leak-scan: the deletion also writes the deleted body, entity-encoded, into the workspace.
    scale = by_symbol["vg.core.scale"]
    scale["deletion_patch"] += diff_texts({"notes/scale.html": (None, entity_html(SCALE_BODY))})
    expected[scale["instance_id"]] = "leak-scan"
    (dest / SHARD).write_text("".join(json.dumps(r) + "\n" for r in
                                      sorted(by_symbol.values(),
                                             key=lambda r: r["instance_id"])))
    return expected


@pytest.mark.slow
def test_verify_names_the_gate_each_tampered_record_fails(generated: Path,
                                                          tmp_path: Path) -> None:
    genuine = run_cli("verify", str(generated), cwd=tmp_path)
    assert genuine.returncode == 0, genuine.stdout + genuine.stderr
    expected = tamper(generated, tmp_path / "tampered")
    proc = run_cli("verify", str(tmp_path / "tampered"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    failed: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("[") and ": FAILED " in line:
            task_id, rest = line.split("] ", 1)[1].split(": FAILED ", 1)
            failed[task_id] = rest.split(":", 1)[0]  # the failed gates' names
    assert failed == expected, proc.stdout
    assert "labels" not in "".join(failed.values())  # a labels-only verify passed all three
    assert f"{len(records(generated)) - 3} verified, 3 failed" in proc.stdout
    assert "a `pass` body passes every FAIL_TO_PASS test" in proc.stdout
    assert "leak:workspace: notes/scale.html" in proc.stdout


def test_null_body_rewrite_is_what_the_strategy_writes(tmp_path: Path) -> None:
    """`with_null_body` (what verify derives from a record) equals `apply(body=...)` (what
    generate runs) for every function of the sample repositories."""
    python = language_named("python")
    checked = 0
    for name, import_root in {"textkit": ".", "spans": "src", "exprcalc": "."}.items():
        project_ = PythonProject(REPO_ROOT / "sample_repos" / name, (import_root,))
        for path in project_.source_files:
            for node in ast.walk(ast.parse(project_.text(path))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                candidate = Candidate(strategy="stub-function", path=path,
                                      symbol=f"{path}:{node.name}", kind="function",
                                      start_line=node.lineno, end_line=node.end_lineno,
                                      body_lines=node.end_lineno - node.lineno,
                                      covering_tests=())
                try:
                    patches = {body: StubFunction().apply(project_, candidate, TaskOptions(),
                                                          body=body).new_texts
                               for body in ("raise", *python.null_bodies)}
                except Rejected:
                    continue
                deletion = diff_texts({p: (project_.text(p), t)
                                       for p, t in patches["raise"].items()})
                for body in python.null_bodies:
                    ws = tmp_path / f"{checked}-{body}"
                    for p in patches[body]:
                        (ws / p).parent.mkdir(parents=True, exist_ok=True)
                        (ws / p).write_text(project_.text(p))
                    apply_patch(ws, python.with_null_body(deletion, body))
                    assert {p: (ws / p).read_text() for p in patches[body]} == patches[body]
                checked += 1
    assert checked > 20


@pytest.mark.slow
def test_verify_checks_collection_where_generate_did(generated: Path, tf_cache: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The collect-only run of the whole suite is the collection check's; verify runs it for
    a deletion whose code ran at import (as generate did), not for one whose code did not,
    and for a record that does not say (fail closed)."""
    collected = count_calls(monkeypatch, Runner, "collect")
    tasks = {t.record["deleted"][0]["symbol"]: t for t in taskforge.load_tasks(generated,
                                                                               cache=tf_cache)}
    box = get_sandbox("none")
    table, scale = tasks["vg.core.build_table"], tasks["vg.core.scale"]
    assert table.record["verification"]["collection_checked"] is True
    assert scale.record["verification"]["collection_checked"] is False
    assert table.reverify(sandbox=box) == [] and len(collected) == 1
    assert scale.reverify(sandbox=box) == [] and len(collected) == 1
    del scale.record["verification"]["collection_checked"]
    assert scale.reverify(sandbox=box) == [] and len(collected) == 2


@pytest.mark.slow
def test_verify_grade_grades_the_reference_and_the_start_state(generated: Path, tf_cache: Path,
                                                               tmp_path: Path) -> None:
    """`verify --grade`: the grader's gate, which the runner's labels cannot stand in for.
    Attacks, each a record an RL loop would be fed: (1) PASS_TO_PASS names a test the
    targeted labels never run (a stale record: the suite renamed it) and the reference
    solution fails it, so every correct solution scores 0; (2) FAIL_TO_PASS emptied, so the
    untouched start state scores 1.0. Positive controls: plain verify passes (1) (its labels
    run the targeted tests only), and grading (2)'s start state gives 1.0: a loop fed the
    record rewards doing nothing."""
    out = tmp_path / "out"
    shutil.copytree(generated, out)
    by_symbol = records(out)
    stale, empty = by_symbol["vg.core.scale"], by_symbol["vg.core.check_positive"]
    assert stale["verification"]["collection_checked"] is False  # no collect-only run sees it
    stale["PASS_TO_PASS"] = sorted([*stale["PASS_TO_PASS"], "tests/test_core.py::test_renamed"])
    empty["PASS_TO_PASS"] = sorted(set(empty["PASS_TO_PASS"]) - set(empty["FAIL_TO_PASS"]))
    empty["FAIL_TO_PASS"] = []
    (out / SHARD).write_text("".join(json.dumps(r) + "\n" for r in
                                     sorted(by_symbol.values(), key=lambda r: r["instance_id"])))
    tasks = {t.record["deleted"][0]["symbol"]: t
             for t in taskforge.load_tasks(out, cache=tf_cache)}
    box = get_sandbox("none")

    # (1) plain verify accepts the stale record; the grader's gate names it
    assert tasks["vg.core.scale"].reverify(sandbox=box) == []
    problems = tasks["vg.core.scale"].reverify(sandbox=box, grade=True)
    assert problems == ["grader: the reference solution scores 0.0: "
                        "errors ['tests/test_core.py::test_renamed']"], problems

    # (2) the grade rewards doing nothing; the grader's gate says so
    start = tasks["vg.core.check_positive"].materialize(tmp_path / "start")
    assert tasks["vg.core.check_positive"].grade(start, sandbox=box).reward == 1.0
    problems = tasks["vg.core.check_positive"].reverify(sandbox=box, grade=True)
    assert "grader: the start state scores 1.0: no FAIL_TO_PASS test fails under the grader" \
        in problems, problems

    # a genuine task passes, through the command line
    genuine = tasks["vg.core.build_table"].instance_id
    proc = run_cli("verify", str(generated), "--id", genuine, "--grade", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{genuine}: ok" in proc.stdout

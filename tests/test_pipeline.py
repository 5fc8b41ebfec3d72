"""End to end: a purpose-built project through the real pipeline (uv venv, real pytest runs),
then loading, materializing and grading its tasks as an RL data loader would."""

from __future__ import annotations

import compileall
import hashlib
import json
import re
import statistics
from pathlib import Path

import pytest
from conftest import REPO_ROOT, apply_patch, git, make_project, run_cli, write_recipe

import taskforge
from taskforge.cache import build_digest
from taskforge.generate import Summary
from taskforge.languages.python import PythonLanguage
from taskforge.languages.python.testing import zygote
from taskforge.store.shards import strip_timing

# End to end: generate, verify, grade on the sample repositories:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

PROJECT_FILES = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "statkit"
        version = "0.1.0"
        license = {text = "MIT"}

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.setuptools]
        packages = ["statkit"]
    """,
    "statkit/__init__.py": '"""Tiny statistics helpers."""\n',
    "statkit/core.py": '''\
        """Sums, means and friends."""


        def total(values):
            """Sum of `values`, ignoring None."""
            result = 0
            for value in values:
                if value is not None:
                    result += value
            return result


        def mean(values):
            """Arithmetic mean of the values that are not None."""
            present = [value for value in values if value is not None]
            if not present:
                raise ValueError("mean of nothing")
            return total(present) / len(present)


        def require_positive(number):
            """`number`, if it is positive."""
            if number <= 0:
                raise ValueError(f"expected a positive number, got {number}")
            return number


        def never_called(values):
            """No test runs this."""
            doubled = [value * 2 for value in values]
            doubled.sort(reverse=True)
            return doubled


        class RunningMax:
            def __init__(self):
                self.best = None

            def push(self, value):
                """Record `value`; return the largest value seen so far."""
                if self.best is None or value > self.best:
                    self.best = value
                return self.best
    ''',
    "statkit/text.py": '''\
        def histogram(values, width=10):
            """One line per distinct value: the value, then a bar of at most `width` marks."""
            counts = {}
            for value in values:
                counts[value] = counts.get(value, 0) + 1
            rows = [f"{key}: {'#' * min(count, width)}" for key, count in sorted(counts.items())]
            return "\\n".join(rows)
    ''',
    "tests/test_core.py": """\
        import pytest

        from statkit.core import RunningMax, mean, require_positive, total


        def test_total_of_numbers():
            assert total([1, 2, 3]) == 6


        def test_total_skips_none():
            assert total([4, None, 5]) == 9


        def test_mean_of_numbers():
            assert mean([2, 4, 9]) == 5


        def test_mean_ignores_none():
            assert mean([None, 3, 5]) == 4


        def test_mean_of_nothing_is_an_error():
            with pytest.raises(ValueError):
                mean([None])


        def test_require_positive_rejects_negatives():
            with pytest.raises(Exception):
                require_positive(-3)


        def test_running_max_keeps_the_largest():
            tracker = RunningMax()
            assert [tracker.push(v) for v in (3, 1, 7, 2)] == [3, 3, 7, 7]


        def test_running_max_starts_empty():
            assert RunningMax().best is None
    """,
    "tests/test_text.py": """\
        from statkit.text import histogram


        def test_histogram_counts_values():
            assert histogram([2, 1, 2]) == "1: #\\n2: ##"


        def test_histogram_bars_are_capped():
            assert histogram([5] * 4, width=2) == "5: ##"
    """,
}

CORE = "statkit/core.py"
EXPECTED_CANDIDATES = {"statkit.core.total", "statkit.core.mean", "statkit.core.require_positive",
                       "statkit.core.RunningMax.push", "statkit.text.histogram"}
EXPECTED_TASKS = EXPECTED_CANDIDATES - {"statkit.core.require_positive"}
SPEC_FIELDS = ("instance_id", "repo", "source", "base_commit", "license", "language", "strategy",
               "deleted", "deletion_patch", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS",
               "problem_statement", "environment", "difficulty", "verification", "sanitizer",
               "created_at", "generator")
SHARD = "tasks-00000-of-00001.jsonl"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("src"), PROJECT_FILES, name="statkit")
    # Stale bytecode of the original code: it must never reach a task workspace.
    compileall.compile_dir(str(root / "statkit"), quiet=1)
    assert any((root / "statkit" / "__pycache__").glob("core*.pyc"))
    return root


@pytest.fixture(scope="module")
def recipe(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_recipe(tmp_path_factory.mktemp("recipe") / "statkit.yaml", f"""\
        name: statkit
        seed: 3
        sources:
          - path: {project}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 50}}
        task: {{tests_visible: true, keep_docstrings: true}}
        verify: {{repeats: 2, timeout_s: 120, full_suite: false}}
        sandbox: none
    """)


@pytest.fixture(scope="module")
def first_run(recipe: Path, tf_cache: Path,
              tmp_path_factory: pytest.TempPathFactory) -> tuple[Summary, Path]:
    out = tmp_path_factory.mktemp("run1") / "out"
    return taskforge.generate(recipe, out=out, cache=tf_cache), out


@pytest.fixture(scope="module")
def out(first_run: tuple[Summary, Path]) -> Path:
    return first_run[1]


@pytest.fixture(scope="module")
def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / SHARD).read_text().splitlines()]


@pytest.fixture(scope="module")
def by_symbol(records: list[dict]) -> dict[str, dict]:
    return {r["deleted"][0]["symbol"]: r for r in records}


def load(out: Path, symbol: str) -> taskforge.Task:
    for task in taskforge.load_tasks(out):
        if task.record["deleted"][0]["symbol"] == symbol:
            return task
    raise AssertionError(f"no task deletes {symbol}")


# ------------------------------------------------------------------ generation


def test_tasks_are_emitted_and_the_weak_test_is_rejected(first_run: tuple[Summary, Path],
                                                         by_symbol: dict[str, dict]) -> None:
    summary, _ = first_run
    assert set(by_symbol) == EXPECTED_TASKS
    assert summary.funnel["candidates"] == len(EXPECTED_CANDIDATES)
    assert summary.funnel["emitted"] == len(EXPECTED_TASKS)
    # Stubbed, `require_positive` still raises, so its only test still passes.
    assert summary.rejections == {"no-failing-test": 1}
    assert summary.warnings == []
    # The same figures per strategy, with the difficulty of the tasks it emitted.
    row = summary.strategies["stub-function"]
    assert (row["candidates"], row["tried"], row["emitted"]) == \
        (len(EXPECTED_CANDIDATES), summary.funnel["tried"], len(EXPECTED_TASKS))
    assert row["rejections"] == {"no-failing-test": 1}
    assert row["yield"] == round(len(EXPECTED_TASKS) / summary.funnel["tried"], 4)
    assert row["difficulty"]["fail_to_pass"]["median"] == \
        statistics.median(len(r["FAIL_TO_PASS"]) for r in by_symbol.values())


def test_uncovered_function_is_never_a_candidate(project: Path, records: list[dict],
                                                 tmp_path: Path) -> None:
    proc = run_cli("candidates", str(project), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    found = {c["symbol"]: c for c in json.loads(proc.stdout)}
    assert set(found) == EXPECTED_CANDIDATES
    assert found["statkit.core.require_positive"]["covering_tests"] == [
        "tests/test_core.py::test_require_positive_rejects_negatives"]
    assert not any("never_called" in json.dumps(r) for r in records)


def test_every_record_has_the_spec_fields(records: list[dict], recipe: Path,
                                          project: Path) -> None:
    recipe_sha = hashlib.sha256(recipe.read_bytes()).hexdigest()
    for r in records:
        missing = [f for f in SPEC_FIELDS if f not in r]
        assert not missing, f"{r['instance_id']}: missing {missing}"
        assert r["repo"] == "statkit"
        assert r["source"] == str(project)
        assert re.fullmatch(r"[0-9a-f]{40}", r["base_commit"])
        assert r["license"] == "MIT"
        assert r["language"] == "python"
        assert r["strategy"] == "stub-function"
        assert r["test_patch"] == ""
        (deleted,) = r["deleted"]
        assert set(deleted) == {"path", "symbol", "kind", "start_line", "end_line"}
        assert deleted["start_line"] < deleted["end_line"]
        assert {"python", "install", "test_command"} <= set(r["environment"])
        assert {"lines_deleted", "symbols", "files", "fail_to_pass"} <= set(r["difficulty"])
        assert r["difficulty"]["fail_to_pass"] == len(r["FAIL_TO_PASS"])
        assert r["difficulty"]["symbols"] == 1 and r["difficulty"]["files"] == 1
        assert r["verification"]["repeats"] == 2
        # The screen ran the task state once and FAIL_TO_PASS on the original code once;
        # the confirmation ran the task state once more, fresh (repeats: 2 runs in all),
        # then checked that the patch restores the original byte for byte.
        assert r["verification"]["screen"]["task_runs"] == 1
        assert r["verification"]["screen"]["reference_runs"] == 1
        assert r["verification"]["screen"]["screened"] is True
        assert r["verification"]["audit"] == {"ran": False, "tests": 0, "disagreements": 0}
        assert [run["state"] for run in r["verification"]["runs"]] == ["task"]
        assert set(r["verification"]["null_solutions"]) == set(PythonLanguage.null_bodies.values())
        assert r["generator"]["recipe_sha256"] == recipe_sha
        assert r["generator"]["seed"] == 3
        assert r["generator"]["version"]
        assert r["generator"]["build"] == build_digest()  # which code verified it
        assert r["instance_id"].startswith("statkit__stub-function__")
    assert len({r["instance_id"] for r in records}) == len(records)
    assert len({r["base_commit"] for r in records}) == 1


def test_fail_to_pass_is_non_empty_and_disjoint_from_pass_to_pass(records: list[dict]) -> None:
    for r in records:
        f2p, p2p = set(r["FAIL_TO_PASS"]), set(r["PASS_TO_PASS"])
        assert f2p, r["instance_id"]
        assert not f2p & p2p, r["instance_id"]
        assert f2p <= set(r["verification"]["tests_run"])


def test_fail_to_pass_are_the_tests_that_need_the_code(by_symbol: dict[str, dict]) -> None:
    core = "tests/test_core.py::"
    text = "tests/test_text.py::"
    assert set(by_symbol["statkit.core.total"]["FAIL_TO_PASS"]) == {
        core + "test_total_of_numbers", core + "test_total_skips_none",
        core + "test_mean_of_numbers", core + "test_mean_ignores_none"}
    assert set(by_symbol["statkit.text.histogram"]["FAIL_TO_PASS"]) == {
        text + "test_histogram_counts_values", text + "test_histogram_bars_are_capped"}
    assert by_symbol["statkit.core.RunningMax.push"]["FAIL_TO_PASS"] == [
        core + "test_running_max_keeps_the_largest"]
    assert core + "test_running_max_starts_empty" in by_symbol[
        "statkit.core.RunningMax.push"]["PASS_TO_PASS"]
    assert by_symbol["statkit.core.RunningMax.push"]["deleted"][0]["kind"] == "method"


def test_problem_statement_never_quotes_the_deleted_body(records: list[dict]) -> None:
    for r in records:
        deleted = [line[1:].strip() for line in r["deletion_patch"].splitlines()
                   if line.startswith("-") and not line.startswith("---")]
        assert deleted, r["instance_id"]
        for line in deleted:
            if line:
                assert line not in r["problem_statement"], (r["instance_id"], line)
        assert r["deleted"][0]["symbol"] in r["problem_statement"]


def test_manifest_lists_the_shard_with_its_sha256(out: Path, records: list[dict]) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["shards"] == {SHARD: hashlib.sha256((out / SHARD).read_bytes()).hexdigest()}
    assert manifest["counts"]["tasks"] == len(records)
    assert manifest["seed"] == 3
    assert manifest["funnel"]["emitted"] == len(records)


def test_second_run_gives_the_same_tasks(recipe: Path, out: Path, tf_cache: Path,
                                         tmp_path: Path) -> None:
    again = tmp_path / "out"
    before = set(zygote.ZYGOTES._all)
    taskforge.generate(recipe, out=again, cache=tf_cache)
    # Its screen's server ran on the warm process started while the candidates were found
    # (`Language.warm_up`: one for its one worker), not on one started when it came.
    ahead = [z for z in zygote.ZYGOTES._all if z not in before and z.ahead]
    assert len(ahead) == 1 and ahead[0]._ids >= 1
    first = (out / SHARD).read_text().splitlines()
    second = (again / SHARD).read_text().splitlines()
    assert [json.loads(x)["instance_id"] for x in first] == \
        [json.loads(x)["instance_id"] for x in second]
    assert [strip_timing(json.loads(x)) for x in first] == \
        [strip_timing(json.loads(x)) for x in second]
    # Byte for byte, once the timing fields are taken out.
    assert [json.dumps(strip_timing(json.loads(x)), sort_keys=True) for x in first] == \
        [json.dumps(strip_timing(json.loads(x)), sort_keys=True) for x in second]
    assert sorted(p.name for p in (again / "snapshots").iterdir()) == \
        sorted(p.name for p in (out / "snapshots").iterdir())
    for archive in (out / "snapshots").iterdir():
        assert archive.read_bytes() == (again / "snapshots" / archive.name).read_bytes()


def test_rerun_in_the_same_directory_resumes_byte_identically(recipe: Path, out: Path,
                                                              tf_cache: Path) -> None:
    before = (out / SHARD).read_bytes()
    summary = taskforge.generate(recipe, out=out, cache=tf_cache)
    assert summary.funnel["emitted"] == len(EXPECTED_TASKS)
    assert (out / SHARD).read_bytes() == before


# ------------------------------------------------------- loading and materializing


def test_task_set_loads_and_shards(out: Path, records: list[dict]) -> None:
    tasks = taskforge.load_tasks(out)
    assert len(tasks) == len(records)
    ids = [t.instance_id for t in tasks]
    assert ids == sorted(r["instance_id"] for r in records)
    assert tasks[0].instance_id == ids[0]
    parts = [[t.instance_id for t in tasks.shard(rank, 3)] for rank in range(3)]
    assert sorted(i for part in parts for i in part) == ids
    assert len({i for part in parts for i in part}) == len(ids)
    assert [t.instance_id for t in taskforge.load_tasks(out / SHARD)] == ids


def test_materialized_workspace_is_sanitized(out: Path, project: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    assert ws == tmp_path / "ws"
    assert git("rev-list", "--all", "--count", cwd=ws) == "1"
    assert git("status", "--porcelain", cwd=ws) == ""
    reachable = git("rev-list", "--all", "--objects", cwd=ws).splitlines()
    stored = git("cat-file", "--batch-all-objects", "--batch-check", cwd=ws).splitlines()
    assert len(stored) == len(reachable), "the workspace's .git holds unreachable objects"
    assert not list(ws.rglob("__pycache__"))
    assert not list(ws.rglob("*.pyc"))
    text = (ws / CORE).read_text()
    assert "raise NotImplementedError" in text
    assert "result += value" not in text
    assert (ws / "tests" / "test_core.py").read_text() == (project / "tests/test_core.py").read_text()


def test_every_record_shows_a_clean_leak_scan(records: list[dict]) -> None:
    for r in records:
        scan = r["sanitizer"]["leak_scan"]
        assert scan["clean"] is True
        assert scan["scanned"] == ["workspace", "environment"]
        assert sum(scan["fingerprints"].values()) > 0


def test_scan_command_finds_a_planted_copy(out: Path, project: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    clean = run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    (ws / "notes").mkdir()
    (ws / "notes" / "backup.py").write_text((project / CORE).read_text())
    found = run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path)
    assert found.returncode == 1
    assert "notes/backup.py" in found.stdout


def test_patch_restores_the_original_file(out: Path, project: Path, tmp_path: Path) -> None:
    for task in taskforge.load_tasks(out):
        ws = task.materialize(tmp_path / task.instance_id / "ws")
        path = task.record["deleted"][0]["path"]
        assert (ws / path).read_text() != (project / path).read_text()
        apply_patch(ws, task.record["patch"])
        assert (ws / path).read_text() == (project / path).read_text()


# ---------------------------------------------------------------------- grading


def test_grade_of_the_materialized_workspace_is_zero(out: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    result = task.grade(task.materialize(tmp_path / "ws"))
    assert result.reward == 0.0
    assert result.resolved is False
    assert set(task.record["FAIL_TO_PASS"]) <= set(result.failed) | set(result.errors)
    assert set(task.record["PASS_TO_PASS"]) <= set(result.passed)
    assert result.tampered == ()


def test_grade_after_applying_the_patch_is_one(out: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    apply_patch(ws, task.record["patch"])
    result = task.grade(ws)
    assert result.reward == 1.0
    assert result.resolved is True
    assert set(result.passed) == set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"])
    assert result.tampered == ()


def test_trivial_solution_scores_zero(out: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    text = (ws / CORE).read_text()
    assert text.count("raise NotImplementedError") == 1
    (ws / CORE).write_text(text.replace("raise NotImplementedError", "return None"))
    assert task.grade(ws).reward == 0.0


def test_editing_the_tests_does_not_help_and_is_reported(out: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    test_file = ws / "tests" / "test_core.py"
    names = re.findall(r"^def (test_\w+)", test_file.read_text(), flags=re.M)
    test_file.write_text("".join(f"def {name}():\n    pass\n\n\n" for name in names))
    result = task.grade(ws)
    assert result.reward == 0.0
    assert "edited tests/test_core.py" in result.tampered


def test_adding_a_conftest_does_not_help_and_is_reported(out: Path, tmp_path: Path) -> None:
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    (ws / "conftest.py").write_text(
        "import pytest\n\n\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\n"
        "    report.longrepr = None\n")
    result = task.grade(ws)
    assert result.reward == 0.0
    assert "added conftest.py" in result.tampered


def test_adding_a_plugin_through_sitecustomize_does_not_help(out: Path, tmp_path: Path) -> None:
    # The workspace root is an import root, so a sitecustomize.py there runs in every test
    # process; this one loads a pytest plugin that reports every test as passed.
    task = load(out, "statkit.core.total")
    ws = task.materialize(tmp_path / "ws")
    (ws / "sitecustomize.py").write_text(
        "import os\n\nos.environ['PYTEST_PLUGINS'] = 'statkit_helpers'\n")
    (ws / "statkit_helpers.py").write_text(
        "import pytest\n\n\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\n"
        "    report.longrepr = None\n")
    result = task.grade(ws)
    assert result.reward == 0.0
    assert result.tampered, "an added pytest plugin was not reported"


def test_materialize_refuses_a_non_empty_destination(out: Path, tmp_path: Path) -> None:
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n")
    with pytest.raises(taskforge.UserError, match="not empty"):
        load(out, "statkit.core.total").materialize(dest)
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]


def test_cli_verify_accepts_the_generated_tasks(out: Path, tmp_path: Path) -> None:
    proc = run_cli("verify", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{len(EXPECTED_TASKS)} verified, 0 failed" in proc.stdout


# ------------------------------------------------------------- a second project


THERMO_FILES = {
    "thermo/__init__.py": "",
    "thermo/core.py": """\
        class Thermostat:
            def __init__(self):
                self._celsius = 20.0

            @property
            def fahrenheit(self):
                scaled = self._celsius * 9 / 5
                shifted = scaled + 32
                return round(shifted, 1)

            @fahrenheit.setter
            def fahrenheit(self, value):
                shifted = value - 32
                scaled = shifted * 5 / 9
                self._celsius = round(scaled, 1)
    """,
    "tests/test_core.py": """\
        from thermo.core import Thermostat


        def test_read_fahrenheit():
            assert Thermostat().fahrenheit == 68.0


        def test_write_fahrenheit():
            thermostat = Thermostat()
            thermostat.fahrenheit = 212
            assert thermostat._celsius == 100.0
    """,
}


def test_property_getter_and_setter_are_separate_tasks(tmp_path: Path, tf_cache: Path) -> None:
    root = make_project(tmp_path, THERMO_FILES, name="thermo")
    recipe = write_recipe(tmp_path / "thermo.yaml", f"""\
        name: thermo
        sources:
          - path: {root}
    """)
    taskforge.generate(recipe, out=tmp_path / "out", cache=tf_cache)
    records = [json.loads(line) for line in (tmp_path / "out" / SHARD).read_text().splitlines()]
    ids = [r["instance_id"] for r in records]
    assert len(ids) == len(set(ids)), f"duplicate task ids: {ids}"
    assert sorted(r["deleted"][0]["start_line"] for r in records) == [6, 12]
    assert sorted(r["FAIL_TO_PASS"][0] for r in records) == [
        "tests/test_core.py::test_read_fahrenheit", "tests/test_core.py::test_write_fahrenheit"]


# ------------------------------------------------------------ the bundled sample


def test_cli_generate_on_textkit_with_limit_3(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "textkit.yaml", f"""\
        name: textkit
        seed: 0
        sources:
          - path: {REPO_ROOT / "sample_repos" / "textkit"}
        strategies: [stub-function]
        verify: {{repeats: 2, timeout_s: 300}}
    """)
    out = tmp_path / "out"
    proc = run_cli("generate", str(recipe), "--out", str(out), "--limit", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "per strategy" in proc.stdout and "stub-function" in proc.stdout
    # The per-source table names each source's language (detected from its snapshot).
    table = proc.stdout[proc.stdout.index("per source"):proc.stdout.index("per strategy")]
    assert "language" in table and "python" in table.split("textkit", 1)[1].splitlines()[0]
    lines = (out / SHARD).read_text().splitlines()
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert all(r["repo"] == "textkit" and r["FAIL_TO_PASS"] for r in records)
    assert len({r["instance_id"] for r in records}) == 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["tasks"] == 3
    assert [s["language"] for s in manifest["sources"]] == ["python"]
    assert manifest["shards"][SHARD] == hashlib.sha256((out / SHARD).read_bytes()).hexdigest()

"""The verification gates, each proved on purpose-built code: a flaky test, a function a
trivial body satisfies, a deletion that breaks an import, a test that covers nothing deleted,
a function only a subprocess runs. Each gate is proved with both test-map tracers: coverage.py
(Python 3.11) and sys.monitoring (3.12+); the two must also record the very same map.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import apply_patch, make_project, run_cli, setuptools_pyproject, write_recipe

import taskforge
from taskforge.generate import Summary
from taskforge.ingest import ingest
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.python.testing.testmap import MapProbe, tracer_for
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.workspace import scratch_copy, scratch_dir

# Every gate on real suites in real environments, under both tracers:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

# The test map's tracer follows the environment's Python: coverage.py before 3.12.
TRACERS = {"coverage": "3.11", "sysmon": "3.12"}


def gate_project(tmp_path: Path) -> Path:
    counter = tmp_path / "flaky-counter"
    return make_project(tmp_path, {
        "pyproject.toml": setuptools_pyproject("gates", "1.0"),
        "gates/__init__.py": "",
        # Threads, a generator, a class body, a decorator: what a tracer can miss.
        "gates/workers.py": """\
            import threading


            class Pool:
                size = 2

                @staticmethod
                def double(x):
                    return x * 2

                def run(self, job, items):
                    results = [None] * len(items)

                    def work(i):
                        results[i] = job(items[i])

                    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(items))]
                    for thread in threads:
                        thread.start()
                    for thread in threads:
                        thread.join()
                    return results


            def countdown(n):
                while n > 0:
                    yield n
                    n -= 1
        """,
        "gates/core.py": """\
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


            def shout(text):
                words = text.split()
                loud = [word.upper() for word in words]
                return " ".join(loud) + "!"


            _BANNERS = {}


            def make_banner(title):
                line = "=" * len(title)
                return f"{line}\\n{title}\\n{line}"


            def banner(title):
                if title not in _BANNERS:
                    _BANNERS[title] = make_banner(title)
                return _BANNERS[title]


            def bump(path):
                count = int(path.read_text()) if path.exists() else 0
                path.write_text(str(count + 1))
                return count


            def greeting(name):
                words = ["Hello,", name]
                return " ".join(words) + "!"


            def unit_label(unit):
                label = unit.strip()
                return label.lower()


            _TABLES = {}


            def unit_table():
                if "units" not in _TABLES:
                    _TABLES["units"] = build_units()
                return _TABLES["units"]


            def build_units():
                table = {"kg": 1000, "g": 1}
                table["t"] = table["kg"] * 1000
                return table
        """,
        # A cache filled by its first user: in file order only test_first builds the table,
        # in reverse order only test_last; test_middle builds it only when it runs alone.
        "tests/test_units.py": """\
            from gates.core import unit_table


            def test_first():
                assert unit_table()["kg"] == 1000


            def test_middle():
                assert unit_table()["t"] == 1000000


            def test_last():
                assert unit_table()["g"] == 1
        """,
        # Fixtures set up once for several tests, during the first one that needs them: in
        # file order only the first test runs greeting or unit_label, in reverse order only
        # the last; a setup that raises errors every test that uses it.
        "tests/test_fixture.py": """\
            import pytest

            from gates.core import greeting


            @pytest.fixture(scope="module", autouse=True)
            def warm():
                assert greeting("warm") == "Hello, warm!"


            def test_first():
                assert [1, 2][0] == 1


            def test_middle():
                assert "ab".upper() == "AB"


            def test_last():
                assert 3 * 3 == 9
        """,
        "tests/test_setup_class.py": """\
            import unittest

            from gates.core import unit_label


            class TestUnits(unittest.TestCase):
                @classmethod
                def setUpClass(cls):
                    cls.label = unit_label(" KG ")

                def test_a(self):
                    self.assertEqual(self.label, "kg")

                def test_b(self):
                    self.assertEqual(len("kg"), 2)

                def test_c(self):
                    self.assertTrue("kg".islower())
        """,
        # Calls build_table at import time: stubbing it breaks every importer.
        "gates/squares.py": """\
            from gates.core import build_table

            SQUARES = build_table()
        """,
        "tests/test_core.py": f"""\
            import subprocess
            import sys
            from pathlib import Path

            from gates.core import banner, bump, check_positive, scale
            from gates.squares import SQUARES

            COUNTER = Path({str(counter)!r})


            def test_scale():
                assert scale([1, 2], 3) == [3, 6]


            def test_scale_empty():
                assert scale([], 3) == []


            def test_positive_is_accepted():
                check_positive(5)


            def test_squares():
                assert SQUARES[3] == 9


            def test_shout_in_a_subprocess():
                # shout runs only in the child interpreter
                program = "from gates.core import shout; print(shout('hi there'))"
                out = subprocess.run([sys.executable, "-c", program], capture_output=True,
                                     text=True, check=True).stdout
                assert out == "HI THERE!\\n"


            def test_banner_first():
                assert banner("Hi") == "==\\nHi\\n=="


            def test_banner_again():
                # in file order, this test only reads what the one above cached
                assert banner("Hi").splitlines()[1] == "Hi"


            def test_unrelated_arithmetic():
                assert sum(range(4)) == 6


            def test_flaky_every_other_run():
                # Fails on every other run of the suite: state kept outside the workspace.
                assert bump(COUNTER) % 2 == 0
        """,
        # Collects whatever becomes of gates.squares.
        "tests/test_workers.py": """\
            from gates.workers import Pool, countdown


            def test_pool_in_threads():
                assert Pool().run(Pool.double, [1, 2, 3]) == [2, 4, 6]


            def test_countdown():
                assert list(countdown(3)) == [3, 2, 1]
        """,
    }, name="gates")


@pytest.fixture(scope="module", params=sorted(TRACERS))
def gate_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
             tf_cache: Path) -> tuple[Summary, list[dict]]:
    assert tracer_for(TRACERS[request.param]) == request.param
    tmp = tmp_path_factory.mktemp("gates")
    root = gate_project(tmp)
    recipe = write_recipe(tmp / "recipe.yaml", f"""\
        name: gates
        sources:
          - path: {root}
            python: "{TRACERS[request.param]}"
        select: {{min_body_lines: 1}}
        sandbox: none
    """)
    summary = taskforge.generate(recipe, out=tmp / "out", cache=tf_cache)
    return summary, [t.record for t in taskforge.load_tasks(tmp / "out", cache=tf_cache)]


def test_both_tracers_record_the_same_test_map(tmp_path: Path, tf_cache: Path) -> None:
    """sys.monitoring's map equals coverage.py's line for line and test for test, on 3.12:
    import-time lines, threads, a generator, a decorator, a subprocess, cached state."""
    root = gate_project(tmp_path)
    box = get_sandbox("none")
    source = ingest(SourceSpec(kind="path", location=str(root), python=TRACERS["sysmon"]),
                    cache=tf_cache, base_dir=tmp_path, sandbox=box, repeats=2, timeout=300)
    assert source.baseline.tracer == "sysmon"
    maps = {}
    for tracer in TRACERS:
        with scratch_copy(source.snapshot.root, tf_cache) as workspace, \
                scratch_dir(tf_cache) as io:
            probe = MapProbe(tracer, io / f"{tracer}.data")
            run_tests(source.env, workspace, box, timeout=300, test_map=probe)
            maps[tracer] = probe.read(workspace, source.baseline.tests)
    lines, by_subprocesses = maps["sysmon"]
    assert maps["sysmon"] == maps["coverage"]
    tests = source.baseline.tests
    worker = lines["gates/workers.py"]
    in_thread = tests.index("tests/test_workers.py::test_pool_in_threads")
    assert in_thread in worker[15]  # results[i] = job(items[i]), in the threads
    assert in_thread in worker[9]  # Pool.double, called in the threads
    assert -1 in worker[1]  # imported before any test: the empty context
    assert by_subprocesses["gates/core.py"]  # shout, in the child interpreter


def by_symbol(records: list[dict]) -> dict[str, dict]:
    return {r["deleted"][0]["symbol"]: r for r in records}


def test_a_flaky_test_is_never_fail_to_pass_or_pass_to_pass(gate_run) -> None:
    summary, records = gate_run
    assert records
    flaky = "tests/test_core.py::test_flaky_every_other_run"
    for record in records:
        assert flaky not in record["FAIL_TO_PASS"]
        assert flaky not in record["PASS_TO_PASS"]
    (source,) = summary.sources
    assert source["flaky"] == 1
    # Named in the manifest, and in the run's report among the tests left out.
    assert source["flaky_tests"] == [flaky]
    page = (summary.out / "report.html").read_text()
    left_out = page[page.index('<section id="flaky-and-excluded-tests">'):]
    assert f"<code>{flaky}</code>" in left_out[:left_out.index("</section>")]


def test_a_function_a_pass_body_satisfies_never_becomes_a_task(gate_run) -> None:
    summary, records = gate_run
    assert "gates.core.check_positive" not in by_symbol(records)
    assert summary.rejections.get("trivial-solution") == 1


def test_a_deletion_that_breaks_an_import_is_rejected(gate_run) -> None:
    summary, records = gate_run
    assert "gates.core.build_table" not in by_symbol(records)
    assert summary.rejections.get("collection-breaks") == 1


def test_a_test_that_covers_nothing_deleted_is_never_fail_to_pass(gate_run) -> None:
    _summary, records = gate_run
    task = by_symbol(records)["gates.core.scale"]
    assert sorted(task["FAIL_TO_PASS"]) == ["tests/test_core.py::test_scale",
                                            "tests/test_core.py::test_scale_empty"]
    assert "tests/test_core.py::test_unrelated_arithmetic" in task["PASS_TO_PASS"]
    for record in records:
        assert set(record["FAIL_TO_PASS"]) <= set(record["verification"]["tests_run"])
        assert "tests/test_core.py::test_unrelated_arithmetic" not in record["FAIL_TO_PASS"]


def test_a_function_only_a_subprocess_runs_is_covered_and_verified(gate_run) -> None:
    """Subprocesses are measured under the test that started them, and the fork screen (which
    cannot model a child interpreter importing the original from disk) leaves the candidate
    to the full protocol in fresh processes."""
    _summary, records = gate_run
    task = by_symbol(records)["gates.core.shout"]
    assert task["FAIL_TO_PASS"] == ["tests/test_core.py::test_shout_in_a_subprocess"]
    assert task["verification"]["screen"]["screened"] is False
    # the reference once, over FAIL_TO_PASS (as the screen's)
    assert [run["state"] for run in task["verification"]["runs"]] == ["task", "task",
                                                                      "reference"]


def test_a_test_that_only_reuses_cached_state_is_covered(gate_run) -> None:
    """test_banner_again never runs make_banner in file order (it reads the cache the test
    before it filled); the reverse-order run's coverage attributes make_banner to it, so both
    tests are FAIL_TO_PASS, as a whole-suite run shows."""
    _summary, records = gate_run
    task = by_symbol(records)["gates.core.make_banner"]
    assert sorted(task["FAIL_TO_PASS"]) == ["tests/test_core.py::test_banner_again",
                                            "tests/test_core.py::test_banner_first"]


def test_a_cache_filled_by_its_first_user_is_covered_by_every_user(gate_run) -> None:
    """Stubbing build_units fails all three users of the cache it fills, as a whole-suite run
    shows; the middle one runs it only alone (the baseline's isolated map), in neither order."""
    _summary, records = gate_run
    task = by_symbol(records)["gates.core.build_units"]
    assert sorted(task["FAIL_TO_PASS"]) == [f"tests/test_units.py::test_{name}"
                                            for name in ("first", "last", "middle")]


def test_a_fixture_set_up_once_covers_every_test_that_uses_it(gate_run) -> None:
    """A module-scoped fixture and unittest's setUpClass run once, in the first test's time;
    stubbing what they call errors every test that uses them (as a whole-suite run shows), so
    every such test covers it: the middle ones too, which neither order's run attributes it to."""
    _summary, records = gate_run
    fixture = by_symbol(records)["gates.core.greeting"]
    assert sorted(fixture["FAIL_TO_PASS"]) == [f"tests/test_fixture.py::test_{name}"
                                               for name in ("first", "last", "middle")]
    setup_class = by_symbol(records)["gates.core.unit_label"]
    assert sorted(setup_class["FAIL_TO_PASS"]) == [
        f"tests/test_setup_class.py::TestUnits::test_{name}" for name in "abc"]


def test_audit_mode_runs_the_whole_suite_and_agrees(tmp_path: Path, tf_cache: Path) -> None:
    """`verify.full_suite: true` runs every stable test in both states and compares with the
    targeted labels; `taskforge verify --full-suite` does the same from scratch."""
    root = gate_project(tmp_path)
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: gates-audit
        sources:
          - path: {root}
        select: {{min_body_lines: 1, max_tasks_per_source: 4}}
        verify: {{full_suite: true}}
        sandbox: none
    """)
    out = tmp_path / "out"
    taskforge.generate(recipe, out=out, cache=tf_cache)
    records = [t.record for t in taskforge.load_tasks(out, cache=tf_cache)]
    assert records
    for record in records:
        stable = len(record["FAIL_TO_PASS"]) + len(record["PASS_TO_PASS"])
        assert record["verification"]["audit"] == {"ran": True, "tests": stable,
                                                   "disagreements": 0}
    proc = run_cli("verify", str(out), "--full-suite", "--sandbox", "none", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(records)} verified, 0 failed" in proc.stdout + proc.stderr


def test_a_collection_break_the_recipe_allows_is_recorded_as_collateral(
        tmp_path: Path, tf_cache: Path) -> None:
    """`verify.allow_collection_breaks: true`: stubbing build_table breaks the import of
    tests/test_core.py; instead of a rejection, its uncollected tests are FAIL_TO_PASS and the
    record names them. Grading needs the feature back for them to pass."""
    root = gate_project(tmp_path)
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: gates-collateral
        sources:
          - path: {root}
        select: {{min_body_lines: 1}}
        verify: {{allow_collection_breaks: true}}
        sandbox: none
    """)
    out = tmp_path / "out"
    summary = taskforge.generate(recipe, out=out, cache=tf_cache)
    assert "collection-breaks" not in summary.rejections
    tasks = {t.record["deleted"][0]["symbol"]: t for t in taskforge.load_tasks(out, cache=tf_cache)}
    task = tasks["gates.core.build_table"]
    collateral = task.record["verification"]["collateral"]
    assert collateral["allowed"] is True
    assert collateral["collection_errors"] == ["tests/test_core.py"]
    assert "tests/test_core.py::test_scale" in collateral["uncollected"]
    assert "tests/test_workers.py::test_countdown" in task.record["PASS_TO_PASS"]
    stable_uncollected = set(collateral["uncollected"]) - {
        "tests/test_core.py::test_flaky_every_other_run"}
    assert stable_uncollected <= set(task.record["FAIL_TO_PASS"])
    for other in tasks.values():  # one record shape for every task
        assert set(other.record["verification"]["collateral"]) == {
            "allowed", "collection_errors", "uncollected"}
    # tests/test_core.py does not import in the task state: a failure, not tampering (the
    # canaries planted in it cannot run either).
    untouched = task.grade(task.materialize(tmp_path / "ws0"))
    assert (untouched.reward, untouched.tampered) == (0.0, ())
    ws = task.materialize(tmp_path / "ws1")
    apply_patch(ws, task.record["patch"])
    assert task.grade(ws).reward == 1.0

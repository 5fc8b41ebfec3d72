"""Every strategy end to end: real environment, real pytest runs, verified and graded tasks.

One small purpose-built project offers each strategy a candidate or two; one generate run
(without `stub-function`, which test_pipeline covers) must turn them into verified tasks
whose labels are what the code says, and the grader must give the delivered workspace 0 and
the reference 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, run_cli, setuptools_pyproject, write_recipe

import taskforge
from taskforge.curriculum import structural
from taskforge.generate import Summary

# Every strategy through a real generate run:
# not in the quick loop (`make test-quick`).
pytestmark = pytest.mark.slow

NEW_STRATEGIES = ("remove-function", "stub-class", "remove-method", "feature-cluster",
                  "remove-branch", "remove-module")

FILES = {
    "pyproject.toml": setuptools_pyproject("inv", "1.0"),
    "inv/__init__.py": "from inv.core import Cart, total_price\n",
    "inv/core.py": """\
        \"\"\"Prices and carts.\"\"\"

        TAX = {"food": 5, "tools": 20}


        def _rate(kind):
            return TAX.get(kind, 10)


        def _with_tax(amount, kind):
            rate = _rate(kind)
            return amount + amount * rate // 100


        def total_price(items):
            \"\"\"Sum of (amount, kind) items, tax included.\"\"\"
            total = 0
            for amount, kind in items:
                total += _with_tax(amount, kind)
            return total


        def format_price(cents, style="plain"):
            \"\"\"Cents as text in one of the styles.\"\"\"
            if style == "plain":
                whole, part = divmod(cents, 100)
                return f"{whole}.{part:02d}"
            elif style == "short":
                whole = cents // 100
                return f"{whole}"
            raise ValueError(style)


        class Cart:
            def __init__(self):
                self.items = []

            def add(self, amount, kind):
                self.items.append((amount, kind))
                return self

            def total(self):
                return total_price(self.items)
    """,
    "inv/units.py": """\
        \"\"\"Unit conversions.\"\"\"

        GRAMS_PER_KG = 1000


        def to_grams(kg):
            grams = kg * GRAMS_PER_KG
            return grams
    """,
    "tests/test_core.py": """\
        import pytest

        from inv import Cart, total_price
        from inv.core import format_price


        def test_total_price_adds_tax():
            assert total_price([(100, "food"), (100, "tools")]) == 225


        def test_total_price_default_rate():
            assert total_price([(100, "toys")]) == 110


        def test_format_plain():
            assert format_price(1234) == "12.34"


        def test_format_short():
            assert format_price(1234, "short") == "12"


        def test_format_unknown_style():
            with pytest.raises(ValueError):
                format_price(1, "fancy")


        def test_cart_total():
            assert Cart().add(100, "food").add(200, "food").total() == 315


        def test_empty_cart():
            assert Cart().total() == 0
    """,
    "tests/test_units.py": """\
        from inv.units import to_grams


        def test_to_grams():
            assert to_grams(2) == 2000
    """,
}
ALL_TESTS = {
    "tests/test_core.py::test_total_price_adds_tax", "tests/test_core.py::test_total_price_default_rate",
    "tests/test_core.py::test_format_plain", "tests/test_core.py::test_format_short",
    "tests/test_core.py::test_format_unknown_style", "tests/test_core.py::test_cart_total",
    "tests/test_core.py::test_empty_cart", "tests/test_units.py::test_to_grams"}
PRICE_TESTS = {"tests/test_core.py::test_total_price_adds_tax",
               "tests/test_core.py::test_total_price_default_rate",
               "tests/test_core.py::test_cart_total"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("src"), FILES, name="inv")


@pytest.fixture(scope="module")
def run(source: Path, tmp_path_factory: pytest.TempPathFactory,
        tf_cache: Path) -> tuple[Summary, Path]:
    root = source
    recipe = write_recipe(tmp_path_factory.mktemp("recipe") / "inv.yaml", f"""\
        name: inv
        seed: 1
        sources:
          - path: {root}
        strategies: [{", ".join(NEW_STRATEGIES)}]
        select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: 50}}
        task: {{keep_docstrings: true, statement: full}}
        verify: {{repeats: 2, timeout_s: 120}}
        sandbox: none
    """)
    out = tmp_path_factory.mktemp("run") / "out"
    return taskforge.generate(recipe, out=out, cache=tf_cache, workers=2), out


@pytest.fixture(scope="module")
def records(run: tuple[Summary, Path]) -> dict[tuple[str, str], dict]:
    return read_records(run[1])


def read_records(out: Path) -> dict[tuple[str, str], dict]:
    """(strategy, instance id) -> record."""
    lines = (out / "tasks-00000-of-00001.jsonl").read_text().splitlines()
    return {(r["strategy"], r["instance_id"]): r for r in map(json.loads, lines)}


def one(records: dict[tuple[str, str], dict], strategy: str, deleted: str,
        symbols: int | None = None) -> dict:
    """The task of `strategy` that deletes `deleted` (and `symbols` symbols in all)."""
    for (name, _), record in records.items():
        names = [d["symbol"] for d in record["deleted"]]
        if name == strategy and deleted in names and symbols in (None, len(names)):
            return record
    raise AssertionError(f"no {strategy} task deletes {deleted}: "
                         f"{sorted(k[1] for k in records if k[0] == strategy)}")


def test_every_strategy_gives_verified_tasks(run: tuple[Summary, Path],
                                             records: dict[tuple[str, str], dict]) -> None:
    summary, _ = run
    assert {strategy for strategy, _ in records} == set(NEW_STRATEGIES)
    assert summary.funnel["emitted"] == len(records)
    for record in records.values():
        assert record["FAIL_TO_PASS"] and not set(record["FAIL_TO_PASS"]) & set(record["PASS_TO_PASS"])
        assert set(record["FAIL_TO_PASS"]) | set(record["PASS_TO_PASS"]) == ALL_TESTS
        assert record["verification"]["null_solutions"]["pass"]["passed"] < \
            record["verification"]["null_solutions"]["pass"]["of"]


def test_feature_cluster_deletes_the_entry_and_its_helpers(
        records: dict[tuple[str, str], dict]) -> None:
    record = one(records, "feature-cluster", "inv.core.total_price")
    assert [d["symbol"] for d in record["deleted"]] == [
        "inv.core.total_price", "inv.core._rate", "inv.core._with_tax"]
    assert record["difficulty"]["call_depth"] == 2 and record["difficulty"]["symbols"] == 3
    # An empty cart still calls total_price, though never a helper.
    assert set(record["FAIL_TO_PASS"]) == PRICE_TESTS | {"tests/test_core.py::test_empty_cart"}
    assert "def _rate" not in record["problem_statement"]
    # Removing definitions may change any test: every stable test ran, collection was checked.
    assert record["verification"]["collection_checked"] is True
    # Every stable test on the original tree is what the baseline ran, `repeats` times in two
    # orders: the confirmation runs the task state only (`taskforge verify` below runs both).
    assert record["verification"]["tests_run"] == sorted(ALL_TESTS)
    assert [r["state"] for r in record["verification"]["runs"]] == ["task", "task"]


def test_remove_branch_fails_only_the_tests_of_its_branch(
        records: dict[tuple[str, str], dict]) -> None:
    record = one(records, "remove-branch", 'inv.core.format_price[if style == "short"]')
    assert record["FAIL_TO_PASS"] == ["tests/test_core.py::test_format_short"]
    assert record["verification"]["tests_run"] == ["tests/test_core.py::test_format_short"]
    assert 'the case `if style == "short"`' in record["problem_statement"]


def test_remove_function_and_remove_module(records: dict[tuple[str, str], dict]) -> None:
    helper = one(records, "remove-function", "inv.core._with_tax")
    assert set(helper["FAIL_TO_PASS"]) == PRICE_TESTS
    assert "-def _with_tax(amount, kind):" in helper["deletion_patch"]
    # Imported by the tests: re-declared as a bare stub so that collection still works.
    stubbed = one(records, "remove-function", "inv.units.to_grams")
    assert "+def to_grams(*args, **kwargs):" in stubbed["deletion_patch"]
    module = one(records, "remove-module", "inv.units.to_grams")
    assert module["FAIL_TO_PASS"] == ["tests/test_units.py::test_to_grams"]
    assert module["difficulty"]["score"] >= stubbed["difficulty"]["score"]


def test_class_strategies(records: dict[tuple[str, str], dict]) -> None:
    stubbed = one(records, "stub-class", "inv.core.Cart.add")
    assert set(stubbed["FAIL_TO_PASS"]) == {"tests/test_core.py::test_cart_total",
                                            "tests/test_core.py::test_empty_cart"}
    removed = one(records, "remove-method", "inv.core.Cart.add", symbols=1)
    assert removed["FAIL_TO_PASS"] == ["tests/test_core.py::test_cart_total"]
    both = one(records, "remove-method", "inv.core.Cart.total", symbols=2)
    assert [d["symbol"] for d in both["deleted"]] == ["inv.core.Cart.add", "inv.core.Cart.total"]


@pytest.mark.parametrize("strategy,deleted", [("feature-cluster", "inv.core.total_price"),
                                              ("remove-module", "inv.units.to_grams"),
                                              ("remove-method", "inv.core.Cart.total")])
def test_grading_removed_code(run: tuple[Summary, Path], tmp_path: Path, strategy: str,
                              deleted: str) -> None:
    instance_id = one(read_records(run[1]), strategy, deleted)["instance_id"]
    task = taskforge.load_tasks(run[1]).by_id(instance_id)
    workspace = task.materialize(tmp_path / "ws")
    # Tests that no longer import (the module is gone) are failures, not tampering: the
    # canaries planted in their files cannot run either.
    untouched = task.grade(workspace)
    assert (untouched.reward, untouched.tampered) == (0.0, ())
    apply_patch(workspace, task.record["patch"])
    result = task.grade(workspace)
    assert (result.reward, result.tampered) == (1.0, ()), result



def test_curriculum_generates_past_what_was_solved(run: tuple[Summary, Path], source: Path,
                                                   tmp_path: Path, tf_cache: Path) -> None:
    """Stats say the small single-symbol tasks are solved and the rest are not: the next
    run keeps only candidates beyond the solved frontier, with docstrings hidden."""
    records = read_records(run[1]).values()
    small = [r for r in records if r["difficulty"]["symbols"] == 1]
    frontier = max(structural(r["difficulty"]) for r in small)
    stats = tmp_path / "stats.jsonl"
    stats.write_text("".join(json.dumps({"instance_id": r["instance_id"],
                                         "solve_rate": 1.0 if r in small else 0.0}) + "\n"
                             for r in records))
    recipe = write_recipe(tmp_path / "harder.yaml", f"""\
        name: harder
        seed: 1
        sources:
          - path: {source}
        strategies: [feature-cluster, stub-class, remove-module]
        select: {{min_covering_tests: 1, min_body_lines: 2}}
        sandbox: none
    """)
    # The stats carry no difficulty: it comes from the records beside them.
    for record_file in run[1].glob("*"):
        if record_file.is_file():
            (tmp_path / record_file.name).write_bytes(record_file.read_bytes())
    summary = taskforge.generate(recipe, out=tmp_path / "out", cache=tf_cache,
                                 difficulty=f"harder-than={stats}")
    harder = read_records(tmp_path / "out").values()
    assert harder and summary.funnel["candidates"] == summary.funnel["tried"]
    for record in harder:
        assert structural(record["difficulty"]) > frontier
        assert record["difficulty"]["docstring_visible"] is False
        assert "Prices and carts." not in record["problem_statement"]


@pytest.mark.slow
def test_seven_strategies_with_a_small_cap_each_give_a_task(source: Path, tmp_path: Path,
                                                            tf_cache: Path) -> None:
    """Issue 17's 'done when': a recipe naming all seven strategies with a cap of seven
    candidates gets a verified task from every strategy (each has candidates here). Before
    the stratified order, the cap's seven places went to the strategies with the most
    candidates."""
    recipe = write_recipe(tmp_path / "seven.yaml", f"""\
        name: seven
        seed: 1
        sources:
          - path: {source}
        strategies: [stub-function, {", ".join(NEW_STRATEGIES)}]
        select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: 7}}
        task: {{keep_docstrings: true, statement: full}}
        verify: {{repeats: 2, timeout_s: 120}}
        sandbox: none
    """)
    summary = taskforge.generate(recipe, out=tmp_path / "out", cache=tf_cache, workers=2)
    records = read_records(tmp_path / "out")
    assert summary.funnel["tried"] == 7
    assert sorted(strategy for strategy, _ in records) == sorted(
        ["stub-function", *NEW_STRATEGIES])
    for record in records.values():
        assert record["FAIL_TO_PASS"]


def test_verify_passes_every_gate_for_every_strategy(run: tuple[Summary, Path],
                                                      records: dict[tuple[str, str], dict],
                                                      tmp_path: Path) -> None:
    """`taskforge verify` re-runs every gate (the trivial solutions derived from each
    strategy's deletion, collection, a fresh leak scan): no emitted task fails one."""
    proc = run_cli("verify", str(run[1]), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(records)} verified, 0 failed" in proc.stdout

"""A function most of the suite reaches is verified over every stable test, with the
baseline as its reference run: the whole suite `repeats` times, not its covering tests
twice and most of the suite once more on the original code (issue 18: "they should cost one
whole suite, not more"). Only the cost may change: the labels are the whole suite's."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

from taskforge.executors import LocalExecutor
from taskforge.languages.base import verification_tests
from taskforge.model import Baseline, Candidate


def candidate(covering: list[str]) -> Candidate:
    return Candidate(strategy="stub-function", path="m.py", symbol="m.f", kind="function",
                     start_line=1, end_line=2, body_lines=1, covering_tests=tuple(covering))


def baseline(durations: dict[str, float]) -> Baseline:
    tests = tuple(sorted(durations))
    return Baseline(key="k", tests=tests, stable=tests, flaky=(), failing=(),
                    run_seconds=(1.0,), durations=durations)


def test_most_of_the_suite_with_a_cheap_rest_runs_every_stable_test() -> None:
    slow = {f"t{i}": 0.5 for i in range(8)}
    suite = baseline({**slow, "u0": 0.01, "u1": 0.01})
    assert verification_tests(candidate(sorted(slow)), suite, 2) == suite.stable


def test_an_expensive_rest_keeps_the_covering_tests() -> None:
    """The rest runs `repeats` times where the reference would have run once: with the
    rest dearer than half the covering tests' reference, the covering tests stay."""
    fast = {f"t{i}": 0.01 for i in range(8)}
    suite = baseline({**fast, "u0": 0.5, "u1": 0.5})
    assert verification_tests(candidate(sorted(fast)), suite, 2) == tuple(sorted(fast))


def test_half_of_the_suite_or_less_keeps_the_covering_tests() -> None:
    """However cheap the rest: not most of the suite, not this path (its FAIL_TO_PASS, and so
    its reference run, may be small)."""
    slow = {f"t{i}": 5.0 for i in range(5)}
    suite = baseline({**slow, **{f"u{i}": 0.0 for i in range(5)}})
    assert verification_tests(candidate(sorted(slow)), suite, 2) == tuple(sorted(slow))


def test_instant_tests_are_weighed_by_their_counts() -> None:
    """Durations of a few microseconds are noise: every test costs at least a millisecond, so
    the same suite decides the same way whatever its baseline measured."""
    three_of_four = baseline({"a": 0.0, "b": 0.0, "c": 0.0, "u": 0.0})
    assert verification_tests(candidate(["a", "b", "c"]), three_of_four, 2) == ("a", "b", "c")
    nine = [f"t{i}" for i in range(9)]
    nine_of_ten = baseline({**{t: 0.0 for t in nine}, "u": 0.0})
    assert verification_tests(candidate(nine), nine_of_ten, 2) == nine_of_ten.stable
    assert verification_tests(candidate(nine), nine_of_ten, 5) == tuple(nine)  # 2 x 5 > 9


def test_every_stable_test_already_is_every_stable_test() -> None:
    suite = baseline({"a": 1.0, "b": 1.0})
    assert verification_tests(candidate(["a", "b"]), suite, 2) == ("a", "b")


# A lexer most tests reach and whose tests take a while; one test that does not use it.
FILES = {
    "pyproject.toml": setuptools_pyproject("lex", "0.1"),
    "lex/__init__.py": "",
    "lex/core.py": """\
        def tokens(text):
            words = text.split()
            lowered = [word.lower() for word in words]
            return lowered
        """,
    "lex/names.py": """\
        def shout(name):
            loud = name.upper()
            marked = loud + "!"
            return marked
        """,
    "tests/test_core.py": """\
        import time

        import pytest

        from lex.core import tokens


        @pytest.mark.parametrize("n", range(6))
        def test_tokens(n):
            assert tokens("A b " * n) == ["a", "b"] * n
            time.sleep(0.05)  # a test that takes its time, as a parser's do
        """,
    "tests/test_names.py": """\
        from lex.names import shout


        def test_shout():
            assert shout("a") == "A!"
        """,
}
SHOUT = "tests/test_names.py::test_shout"


@pytest.fixture(scope="module")
def lex(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    project = ingest_path_project(make_project(tmp_path_factory.mktemp("lex"), FILES), tf_cache)
    found = project.candidates
    # full_suite: each task is also labelled over the whole suite, and must agree
    verifier = project.verifier(full_suite=True)
    verdicts = verifier.screen([found["tokens"], found["shout"]], LocalExecutor(1))
    return project.source, project.strategy, verifier, found, verdicts


@pytest.mark.slow  # a real environment, baseline, screen and fresh runs
def test_a_function_most_tests_reach_runs_the_whole_suite_without_a_reference(lex) -> None:
    source, strategy, verifier, found, verdicts = lex
    stable = list(source.baseline.stable)
    tokens = found["tokens"]
    assert len(tokens.covering_tests) == 6 and SHOUT not in tokens.covering_tests
    verdict = verdicts[tokens.key]
    assert verdict.screened and not verdict.rejection
    assert verdict.reference_runs == 0  # the baseline is its reference
    record = verifier.make_task(strategy, tokens, verdict)
    assert record["verification"]["tests_run"] == stable
    assert [r["state"] for r in record["verification"]["runs"]] == ["task"]
    assert record["FAIL_TO_PASS"] == list(tokens.covering_tests)
    assert record["PASS_TO_PASS"] == [SHOUT]
    assert record["verification"]["audit"] == {"ran": True, "tests": 7, "disagreements": 0}
    assert record["difficulty"]["covering_tests"] == 6  # what reaches it, not what ran


@pytest.mark.slow
def test_a_function_few_tests_reach_keeps_its_covering_tests_and_reference(lex) -> None:
    """Positive control: the same screen and confirmation run the original code on the
    FAIL_TO_PASS of a candidate the rest of the suite would cost more to run."""
    _source, strategy, verifier, found, verdicts = lex
    shout = found["shout"]
    verdict = verdicts[shout.key]
    assert verdict.screened and not verdict.rejection
    assert verdict.reference_runs == 1
    record = verifier.make_task(strategy, shout, verdict)
    assert record["verification"]["tests_run"] == [SHOUT]
    assert record["FAIL_TO_PASS"] == [SHOUT]
    assert record["verification"]["audit"]["disagreements"] == 0

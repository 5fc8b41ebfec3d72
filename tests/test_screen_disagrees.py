"""When the fresh confirmation's FAIL_TO_PASS is not the screen's, the screen's model of the
candidate was wrong, and its labels are no evidence: the whole protocol runs in fresh
processes, and the task stands only if their FAIL_TO_PASS is the disagreeing run's.

The screen's forks run over the original tree with the stub swapped in memory, so a test
that reads its module's file sees the original there and the stub in a fresh run: a
disagreement every time, as sqlparse's `Lexer.set_SQL_REGEX` gave one (its forks share a
lexer their session built)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import count_calls, ingest_path_project, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.languages.base import Runner
from taskforge.languages.python import PythonLanguage
from taskforge.verify import confirm
from taskforge.verify.confirm import Verifier

pytestmark = pytest.mark.slow  # a real environment, baseline and screen

FILES = {
    "pyproject.toml": setuptools_pyproject("calc", "0.1"),
    "calc/__init__.py": "",
    "calc/ops.py": """\
        def answer():
            six = 6
            seven = 7
            return six * seven
        """,
    "calc/names.py": "def shout(name):\n    return name.upper()\n",
    # Three tests `answer` never runs, more than its two: its covering tests are its
    # verification's whatever the baseline's durations (`verification_tests` may take every
    # stable test, and the baseline as reference, for a function most of the suite reaches).
    "tests/test_names.py": """\
        from calc.names import shout


        def test_shout():
            assert shout("a") == "A"


        def test_shout_keeps_digits():
            assert shout("a1") == "A1"


        def test_shout_of_nothing():
            assert shout("") == ""
        """,
    "tests/test_ops.py": """\
        from pathlib import Path

        from calc import ops
        from calc.ops import answer


        def test_answer():
            assert answer() == 42


        def test_the_source_on_disk_is_whole():
            try:
                answer()
            except NotImplementedError:
                pass
            assert "NotImplementedError" not in Path(ops.__file__).read_text()
        """,
}
ANSWER = "tests/test_ops.py::test_answer"
SOURCE = "tests/test_ops.py::test_the_source_on_disk_is_whole"


@pytest.fixture(scope="module")
def screened(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    project = ingest_path_project(make_project(tmp_path_factory.mktemp("calc"), FILES), tf_cache)
    candidate, verifier = project.candidates["answer"], project.verifier()
    verdict = verifier.screen([candidate], LocalExecutor(1))[candidate.key]
    return verifier, project.strategy, candidate, verdict


def test_a_disagreeing_screen_gives_way_to_the_fresh_protocol(screened, monkeypatch) -> None:
    verifier, strategy, candidate, verdict = screened
    # The screen read the original file: only the call failed there.
    assert verdict.screened and not verdict.rejection
    assert verdict.fail_to_pass == (ANSWER,)
    started = count_calls(monkeypatch, Runner, "run")
    record = verifier.make_task(strategy, candidate, verdict)
    assert record["FAIL_TO_PASS"] == [ANSWER, SOURCE]  # the fresh runs' labels
    screen = record["verification"]["screen"]
    assert screen["disagreed"] is True and screen["screened"] is False
    assert screen["task_runs"] == 0 and screen["reference_runs"] == 0
    assert sorted(record["verification"]["tests_run"]) == [ANSWER, SOURCE]  # covering only
    runs = record["verification"]["runs"]
    assert [r["state"] for r in runs] == ["task", "task", "reference"]
    # The disagreeing run is the first of the task state's two: one more ran, not two (and
    # the trivial solutions, `pass` and `return None` one run as a whole body and each
    # constant its own, and the reference once, over FAIL_TO_PASS).
    assert len(started) == 1 + 1 + (len(PythonLanguage.null_bodies) - 1) + 1
    assert runs[-1]["passed"] == 2 and runs[-1]["not_passed"] == 0
    # the trivial solutions ran for real, and failed
    assert all(c["passed"] < c["of"] for c in record["verification"]["null_solutions"].values())


def test_fresh_runs_that_disagree_among_themselves_give_no_task(screened,
                                                                monkeypatch) -> None:
    """Positive control of the agreement check: a fallback whose FAIL_TO_PASS is not the
    disagreeing run's (here: made so) is rejected, as the screen's disagreement was before."""
    verifier, strategy, candidate, verdict = screened
    confirm_once = Verifier._confirm

    def other_labels(self, strategy_, candidate_, screened_, prior=()):
        record = confirm_once(self, strategy_, candidate_, screened_, prior)
        if not screened_.screened:
            record["FAIL_TO_PASS"] = [ANSWER]
        return record

    monkeypatch.setattr(confirm.Verifier, "_confirm", other_labels)
    with pytest.raises(Rejected) as rejected:
        verifier.make_task(strategy, candidate, verdict)
    assert rejected.value.reason == "screen-disagrees"
    assert "answer" in rejected.value.detail

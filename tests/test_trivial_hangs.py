"""A trivial solution cut off at verification's limit is undecided, not failed.

The attack: a test that a `pass` body satisfies, only slowly. `mark_ready` stubbed with
`pass` leaves the flag unset, and `wait_ready` waits for it until it gives up quietly, so the
test passes after WAIT seconds. The screen's limit for a job of quick tests is about 2 s,
below WAIT; a grader's is minutes. Scoring a trivial solution that was cut off as "passes
nothing" (the rule before) let such a candidate through as a task whose reward a `pass` body
earns. Now it is rejected (`timeout`), in the screen and in the confirmation's own run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_project

from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.ingest import ingest
from taskforge.languages.base import Runner
from taskforge.languages.python.testing import screen as screen_module
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.verify.confirm import Verifier
from taskforge.verify.gates import score_null_solution
from taskforge.workspace import scratch_copy

pytestmark = pytest.mark.slow  # a real environment, and waits of WAIT seconds

WAIT = 3.0
TEST = "tests/test_ready.py::test_ready_in_time"

FILES = {
    "ready/__init__.py": "",
    "ready/core.py": f"""\
        import time


        def mark_ready(state):
            state["ready"] = True
            return state


        def wait_ready(state, limit={WAIT}):
            deadline = time.monotonic() + limit
            while not state.get("ready") and time.monotonic() < deadline:
                time.sleep(0.01)
            return state.get("ready", False)
    """,
    "tests/test_ready.py": """\
        from ready.core import mark_ready, wait_ready


        def test_ready_in_time():
            state = {}
            mark_ready(state)
            wait_ready(state)  # gives up quietly: the test only fails if something raises
    """,
}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    tmp = tmp_path_factory.mktemp("hangs")
    root = make_project(tmp, FILES)
    return ingest(SourceSpec(kind="path", location=str(root)), cache=tf_cache, base_dir=tmp,
                  sandbox=get_sandbox("none"), repeats=2, timeout=300)


def mark_ready(source):
    strategy = source.language.strategy("stub-function")
    found = strategy.candidates(source.project, source.baseline, SelectOptions(min_body_lines=1))
    (candidate,) = [c for c in found if c.symbol == "ready.core.mark_ready"]
    return strategy, candidate


def trivial_workspace(source, strategy, candidate, cache: Path):
    """The original tree with `mark_ready`'s body replaced by `pass`, on disk."""
    deletion = strategy.apply(source.project, candidate, TaskOptions(), body="pass")
    workspace = scratch_copy(source.snapshot.root, cache)
    return deletion, workspace


def test_a_trivial_solution_the_screen_cuts_off_makes_no_task(source, tf_cache: Path,
                                                               monkeypatch) -> None:
    strategy, candidate = mark_ready(source)
    assert candidate.covering_tests == (TEST,)
    reported = []
    real_screen = screen_module.screen

    def recording(jobs, root, runner, **kwargs):
        found = real_screen(jobs, root, runner, **kwargs)
        reported.append(found)
        return found

    monkeypatch.setattr(screen_module, "screen", recording)
    box = get_sandbox("none")
    verifier = Verifier(source, box, tf_cache, 300.0, 2, TaskOptions())
    verdict = verifier.screen([candidate], LocalExecutor(1))[candidate.key]
    # The task state fails at once and the original passes: only the trivial solution hangs.
    # (Its one test is every stable test, so the baseline's runs are its reference: the
    # screen runs no original-code job, `verification_tests`.)
    results = {job_id.split("\0")[1]: r for found in reported for job_id, r in found.items()}
    assert not results["raise"].unscreenable and results["raise"].runs[0][TEST] != "passed"
    assert "original" not in results and source.baseline.stable == (TEST,)
    assert results[screen_module.SCREENED_NULL].timed_out
    # The seconds it hung are its own (its tests ran them), not the session's to share out:
    # shared, the two jobs would get about the same (cachetools' overhead read 0.62x so).
    hung, failed = results[screen_module.SCREENED_NULL], results["raise"]
    assert hung.pytest_seconds > failed.pytest_seconds + 1.0
    assert verdict.rejection is not None and verdict.rejection.reason == "timeout"
    assert "trivial solution" in str(verdict.rejection)
    # Positive control: the rule before ("a trivial solution that hangs passes nothing")
    # would have kept it, and yet the real trivial solution passes under a grader's limit.
    deletion, workspace = trivial_workspace(source, strategy, candidate, tf_cache)
    with workspace as root:
        for path, text in deletion.new_texts.items():
            (root / path).write_text(text)
        run = Runner(source.language, source.env, box, 120.0, cache=tf_cache).run(
            root, select=[TEST])
    assert not run.timed_out and run.outcomes[TEST] == "passed"


def test_a_trivial_solution_the_confirmation_cuts_off_makes_no_task(source, tf_cache: Path
                                                                    ) -> None:
    strategy, candidate = mark_ready(source)
    box = get_sandbox("none")
    deletion, workspace = trivial_workspace(source, strategy, candidate, tf_cache)
    with workspace as root:
        for path, text in deletion.new_texts.items():
            (root / path).write_text(text)
        short = Runner(source.language, source.env, box, WAIT - 1.5, cache=tf_cache)
        with pytest.raises(Rejected) as rejected:
            score_null_solution(root, [TEST], short)
        # Positive control: under a grader's limit the same trivial solution passes.
        long = Runner(source.language, source.env, box, 120.0, cache=tf_cache)
        assert score_null_solution(root, [TEST], long) == {"passed": 1, "of": 1}
    assert rejected.value.reason == "timeout"

"""The reference run: a task's FAIL_TO_PASS tests must pass on the original code when they
run as the task runs them (its covering tests, not the whole suite), or the reference
solution itself would fail them.

Here `test_c` passes in every whole-suite run (the baseline's, in both orders): `test_b`
empties the list `test_a` fills, or `test_c` runs first. Over `double`'s covering tests
(`test_a` and `test_c`; `test_b` never calls it) nothing empties it: `test_c` fails with the
feature deleted and with it restored alike. The state watch cannot see it (the list changes
in place), so only the reference run tells: the fresh protocol runs FAIL_TO_PASS once on the
original code, as the screen does, and both reject the candidate. Without that run (the
positive control) the labels hold `test_c`, which a whole-suite audit contradicts, and a
record made so passes a re-verification that runs no reference.

The order is the task state's, collection order, on the screen too: `tests/test_order.py`
defines `test_z_fills` (fills `order.log`), `test_m_empties` (empties it) and then
`test_a_finds_it_empty`. Over `halve`'s covering tests in collection order (z, a) the
original code fails `test_a_finds_it_empty`; in node-id order (a, z) it passes both, so a
screen that ran a job's tests as listed (sorted node ids) passed a reference that fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.languages.base import NOT_SCREENED, Runner
from taskforge.languages.python.testing import screen as screen_module
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.python.testing.screen import ScreenJob, screen
from taskforge.verify import confirm, protocol, reverify
from taskforge.workspace import scratch_copy

pytestmark = pytest.mark.slow  # a real environment, baseline, screen and confirmation runs

FILES = {
    "pyproject.toml": setuptools_pyproject("reg", "0.1"),
    "reg/__init__.py": "",
    "reg/core.py": """\
        items = []


        def double(value):
            if value == 0:
                return 0
            return value + value


        def triple(value):
            return value * 3
        """,
    "tests/test_core.py": """\
        import time

        from reg import core


        def test_a():
            core.items.append(1)
            time.sleep(0.05)  # slower than test_c: the quickest-first order runs test_c first
            assert core.double(2) == 4


        def test_b():
            core.items.clear()
            assert core.triple(1) == 3


        def test_c():
            try:
                core.double(0)
            except NotImplementedError:
                pass
            assert core.items == []
        """,
    "reg/order.py": """\
        log = []


        def halve(value):
            if value % 2:
                raise ValueError(value)
            return value // 2
        """,
    "tests/test_order.py": """\
        from reg import core, order


        def test_z_fills():
            order.log.append(1)
            assert order.halve(4) == 2


        def test_m_empties():
            order.log.clear()
            assert core.triple(2) == 6


        def test_a_finds_it_empty():
            assert order.halve(8) == 4
            assert order.log == []
        """,
    "tests/test_more.py": """\
        from reg import core


        def test_triple_one():
            assert core.triple(1) == 3


        def test_triple_two():
            assert core.triple(2) == 6


        def test_triple_zero():
            assert core.triple(0) == 0


        def test_triple_negative():
            assert core.triple(-1) == -3
        """,
}
A, C = "tests/test_core.py::test_a", "tests/test_core.py::test_c"
Z_FILLS, A_FINDS = "tests/test_order.py::test_z_fills", "tests/test_order.py::test_a_finds_it_empty"


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    project = ingest_path_project(make_project(tmp_path_factory.mktemp("reg"), FILES), tf_cache)
    return (project.source, project.strategy, project.candidates["double"], project.verifier,
            project.candidates["halve"])


def without_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The naive protocol: labels from the task state alone (no reference run)."""
    label_tests = protocol.label_tests

    def unreferenced(*args, **kwargs):
        return label_tests(*args, **{**kwargs, "reference_repeats": 0})

    monkeypatch.setattr(confirm, "label_tests", unreferenced)
    monkeypatch.setattr(reverify, "label_tests", unreferenced)


def test_the_whole_suite_and_the_covering_tests_see_test_c_differently(reg) -> None:
    source, _strategy, candidate, _verifier, _halve = reg
    assert C in source.baseline.stable and A in source.baseline.stable
    assert set(candidate.covering_tests) == {A, C}


def test_the_fresh_protocol_runs_failing_tests_on_the_original_code(reg, monkeypatch) -> None:
    _source, strategy, candidate, verifier, _halve = reg
    selected: list[list[str]] = []
    run = Runner.run

    def recorded(self, workspace, **kwargs):
        selected.append(sorted(kwargs.get("select") or ()))
        return run(self, workspace, **kwargs)

    monkeypatch.setattr(Runner, "run", recorded)
    with pytest.raises(Rejected) as rejected:
        verifier().make_task(strategy, candidate, NOT_SCREENED)
    assert (rejected.value.reason, rejected.value.detail) == ("reference-fails", C)
    # the task state twice over the covering tests, then FAIL_TO_PASS once on the original
    assert selected == [[A, C], [A, C], [A, C]]


def test_the_screen_rejects_it_too(reg) -> None:
    """The screen's original-code job runs FAIL_TO_PASS in the task state's order (its
    trivial solution quickest first, where test_c comes before test_a)."""
    source, _strategy, candidate, verifier, _halve = reg
    durations = source.baseline.durations
    assert durations[C] < durations[A]
    verdict = verifier().screen([candidate], LocalExecutor(1))[candidate.key]
    assert verdict.rejection is not None
    assert (verdict.rejection.reason, verdict.rejection.detail) == ("reference-fails", C)


def test_in_the_quickest_first_order_the_original_passes(reg) -> None:
    """Positive control of the order: the original code over test_c then test_a (the
    trivial solution's order, which the screen's reference used before) passes both, while
    a screen job runs its tests in collection order however it lists them."""
    source, _strategy, _candidate, verifier, _halve = reg
    runner = verifier().runner
    assert run_in_order(source, runner, (C, A)) == {C: "passed", A: "passed"}
    jobs = [ScreenJob(id=name, modules=(), targets=(("reg/core.py", 4, "double"),),
                      body="original", tests=tests)
            for name, tests in (("quickest-first", (C, A)), ("task-order", (A, C)))]
    results = screen(jobs, source.snapshot.root, runner)
    assert [results[name].runs[0][C] for name in ("quickest-first", "task-order")] \
        == ["failed", "failed"]


def run_in_order(source, runner: Runner, tests: tuple[str, ...]) -> dict[str, str]:
    """One pytest run of the original tree over `tests` in the order given (pytest runs
    node ids named on its command line in that order)."""
    with scratch_copy(source.snapshot.root, runner.cache, prefix="order-") as workspace:
        run = run_tests(runner.env, workspace, runner.sandbox, timeout=120, extra_args=tests)
    return run.outcomes


def test_the_screen_runs_a_jobs_tests_in_collection_order(reg) -> None:
    """The task state fails both of `halve`'s covering tests in either order; the original
    code fails `test_a_finds_it_empty` in collection order (after `test_z_fills`), as the
    fresh protocol runs it, and the screen rejects the candidate as that protocol does."""
    _source, strategy, _candidate, verifier, halve = reg
    assert halve.covering_tests == (A_FINDS, Z_FILLS)  # node-id order: a before z
    verdict = verifier().screen([halve], LocalExecutor(1))[halve.key]
    assert verdict.rejection is not None
    assert (verdict.rejection.reason, verdict.rejection.detail) == ("reference-fails", A_FINDS)
    with pytest.raises(Rejected) as rejected:
        verifier().make_task(strategy, halve, NOT_SCREENED)
    assert (rejected.value.reason, rejected.value.detail) == ("reference-fails", A_FINDS)


def test_in_node_id_order_the_original_passes_both(reg) -> None:
    """Positive control: run as listed (a, then z) the original code passes both, so a
    screen running a job's tests in node-id order let this candidate through; in collection
    order (z, then a) it fails `test_a_finds_it_empty`."""
    source, _strategy, _candidate, verifier, _halve = reg
    runner = verifier().runner
    assert run_in_order(source, runner, (A_FINDS, Z_FILLS)) \
        == {A_FINDS: "passed", Z_FILLS: "passed"}
    assert run_in_order(source, runner, (Z_FILLS, A_FINDS))[A_FINDS] == "failed"


def test_without_the_reference_run_the_labels_hold_test_c(reg, monkeypatch) -> None:
    """Positive control: the task the reference run refuses, made and audited."""
    source, strategy, candidate, verifier, _halve = reg
    without_reference(monkeypatch)
    record = verifier().make_task(strategy, candidate, NOT_SCREENED)
    assert record["FAIL_TO_PASS"] == [A, C]
    # a whole-suite run says otherwise: test_c passes there
    with pytest.raises(Rejected) as rejected:
        verifier(full_suite=True).make_task(strategy, candidate, NOT_SCREENED)
    assert rejected.value.reason == "audit-disagrees"
    assert "test_c" in rejected.value.detail
    # re-verification without a reference run takes the record, with one it does not
    runner = verifier().runner
    assert reverify.reverify(record, source.snapshot.root, runner) == []
    monkeypatch.undo()
    problems = reverify.reverify(record, source.snapshot.root, runner)
    assert problems == [f"labels: fail with the reference: {[C]}"]


def test_the_servers_own_seconds_are_shared_once(reg, monkeypatch) -> None:
    """The server's session seconds beyond its children's (start-up, collection, forks)
    are shared out over the candidates' jobs once: a follow-up reports only what its own
    child ran, so the jobs' figures add up to the server's (the overhead the bench prints
    divides by them; with the share added to each follow-up too, the overhead read low)."""
    source, _strategy, _candidate, verifier, _halve = reg
    servers, sessions = [], []
    run_tests_of_screen = screen_module.run_tests

    def recording(*args, **kwargs):
        servers.append(run_tests_of_screen(*args, **kwargs))
        # the server's last line: its session's seconds (it writes no JUnit file)
        out = Path(kwargs["extra_env"]["TASKFORGE_SCREEN_OUT"]).read_text().splitlines()
        sessions.append(json.loads(out[-1])["session_seconds"])
        return servers[-1]

    monkeypatch.setattr(screen_module, "run_tests", recording)
    follow = ("double\0pass", "double\0original")
    job = ScreenJob(id="double\0raise", modules=("reg.core",),
                    targets=(("reg/core.py", 4, "double"),), body="raise", tests=(A, C),
                    then=tuple(zip(follow, ("pass", "original"), strict=True)), order=(C, A))
    results = screen([job], source.snapshot.root, verifier().runner)
    assert set(results) == {job.id, *follow}
    [server], [session] = servers, sessions
    assert 0 < session <= server.wall_seconds
    assert sum(r.pytest_seconds for r in results.values()) == pytest.approx(session)
    for job_id in follow:
        assert 0 < results[job_id].pytest_seconds <= results[job_id].wall_seconds

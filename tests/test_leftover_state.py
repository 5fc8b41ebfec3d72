"""A test that fails half-way may skip its own clean-up and leave module state that a later
test of the suite reads: in a whole-suite run that later test fails too, though it never runs
the deleted code, so the whole suite's FAIL_TO_PASS holds it and the covering tests' does not
(attrs 26.1.0's `setters.validate`: `test_validate_respects_run_validators_config` sets
`_run_validators` to False, the stub raises before it is set back, and
`TestDisableValidators::test_default` fails). The confirmation run watches the state each
failing test leaves (pytest_plugin/taskforge_state.py); what no baseline test leaves changed
sends the candidate to be labelled on every stable test, as the whole suite labels it.

Here `check` is that candidate: `test_check_respects_config` switches `config.enabled` off and
never back on once `check` raises; `test_zconfig.py::test_enabled_by_default` runs after it.
`double`'s failing test leaves `config.made` changed, as every passing test that makes a
`Thing` does in the baseline, and binds `extra` on `gate` by importing it, which a whole-suite
run did while collecting `test_zconfig.py`: no sign of anything, no whole suite."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import count_calls, ingest_path_project, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.languages.base import Runner
from taskforge.languages.python import PythonLanguage
from taskforge.verify import confirm
from taskforge.verify import reverify as reverify_module
from taskforge.verify.reverify import reverify

pytestmark = pytest.mark.slow  # a real environment, baseline, screen and confirmation runs

FILES = {
    "pyproject.toml": setuptools_pyproject("gate", "0.1"),
    "gate/__init__.py": "",
    "gate/config.py": """\
        enabled = True
        made = 0
        """,
    "gate/core.py": """\
        from gate import config


        class Thing:
            def __init__(self):
                config.made += 1


        def check(value):
            if config.enabled and value < 0:
                raise ValueError(value)
            return value


        def double(value):
            if value == 0:
                return 0
            return value + value
        """,
    "tests/test_core.py": """\
        import pytest

        from gate import config, core


        def test_check_respects_config():
            config.enabled = False
            assert core.check(-1) == -1
            config.enabled = True


        def test_check_raises():
            with pytest.raises(ValueError):
                core.check(-1)


        def test_check_passes():
            assert core.check(2) == 2


        def test_double():
            import gate.extra  # binds `extra` on `gate` in a run that did not collect test_zconfig

            core.Thing()
            assert core.double(2) == gate.extra.FOUR


        def test_thing():
            core.Thing()
            assert config.made > 0
        """,
    "gate/extra.py": "FOUR = 4\n",
    "tests/test_zconfig.py": """\
        import gate.extra  # noqa: F401  (imported while collecting, in a whole-suite run)
        from gate import config


        def test_enabled_by_default():
            assert config.enabled is True
        """,
}
CORE = "tests/test_core.py::"
VICTIM = "tests/test_zconfig.py::test_enabled_by_default"


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    project = ingest_path_project(make_project(tmp_path_factory.mktemp("gate"), FILES), tf_cache)
    return project


def test_the_baseline_knows_what_its_own_tests_leave_changed(gate) -> None:
    source = gate.source
    assert "gate.config:made" in source.baseline.state_left  # Thing() in passing tests
    assert "gate.config:enabled" not in source.baseline.state_left  # always set back


def test_a_failing_test_that_leaves_state_gets_the_whole_suites_labels(gate,
                                                                     monkeypatch) -> None:
    started = count_calls(monkeypatch, Runner, "run")
    record = gate.task("check")
    assert record["FAIL_TO_PASS"] == sorted([
        CORE + "test_check_passes", CORE + "test_check_raises",
        CORE + "test_check_respects_config", VICTIM])
    verification = record["verification"]
    assert verification["leaves_state"] == ["gate.config:enabled"]
    assert sorted(verification["tests_run"]) == sorted(gate.source.baseline.stable)
    assert [r["state"] for r in verification["runs"]] == ["task", "task"]  # reference: baseline
    assert VICTIM not in record["PASS_TO_PASS"]
    # the watched confirmation, then the task state twice over every stable test, and the
    # trivial solutions (one run for `pass` and `return None`, which compile alike as a whole
    # body, and one for each constant)
    assert len(started) == 1 + 2 + len(PythonLanguage.null_bodies) - 1
    # the whole suite's method, in audit mode, agrees
    audited = gate.task("check", full_suite=True)
    assert audited["FAIL_TO_PASS"] == record["FAIL_TO_PASS"]
    assert audited["verification"]["audit"]["disagreements"] == 0


def test_without_the_watch_the_covering_tests_miss_the_later_failure(gate,
                                                                     monkeypatch) -> None:
    """Positive control: with the leftovers ignored, the covering tests' labels lack the
    later test, and the whole suite (audit mode) disagrees with them."""
    monkeypatch.setattr(confirm, "state_left_behind", lambda *args: [])
    record = gate.task("check")
    assert VICTIM not in record["FAIL_TO_PASS"] and VICTIM in record["PASS_TO_PASS"]
    assert record["verification"]["leaves_state"] == []
    with pytest.raises(Rejected) as rejected:
        gate.task("check", full_suite=True)
    assert rejected.value.reason == "audit-disagrees"
    assert VICTIM in rejected.value.detail


def test_state_the_suites_own_tests_leave_is_no_sign(gate, monkeypatch) -> None:
    record = gate.task("double")
    assert record["FAIL_TO_PASS"] == [CORE + "test_double"]
    assert record["verification"]["leaves_state"] == []
    assert record["verification"]["tests_run"] == [CORE + "test_double"]
    # Positive control: a baseline that knew nothing of `made` would send it to every
    # stable test.
    source = gate.source
    real = confirm.state_left_behind
    monkeypatch.setattr(confirm, "state_left_behind", lambda runs, failing, baseline: real(
        runs, failing, dataclasses.replace(baseline, state_left=())))
    widened = gate.task("double")
    assert widened["verification"]["leaves_state"] == ["gate.config:made"]
    assert sorted(widened["verification"]["tests_run"]) == sorted(source.baseline.stable)
    assert widened["FAIL_TO_PASS"] == record["FAIL_TO_PASS"]


def reverified(gate, record: dict) -> list[str]:
    source, verifier = gate.source, gate.verifier
    return reverify(record, source.snapshot.root, verifier().runner)


def test_taskforge_verify_finds_what_a_failing_test_leaves(gate, monkeypatch) -> None:
    """A record labelled on its covering tests though a FAIL_TO_PASS test leaves state a
    later test reads (as `generate` made it before the watch: here, the watch ignored) fails
    re-verification's labels gate, the state named."""
    with monkeypatch.context() as unwatched:
        unwatched.setattr(confirm, "state_left_behind", lambda *args: [])
        unwatched.setattr(confirm, "state_left_by", lambda *args: set())
        record = gate.task("check")
    assert VICTIM in record["PASS_TO_PASS"] and record["verification"]["state_usual"] == []
    assert reverified(gate, record) == [
        "labels: a FAIL_TO_PASS test left ['gate.config:enabled'] changed, which later tests "
        "of the suite may read: its labels need every stable test"]
    # Positive control: a re-verification that does not watch calls the record verified.
    monkeypatch.setattr(reverify_module, "state_left_by", lambda *args: set())
    assert reverified(gate, record) == []


def test_taskforge_verify_knows_the_usual_state_from_the_record(gate) -> None:
    record = gate.task("double")
    assert record["verification"]["state_usual"] == ["gate.config:made"]
    assert reverified(gate, record) == []
    # Positive control: a record without it (made before the watch) has the counter counted
    # against it (fail closed).
    old = {**record, "verification": {k: v for k, v in record["verification"].items()
                                      if k != "state_usual"}}
    assert reverified(gate, old) == [
        "labels: a FAIL_TO_PASS test left ['gate.config:made'] changed, which later tests "
        "of the suite may read: its labels need every stable test"]

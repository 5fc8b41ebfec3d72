"""The grader's own checks on their own: canaries planted and run by a real pytest, and the
integrity channel read the way the grader reads it (fail closed on anything it cannot trust).
The attacks that these checks defeat are in test_grade_tamper.py."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from taskforge.languages.python.grading.canaries import canary_findings, plant_canaries
from taskforge.languages.python.grading.integrity import CHANNEL_FILE, channel_findings, read_channel, sign
from taskforge.languages.python.testing.junit import parse_junit

TESTS = {
    "tests/test_parse.py": """\
        def test_parse_empty_input():
            assert [] == []


        def test_parse_nested_lists():
            assert [[1]] == [[1]]
    """,
    "tests/test_cases.py": """\
        import unittest


        class ParseCase(unittest.TestCase):
            def test_parse_single(self):
                self.assertEqual(1, 1)
    """,
}
EXPECTED = ["tests/test_parse.py::test_parse_empty_input",
            "tests/test_cases.py::ParseCase::test_parse_single"]


def write_tests(root: Path) -> None:
    for rel, text in TESTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))


def test_canaries_run_as_planted_and_are_drawn_afresh(tmp_path: Path) -> None:
    write_tests(tmp_path / "a")
    write_tests(tmp_path / "b")
    first = plant_canaries(tmp_path / "a", EXPECTED)
    second = plant_canaries(tmp_path / "b", EXPECTED)
    assert {c.expected for c in first} == {"passed", "failed", "error"}
    assert not {c.node_id for c in first} & {c.node_id for c in second}
    # One appended to each test file (the unittest one gets a TestCase), one new module.
    files = {c.node_id.split("::")[0] for c in first}
    assert {"tests/test_parse.py", "tests/test_cases.py"} < files and len(files) == 3
    assert any(c.node_id.count("::") == 2 for c in first if c.node_id.startswith("tests/test_cases"))
    by_name = run_pytest(tmp_path / "a", sorted({c.node_id.split("::")[0] for c in first}))
    for canary in first:
        assert by_name[canary.node_id.rsplit("::", 1)[-1]] == canary.expected, canary
    # The project's own tests still pass next to them.
    assert by_name["test_parse_empty_input"] == by_name["test_parse_single"] == "passed"


def test_a_property_canary_only_where_the_tests_use_hypothesis(tmp_path: Path) -> None:
    """It must fail as planted, which needs hypothesis: only where the environment has it and
    a file of the graded tests imports it. (Run for real in test_grade_tamper.py, whose
    environment has hypothesis; this one's has not.)"""
    def planted(name: str, header: str, hypothesis: bool) -> list[str]:
        write_tests(tmp_path / name)
        path = tmp_path / name / "tests/test_parse.py"
        path.write_text(header + path.read_text())
        canaries = plant_canaries(tmp_path / name, EXPECTED, hypothesis=hypothesis)
        new = {c.node_id.split("::")[0] for c in canaries} - set(TESTS)
        return [line for rel in new for line in (tmp_path / name / rel).read_text().splitlines()
                if ".given(" in line]

    uses = "from hypothesis import given\n"
    assert len(planted("uses", uses, hypothesis=True)) == 1
    assert planted("not-installed", uses, hypothesis=False) == []
    assert planted("unused", "import hypothesisx\n# import hypothesis\n", hypothesis=True) == []


def run_pytest(root: Path, files: list[str]) -> dict[str, str]:
    """Outcome by test name of a real pytest run of `files` (given as the grader gives them)."""
    junit = root.parent / f"{root.name}-junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={junit}", *files], cwd=root, capture_output=True, timeout=120)
    outcomes, _, _ = parse_junit(junit)
    return {test_id.rsplit("::", 1)[-1].split(".")[-1]: o for test_id, o in outcomes.items()}


def test_canaries_follow_the_projects_test_naming(tmp_path: Path) -> None:
    """A project whose pytest collects `check_*` functions gets `check_*` canaries."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_functions = check_*\n")
    (tmp_path / "tests" / "checks.py").write_text("def check_sum_of_pairs():\n    assert 1\n")
    canaries = plant_canaries(tmp_path, ["tests/checks.py::check_sum_of_pairs"])
    assert all(c.node_id.split("::")[-1].startswith("check_") for c in canaries)
    by_name = run_pytest(tmp_path, sorted({c.node_id.split("::")[0] for c in canaries}))
    assert {c.node_id.rsplit("::", 1)[-1]: c.expected for c in canaries}.items() <= by_name.items()


def test_a_canary_reported_wrongly_or_not_at_all_disqualifies(tmp_path: Path) -> None:
    write_tests(tmp_path)
    canaries = plant_canaries(tmp_path, EXPECTED)
    truthful = {c.node_id: c.expected for c in canaries}
    seen = {c.node_id: None for c in canaries}
    assert canary_findings(canaries, truthful, seen) == []
    fail = next(c for c in canaries if c.expected == "failed")
    (finding,) = canary_findings(canaries, {**truthful, fail.node_id: "passed"}, seen)
    assert finding.message == f"canary {fail.node_id} expected failed, reported passed"
    assert finding.disqualifies
    # A must-error canary the runner never ran is not "error" (a missing test reads as one).
    error = next(c for c in canaries if c.expected == "error")
    unseen = {k: v for k, v in seen.items() if k != error.node_id}
    (finding,) = canary_findings(canaries, truthful, unseen)
    assert finding.message == f"canary {error.node_id} expected error, not reported"


def test_canaries_of_a_file_that_failed_to_import_are_left_out(tmp_path: Path) -> None:
    """A wrong solution that breaks a test module's import is not tampering."""
    write_tests(tmp_path)
    canaries = plant_canaries(tmp_path, EXPECTED)
    outcomes = {c.node_id: c.expected for c in canaries
                if not c.node_id.startswith("tests/test_parse.py::")}
    outcomes["<collect>::tests.test_parse"] = "error"
    seen = dict.fromkeys(outcomes)
    assert canary_findings(canaries, outcomes, seen) == []
    del outcomes["<collect>::tests.test_parse"]
    assert len(canary_findings(canaries, outcomes, seen)) == 3


KEY = b"k" * 32


def signed(*payloads: dict) -> bytes:
    lines = []
    for seq, payload in enumerate(payloads):
        body = json.dumps({**payload, "seq": seq}, sort_keys=True).encode()
        lines.append(body + b"\t" + sign(KEY, body))
    return b"".join(line + b"\n" for line in lines)


def channel_of(tmp_path: Path, data: bytes | None):
    if data is not None:
        (tmp_path / CHANNEL_FILE).write_bytes(data)
    return read_channel(tmp_path, KEY)


def test_a_whole_channel_is_read(tmp_path: Path) -> None:
    channel = channel_of(tmp_path, signed({"kind": "start"},
                                          {"kind": "test", "nodeid": "t::a", "raised": None},
                                          {"kind": "test", "nodeid": "t::b",
                                           "raised": "call: AssertionError"},
                                          {"kind": "problem", "message": "x was replaced"},
                                          {"kind": "end"}))
    assert channel.broken is None and channel.finished
    findings = channel_findings(channel, {"t::a": "passed", "t::b": "passed", "t::c": "passed"},
                                ["t::a", "t::b", "t::c"])
    assert [f.message for f in findings] == [
        "the test runner was tampered with: x was replaced",
        "the JUnit XML reports t::b passed, but it raised (call: AssertionError)",
        "the JUnit XML reports t::c passed, but the runner never ran it"]


def test_a_channel_that_cannot_be_trusted_fails_closed(tmp_path: Path) -> None:
    start, test, end = {"kind": "start"}, {"kind": "test", "nodeid": "t", "raised": None}, \
        {"kind": "end"}
    whole = signed(start, test, end)
    forged = whole.replace(b'"raised": null', b'"raised": "x"')
    cases = {
        None: "the integrity channel is missing (the observer never started)",
        signed(start, test): "the integrity channel was cut short (the observer never finished)",
        forged: "the integrity channel was forged or garbled (line 2)",
        whole + b"junk\n": "the integrity channel was forged or garbled (line 4)",
        b"".join(whole.splitlines(keepends=True)[i] for i in (0, 1, 1, 2)):
            "the integrity channel was forged or garbled (line 3)",  # a line replayed
        signed(start, test, end, test): "the integrity channel was forged or garbled (line 4)",
    }
    for number, (data, message) in enumerate(cases.items()):
        directory = tmp_path / str(number)
        directory.mkdir()
        channel = channel_of(directory, data)
        assert channel.broken == message, (data, channel)
        (finding,) = channel_findings(channel, {"t": "passed"}, ["t"])
        assert finding.disqualifies and finding.message == message


def test_canaries_are_never_written_through_a_link(tmp_path: Path) -> None:
    """The grader plants canaries outside the sandbox: a test file, or a test directory, that
    is a link (to a file outside the grading copy) gets none."""
    outside = tmp_path / "outside"
    write_tests(outside)
    before = {p: p.read_bytes() for p in outside.rglob("*.py")}
    copy = tmp_path / "copy"
    write_tests(copy)
    (copy / "tests" / "test_parse.py").unlink()
    (copy / "tests" / "test_parse.py").symlink_to(outside / "tests" / "test_parse.py")
    (copy / "more").symlink_to(outside / "tests")
    canaries = plant_canaries(copy, [*EXPECTED, "more/test_cases.py::ParseCase::test_parse_single"])
    assert {p: p.read_bytes() for p in outside.rglob("*.py")} == before
    assert canaries and all(c.node_id.startswith("tests/test_") for c in canaries)
    assert not any(c.node_id.startswith("tests/test_parse.py::") for c in canaries)

"""A task whose deleted code the repository still holds verbatim elsewhere is no task.

Found by a red team in session 43 on boltons: `urlutils.py` carries a copy of dictutils'
OrderedMultiDict, so deleting one of its methods left every deleted line in the workspace. A
line found anywhere in the remaining tree is no fingerprint (`fingerprint_deletion`), so the
scan had nothing to look for, called the workspace clean, and the copy pasted back scored
1.0. Now `Fingerprints.copied` names such a copy and the scan's gate rejects the candidate
(`leak:copy-in-tree`), in `generate` and in `taskforge verify`.

Positive control: with that gate bypassed the same candidate becomes a task whose text
fingerprints are empty, whose leak scan is clean, and whose reference solution is the copy
in its own workspace.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import ingest_path_project, make_project, setuptools_pyproject

from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.materialize import materialize_record
from taskforge.patches import apply_patch
from taskforge.sanitize import fingerprint_record, scan_task_dir
from taskforge.sanitize.fingerprints import Copy, copied_in_tree, deleted_runs
from taskforge.verify import gates
from taskforge.verify.reverify import reverify

BODY = """\
    merged = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
"""

FILES = {
    "pyproject.toml": setuptools_pyproject("dup", "1.0"),
    "dup/__init__.py": "",
    "dup/core.py": f'''\
        def merge_ranges(ranges):
            """Merge overlapping (start, end) ranges."""
{textwrap.indent(BODY, " " * 8)}

        def total_length(ranges):
            """The length the ranges cover together."""
            covered = 0
            for start, end in merge_ranges(ranges):
                covered += end - start
            return covered
        ''',
    # A module that vendors its own copy, as boltons' urlutils does dictutils' class.
    "dup/vendored.py": f'''\
        """What follows is merge_ranges from core.py, kept here to avoid an import cycle."""


        def _merge_ranges(ranges):
{textwrap.indent(BODY, " " * 8)}
        ''',
    "tests/__init__.py": "",
    "tests/test_core.py": """\
        from dup.core import merge_ranges, total_length


        def test_merge_overlapping():
            assert merge_ranges([(5, 8), (1, 3), (2, 4)]) == [(1, 4), (5, 8)]


        def test_merge_nothing():
            assert merge_ranges([]) == []


        def test_total_length():
            assert total_length([(1, 3), (2, 4)]) == 3
        """,
    "tests/test_vendored.py": """\
        from dup.vendored import _merge_ranges


        def test_vendored_copy():
            assert _merge_ranges([(1, 2), (2, 5)]) == [(1, 5)]
        """,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    return ingest_path_project(make_project(tmp_path_factory.mktemp("dup"), FILES), tf_cache)


def make_task(project, name: str) -> dict:
    verifier = project.verifier()
    candidate = project.candidates[name]
    verdict = verifier.screen([candidate], LocalExecutor(1))[candidate.key]
    assert verdict.screened and not verdict.rejection
    return verifier.make_task(project.strategy, candidate, verdict)


def test_a_deletion_whose_body_is_vendored_elsewhere_is_rejected(project) -> None:
    with pytest.raises(Rejected) as rejected:
        make_task(project, "merge_ranges")
    assert rejected.value.reason == "leak:copy-in-tree"
    assert rejected.value.detail == "dup/vendored.py holds 7 of the 7 deleted lines, verbatim"
    # a deletion with no copy in the tree is a task as before
    assert make_task(project, "total_length")["FAIL_TO_PASS"] == [
        "tests/test_core.py::test_total_length"]


def test_without_the_gate_the_task_gives_its_answer_away(project, monkeypatch,
                                                         tmp_path: Path) -> None:
    """Positive control: the scan alone passes the task, and its answer is in its workspace."""
    monkeypatch.setattr(gates, "copy_gate", lambda fingerprints: None)
    record = make_task(project, "merge_ranges")
    root = project.source.snapshot.root
    fingerprints = fingerprint_record(record, root)
    summary = fingerprints.summary()
    assert summary["line"] == summary["block"] == 0  # every deleted line is found elsewhere
    assert fingerprints.copied == Copy("dup/vendored.py", 7, 7)
    workspace = tmp_path / "ws"
    materialize_record(record, root, workspace)
    assert scan_task_dir(record, workspace, root) == []  # the leak scan: clean
    # The answer, in the agent's workspace: the vendored body pasted over the stub passes
    # every FAIL_TO_PASS test.
    vendored = (workspace / "dup/vendored.py").read_text()
    copied = vendored.split("def _merge_ranges(ranges):\n", 1)[1].rstrip() + "\n"
    assert copied == BODY
    core = workspace / "dup/core.py"
    core.write_text(core.read_text().replace("    raise NotImplementedError\n", copied, 1))
    apply_patch(workspace, record["test_patch"])
    run = project.verifier().runner.run(workspace, select=record["FAIL_TO_PASS"])
    assert {run.outcomes[t] for t in record["FAIL_TO_PASS"]} == {"passed"}, run.outcomes
    # and `taskforge verify` names it, gate in place
    monkeypatch.undo()
    problems = reverify(record, root, project.verifier().runner)
    assert problems == ["leak-scan: leak:copy-in-tree: dup/vendored.py holds 7 of the 7 "
                        "deleted lines, verbatim"], problems


STUB = '    """Doc."""\n    raise NotImplementedError\n'


def test_siblings_that_share_some_lines_are_no_copy() -> None:
    body = ("    total = 0\n    for item in items:\n        total += item.weight\n"
            "    if total > limit:\n        raise ValueError(total)\n    return total\n")
    sibling = ("    total = 0\n    for item in items:\n        total += item.price\n"
               "    if total > limit:\n        raise ValueError(total)\n    return total\n")
    original = f'def weigh(items, limit):\n    """Doc."""\n{body}'
    task = f"def weigh(items, limit):\n{STUB}"
    runs = deleted_runs(original, task)
    # the sibling shares 3 of 6 lines, never 5 in a row: no copy
    assert copied_in_tree(runs, {"a.py": task, "b.py": f"def price(items, limit):\n{sibling}"}) is None
    # the same body in another function of the same file is one
    same = f"def weigh(items, limit):\n{STUB}\n\ndef weigh_again(items, limit):\n{body}"
    assert copied_in_tree(runs, {"a.py": same}) == Copy("a.py", 6, 6)
    # reindented (a method's copy as a function) is still a copy
    method = "class Scale:\n    def weigh(self, items, limit):\n" + textwrap.indent(body, "    ")
    assert copied_in_tree(runs, {"a.py": task, "c.py": method}) == Copy("c.py", 6, 6)


def test_a_short_body_is_too_short_to_call_a_copy() -> None:
    original = 'def name(self):\n    """Doc."""\n    return self._name\n'
    task = 'def name(self):\n    """Doc."""\n    raise NotImplementedError\n'
    runs = deleted_runs(original, task)
    other = "def label(self):\n    return self._name\n"
    assert copied_in_tree(runs, {"a.py": task, "b.py": other}) is None

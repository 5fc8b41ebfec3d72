"""A screened candidate's leak scan and confirmation share one workspace: the agent's,
scanned first, then given `test_patch` as a grader gives it. The record must be the one
that two workspaces gave (the confirmation on the source-only deletion, the scan on a fresh
agent's copy afterwards), which is still the path of a candidate the screen did not model.

The fingerprints are the part that could silently change: they are taken against the task
tree, and the agent's workspace lacks its hidden tests. A name the deleted body shares with
a hidden test is no fingerprint; forgetting those files makes it one, and the scan then
finds it at every call site.
"""

from __future__ import annotations

import ast
import contextlib
import html
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, make_project

from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.ingest import ingest
from taskforge.languages.base import NOT_SCREENED
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import SourceSpec
from taskforge.patches import created_files, diff_texts
from taskforge.sandbox import get_sandbox
from taskforge.sanitize import PendingScan, changed_paths, fingerprint_workspace, read_tree
from taskforge.sanitize.envindex import TreeIndex, tree_index
from taskforge.verify import confirm as confirm_module
from taskforge.verify import reverify as reverify_module
from taskforge.verify.confirm import Verifier, run_timeout
from taskforge.verify.gates import restore_tests
from taskforge.verify.reverify import reverify

pytestmark = pytest.mark.slow  # real suites, each candidate verified twice

# What a record is: everything but timings, run logs and how it was verified.
SAME = ("instance_id", "deletion_patch", "patch", "test_patch", "FAIL_TO_PASS",
        "PASS_TO_PASS", "problem_statement", "sanitizer", "difficulty")


def outcome(verifier: Verifier, candidate, screened) -> tuple:
    strategy = verifier.source.language.strategy(candidate.strategy)
    try:
        record = verifier.make_task(strategy, candidate, screened)
    except Rejected as rejected:
        return ("rejected", rejected.reason)
    sanitizer = {k: v for k, v in record["sanitizer"].items() if k != "stats"}
    return tuple((field, sanitizer if field == "sanitizer" else record[field]) for field in SAME)


@pytest.fixture(scope="module")
def textkit(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path):
    return ingest(SourceSpec(kind="path", location=str(REPO_ROOT / "sample_repos/textkit")),
                  cache=tf_cache, base_dir=tmp_path_factory.mktemp("textkit"),
                  sandbox=get_sandbox("none"), repeats=2, timeout=300)


def screened_textkit(textkit, tf_cache: Path, tests_visible: bool) -> tuple:
    """A verifier of textkit's first ten stub-function candidates, and its screen's verdicts."""
    strategy = textkit.language.strategy("stub-function")
    found = strategy.candidates(textkit.project, textkit.baseline, SelectOptions())[:10]
    verifier = Verifier(textkit, get_sandbox("none"), tf_cache, run_timeout(textkit, 300), 2,
                        TaskOptions(tests_visible=tests_visible))
    return verifier, found, verifier.screen(found, LocalExecutor(1))


@pytest.mark.parametrize("tests_visible", [False, True], ids=["hidden-tests", "visible-tests"])
def test_one_workspace_gives_the_record_two_gave(textkit, tf_cache: Path,
                                                 tests_visible: bool) -> None:
    verifier, found, verdicts = screened_textkit(textkit, tf_cache, tests_visible)
    tasks = 0
    for candidate in found:
        screened = verdicts[candidate.key]
        if not screened.screened or screened.rejection:
            continue
        one = outcome(verifier, candidate, screened)
        two = outcome(verifier, candidate, NOT_SCREENED)
        assert one == two, candidate.symbol
        tasks += one[0] != "rejected"
        if not tests_visible and one[0] != "rejected":
            assert dict(one)["test_patch"]  # the hidden tests were part of it
    assert tasks >= 5


def test_hidden_tests_are_part_of_the_tree_fingerprints_are_taken_against(textkit,
                                                                          tmp_path: Path
                                                                          ) -> None:
    """Positive control for the fingerprints: a name the deleted code shares only with a
    hidden test file is no fingerprint when that file is counted, and one when forgotten."""
    root = textkit.snapshot.root
    path, hidden = "textkit/wrap.py", "tests/test_wrap.py"
    name = re.search(r"def (test_\w+)", (root / hidden).read_text()).group(1)
    assert [p for p, data in read_tree(root).items() if name.encode() in data] == [hidden]
    # The deleted code: a helper that names it, gone from the workspace's copy of wrap.py.
    original = (root / path).read_text() + f"\n\ndef _helper():\n    return {name}\n"
    workspace = tmp_path / "ws"
    shutil.copytree(root, workspace)
    (workspace / hidden).unlink()
    counted = fingerprint_workspace(workspace, {path: original}, lacking=[hidden],
                                    lacking_from=root)
    forgotten = fingerprint_workspace(workspace, {path: original})
    shutil.copy2(root / hidden, workspace / hidden)
    assert counted == fingerprint_workspace(workspace, {path: original})
    assert name not in {f.text for f in counted.texts}
    assert name in {f.text for f in forgotten.texts}


def test_a_test_patch_that_does_not_give_back_the_tests_is_rejected(textkit,
                                                                    tmp_path: Path) -> None:
    root = textkit.snapshot.root
    hidden = "tests/test_wrap.py"
    text = (root / hidden).read_text()
    workspace = tmp_path / "ws"
    shutil.copytree(root, workspace)
    (workspace / hidden).unlink()
    faithful = diff_texts({hidden: (None, text)})
    restore_tests(workspace, faithful, root)
    (workspace / hidden).unlink()
    altered = diff_texts({hidden: (None, text.replace("assert", "assert True or", 1))})
    with pytest.raises(Rejected) as rejected:
        restore_tests(workspace, altered, root)
    assert rejected.value.reason == "test-patch-does-not-restore"
    # Named after another file, the section still creates the altered test (positive control).
    (workspace / hidden).unlink()
    assert created_files(disguised(altered)) == [hidden]
    by_a_names(workspace, disguised(altered), root)
    assert "assert True or" in (workspace / hidden).read_text()
    (workspace / hidden).unlink()
    with pytest.raises(Rejected) as rejected:
        restore_tests(workspace, disguised(altered), root)
    assert rejected.value.reason == "test-patch-does-not-restore"
    assert not (workspace / hidden).exists(), "refused before anything was written"



def weakened(record: dict, root: Path) -> str:
    """`record`'s test_patch with the asserts of one hidden test that verification did not
    run made vacuous: a PASS_TO_PASS test any solution now passes, which the labels (run on
    `tests_run`) never look at."""
    ran = set(record["verification"]["tests_run"])
    for path in created_files(record["test_patch"]):
        text = (root / path).read_text()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test") \
                    and f"{path}::{node.name}" not in ran \
                    and f"{path}::{node.name}" in record["PASS_TO_PASS"]:
                lines = text.splitlines(keepends=True)
                for i in range(node.lineno - 1, node.end_lineno):
                    lines[i] = lines[i].replace("assert ", "assert True or ")
                if "".join(lines) == text:
                    continue  # no bare assert to weaken in this one
                return record["test_patch"].replace(
                    diff_texts({path: (None, text)}), diff_texts({path: (None, "".join(lines))}))
    raise AssertionError("no hidden PASS_TO_PASS test outside tests_run")


def disguised(test_patch: str) -> str:
    """`test_patch` with its first section named after another file on the `a/` side of its
    `diff --git` line: `git apply` still creates the `b/` file, from the section's lines."""
    path = created_files(test_patch)[0]
    return test_patch.replace(f"diff --git a/{path} b/{path}", f"diff --git a/README.md b/{path}", 1)


def by_a_names(workspace: Path, test_patch: str, root: Path) -> None:
    """The check before: the files named on the `a/` side had to be the snapshot's."""
    reverify_module.apply_patch(workspace, test_patch)
    for path in changed_paths(test_patch):
        if (workspace / path).read_bytes() != (root / path).read_bytes():
            raise Rejected("test-patch-does-not-restore", path)


def test_verify_reports_a_test_patch_that_does_not_give_back_the_tests(
        textkit, tf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`taskforge verify` of a record whose test_patch weakens a hidden test verification did
    not run: the labels alone pass it (the positive control: a verify that only applies the
    patch); the byte-for-byte check names it under the gates that run those tests."""
    verifier, found, verdicts = screened_textkit(textkit, tf_cache, tests_visible=False)
    strategy = textkit.language.strategy("stub-function")
    root = textkit.snapshot.root
    runner = verifier.runner
    for candidate in found:
        if verdicts[candidate.key].rejection:
            continue
        try:
            record = verifier.make_task(strategy, candidate, verdicts[candidate.key])
        except Rejected:
            continue
        if any(t not in record["verification"]["tests_run"] for t in record["PASS_TO_PASS"]
               if t.split("::")[0] in created_files(record["test_patch"])):
            break
    else:
        raise AssertionError("no task with a hidden test verification did not run")
    # Genuine, it verifies; its verification runs get the snapshot's bytecode as generate's
    # do, only after the scan (which must see none), and never for a file the deletion
    # touched, unless test_patch gave it back byte for byte (the hidden tests).
    language = type(textkit.language)
    set_up, scan = language.set_up_workspace, reverify_module.begin_scan_gate
    seeded: list[tuple[set[str], int]] = []  # (changed, bytecode files then in the workspace)
    scanned: list[int] = []  # bytecode files in the workspace when the scan read it

    def spy_set_up(self, workspace: Path, snapshot, changed, runner) -> None:
        set_up(self, workspace, snapshot, changed, runner)
        seeded.append((set(changed), len(list(workspace.rglob("*.pyc")))))

    def spy_scan(workspace: Path, *rest):
        scanned.append(len(list(workspace.rglob("*.pyc"))))
        return scan(workspace, *rest)

    with monkeypatch.context() as spy:
        spy.setattr(language, "set_up_workspace", spy_set_up)
        spy.setattr(reverify_module, "begin_scan_gate", spy_scan)
        assert reverify(record, root, runner) == []
    hidden = set(created_files(record["test_patch"]))
    sources = set(changed_paths(record["patch"]))
    assert scanned == [0]
    assert [changed for changed, _pyc in seeded] == [sources] + [sources | hidden] * 2
    assert all(pyc > 0 for _changed, pyc in seeded)
    tampered = {**record, "test_patch": weakened(record, root)}
    with monkeypatch.context() as naive:
        naive.setattr(reverify_module, "restore_tests",
                      lambda ws, patch, _root: reverify_module.apply_patch(ws, patch))
        assert reverify(tampered, root, runner) == []  # fooled
    problems = reverify(tampered, root, runner)
    assert [p.split(":")[0] for p in problems] == ["labels", "collection-breaks"], problems
    assert all("test-patch-does-not-restore" in p for p in problems), problems
    # The same weakening, its section named after README.md on the `a/` side: a check by those
    # names is fooled; the check of what the patch creates is not.
    hidden = {**record, "test_patch": disguised(tampered["test_patch"])}
    with monkeypatch.context() as naive:
        naive.setattr(reverify_module, "restore_tests", by_a_names)
        assert reverify(hidden, root, runner) == []  # fooled
    problems = reverify(hidden, root, runner)
    assert [p.split(":")[0] for p in problems] == ["labels", "collection-breaks"], problems
    assert all("test-patch-does-not-restore" in p for p in problems), problems


def screened_one(root: Path, symbol: str, tmp_path: Path, tf_cache: Path) -> tuple:
    """A verifier of the project at `root`, its stub-function strategy, the candidate that
    deletes `symbol`, and the screen's verdict on it."""
    box = get_sandbox("none")
    source = ingest(SourceSpec(kind="path", location=str(root)), cache=tf_cache,
                    base_dir=tmp_path, sandbox=box, repeats=2, timeout=300)
    strategy = source.language.strategy("stub-function")
    (candidate,) = [c for c in strategy.candidates(source.project, source.baseline,
                                                   SelectOptions(min_body_lines=1))
                    if c.symbol == symbol]
    verifier = Verifier(source, box, tf_cache, run_timeout(source, 300), 2, TaskOptions())
    return verifier, strategy, candidate, verifier.screen([candidate],
                                                          LocalExecutor(1))[candidate.key]


def test_a_workspace_the_scan_took_files_from_runs_its_reference_again(
        tmp_path: Path, tf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan removes a copy of the deleted code that the snapshot holds where a rule
    names rendered docs (Sphinx's `_modules` pages). The confirmation then runs on a tree
    without it, which the baseline never ran: so it runs the reference state too, where a
    screened candidate otherwise skips it (the screen ran it on the original tree)."""
    core = '''\
def scale(values, factor):
    label = "scaled-by-factor-7f3a"
    result = []
    for value in values:
        result.append((label, value * factor))
    return [pair[1] for pair in result]
'''
    root = make_project(tmp_path, {
        "calc/__init__.py": "",
        "calc/core.py": core,
        # rendered docs committed by mistake, with the module's source
        "docs/html/_static/basic.css": "body {}\n",
        "docs/html/_modules/calc/core.html":
            f"<html><body><pre>{html.escape(core)}</pre></body></html>\n",
        "tests/test_core.py": "from calc.core import scale\n\n\n"
                              "def test_scale():\n    assert scale([1, 2], 3) == [3, 6]\n",
        # a test that does not reach it: its covering tests are a subset of the suite, so the
        # screen runs its reference (over every stable test the baseline is that run)
        "tests/test_other.py": "def test_other():\n    assert sum([1, 2]) == 3\n",
    })
    verifier, strategy, candidate, screened = screened_one(root, "calc.core.scale", tmp_path,
                                                           tf_cache)
    assert screened.screened and screened.reference_runs > 0 and not screened.rejection
    record = verifier.make_task(strategy, candidate, screened)
    assert record["sanitizer"]["artifacts_removed"].get("leak-scan") == [
        "docs/html/_modules/calc/core.html"], record["sanitizer"]
    states = [run["state"] for run in record["verification"]["runs"]]
    assert states.count("task") == 1 and states.count("reference") >= 1
    # `taskforge verify` removes it again (the record names it): one pass, the environment
    # searched meanwhile. A record that does not name it has the scan remove it after the
    # runs: verify starts over with the scan first, and finds nothing wrong either way.
    passes: list[bool] = []
    verify_pass = reverify_module._reverify

    def counted(*args, scan_meanwhile: bool):
        passes.append(scan_meanwhile)
        return verify_pass(*args, scan_meanwhile=scan_meanwhile)

    monkeypatch.setattr(reverify_module, "_reverify", counted)
    root, runner = verifier.source.snapshot.root, verifier.runner
    assert reverify(record, root, runner) == [] and passes == [True]
    sanitizer = record["sanitizer"]
    unnamed = {**record, "sanitizer": {**sanitizer, "artifacts_removed": {
        k: v for k, v in sanitizer["artifacts_removed"].items() if k != "leak-scan"}}}
    assert reverify(unnamed, root, runner) == [] and passes == [True, True, False]


def test_the_environment_searched_while_the_tests_run_still_rejects(tmp_path: Path,
                                                                   tf_cache: Path,
                                                                   monkeypatch) -> None:
    """A screened candidate's leak scan searches the environment while its confirmation
    runs; a copy of the deleted function in site-packages must still reject the task."""
    core = f'''\
def blend(values, weight):
    tag = "blend-{tmp_path.name}"
    mixed = [(tag, value * weight) for value in values]
    return [pair[1] + weight for pair in mixed]
'''
    root = make_project(tmp_path, {
        "mix/__init__.py": "",
        "mix/core.py": core,
        "tests/test_core.py": "from mix.core import blend\n\n\n"
                              "def test_blend():\n    assert blend([1, 2], 3) == [6, 9]\n",
    })
    verifier, strategy, candidate, screened = screened_one(root, "mix.core.blend", tmp_path,
                                                           tf_cache)
    assert screened.screened and not screened.rejection
    (site,) = verifier.source.env.venv.glob("lib/python3*/site-packages")
    copy = site / f"vendored_{tmp_path.name}.py"
    copy.write_text(core)
    try:
        with pytest.raises(Rejected) as err:
            verifier.make_task(strategy, candidate, screened)
        assert err.value.reason == "leak:env" and copy.name in err.value.detail
        # Positive control: a confirmation that does not wait for the environment's search
        # (here: one that never makes it) emits the task.
        monkeypatch.setattr(PendingScan, "_search", lambda self: None)
        record = verifier.make_task(strategy, candidate, screened)
        assert record["FAIL_TO_PASS"] == ["tests/test_core.py::test_blend"]
    finally:
        copy.unlink()


class _RemotePool:
    """A local pool under another name: jobs that may run in other processes, whose
    indexes a search ahead in this one would not reach."""

    name = "remote"

    def __init__(self) -> None:
        self._local = LocalExecutor(1)
        self.workers = self._local.workers

    def map_unordered(self, fn, items, **kwargs):
        return self._local.map_unordered(fn, items, **kwargs)


@pytest.mark.parametrize("pool", ["local", "remote"])
def test_the_screen_searches_the_environment_ahead_of_the_tasks(
        textkit, tf_cache: Path, monkeypatch: pytest.MonkeyPatch, pool: str) -> None:
    """With the tasks confirmed in this process, every environment lookup their scans make
    was made while the screen ran (the fingerprints of the snapshot's tree with the deletion
    in place are the task workspace's); the positive control, a pool of other processes,
    leaves them to the scans."""
    strategy = textkit.language.strategy("stub-function")
    found = strategy.candidates(textkit.project, textkit.baseline, SelectOptions())[:10]
    verifier = Verifier(textkit, get_sandbox("none"), tf_cache, run_timeout(textkit, 300), 2,
                        TaskOptions())
    index = tree_index(textkit.env.venv)
    index._found.clear()  # what earlier tests of this module searched
    monkeypatch.setattr(confirm_module.os, "cpu_count", lambda: 4)  # a core the screen leaves
    verdicts = verifier.screen(found, LocalExecutor(1) if pool == "local" else _RemotePool())
    searched_ahead = set(index._found)
    missed: list[bytes] = []
    occurrences = TreeIndex.occurrences

    def noting(self, needle):
        if needle not in self._found:
            missed.append(needle)
        return occurrences(self, needle)

    monkeypatch.setattr(TreeIndex, "occurrences", noting)
    tasks = 0
    for candidate in found:
        if verdicts[candidate.key].rejection:
            continue
        with contextlib.suppress(Rejected):
            verifier.make_task(strategy, candidate, verdicts[candidate.key])
            tasks += 1
    assert tree_index(textkit.env.venv) is index  # the environment did not change
    assert tasks >= 5
    if pool == "local":
        assert searched_ahead and missed == []
    else:
        assert not searched_ahead and missed

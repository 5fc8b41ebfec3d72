"""Expectation copies under mocha, tape and jest (node's runner and vitest:
test_javascript_expectations.py). mocha and tape load every test file into one process: the
copies run in a grading run of their own, beside the one the reward comes from; jest runs each
file in a module registry of its own, and the copies run in the grading run.

The attack is test_javascript_expectations.py's stack reader (the deleted function answers
with the literal its calling test compares with). On a tape, a mocha and a jest project it
scores 1.0 under the naive grader and under the grade without checks, and 0 under `taskforge
grade` with the copy named. Why mocha's and tape's copies run on their own: in one process
a copy that calls the project again changes what a later file's tests see (`claim` below
closes its register when a name is claimed twice); planted in the grading run itself, as
under node's runner, the copy of `claims` closed it before `after.test.js` claimed another
name, and the honest reference scored 0 (the control, with the runner taken for one that
runs files apart)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from conftest import apply_patch, prepared_js_project, write_recipe
from naive_grader import naive_jest_reward, naive_mocha_reward, naive_tape_reward
from test_grade_tamper import grade_without_checks
from test_javascript_expectations import CJS_STACK_READER, stack_reading
from test_sandbox import require

import taskforge
from taskforge.languages.javascript.grading import expectations
from taskforge.languages.javascript.grading import run as grading_run
from taskforge.languages.javascript.runners import RUNNERS

pytestmark = pytest.mark.slow

SOURCE = r"""
    function slugify(text) {
      const words = String(text).toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
      return words.join('-');
    }

    function initials(name) {
      const parts = String(name).split(/\s+/).filter(Boolean);
      return parts.map((part) => part[0].toUpperCase()).join('');
    }

    // The names claimed so far, shared by every test file of the one process; a name claimed
    // twice closes the register for good.
    const claimed = new Set();
    let closed = false;

    function claim(name) {
      if (closed || claimed.has(name)) {
        closed = true;
        throw new Error(`cannot claim ${name}`);
      }
      claimed.add(name);
      return `claimed ${name}`;
    }

    // What the line calling it compares with: a call-site reader, as debugging libraries
    // have. Its own test passes a copy with any literal, on the original code too.
    function literalAtCall() {
      const frame = String(new Error().stack).split('\n')[2];
      const [, file, line] = frame.match(/(\/[^():]*):(\d+):\d+\)?$/);
      const text = require('node:fs').readFileSync(file, 'utf8').split('\n')[line - 1];
      return text.match(/'([^']*)'\);/)[1];
    }

    module.exports = { slugify, initials, claim, literalAtCall };
    """
PROJECTS = {
    "tape": {
        "package.json": json.dumps({"name": "tslug", "version": "1.0.0",
                                    "scripts": {"test": "tape 'test/**/*.js'"},
                                    "devDependencies": {"tape": "5.10.2"}}),
        "src/text.js": SOURCE,
        "test/text.test.js": """\
            var test = require('tape');
            var text = require('../src/text.js');

            test('slugify joins words', function (t) {
              t.equal(text.slugify('Hello World'), 'hello-world');
              t.end();
            });
            test('slugify drops symbols', function (t) {
              t.equal(text.slugify('a & b!'), 'a-b');
              t.end();
            });
            test('initials', function (t) {
              t.plan(1);
              t.equal(text.initials('ada lovelace'), 'AL');
            });
            test('reads its call site', function (t) {
              t.equal(text.literalAtCall(), 'here');
              t.end();
            });
            test('claims', function (t) {
              t.equal(text.claim('x'), 'claimed x');
              t.end();
            });
            """,
        "test/zz/after.test.js": """\
            var test = require('tape');
            var text = require('../../src/text.js');

            test('claims another', function (t) {
              t.equal(text.claim('y'), 'claimed y');
              t.end();
            });
            """,
    },
    "mocha": {
        "package.json": json.dumps({"name": "mslug", "version": "1.0.0",
                                    "scripts": {"test": "mocha"},
                                    "devDependencies": {"mocha": "10.7.3"}}),
        ".mocharc.yml": "spec: test\nrecursive: true\ntimeout: 5000\n",
        "src/text.js": SOURCE,
        "test/text.test.js": """\
            const assert = require('node:assert');
            const text = require('../src/text.js');

            describe('slugify', () => {
              it('joins words', () => { assert.equal(text.slugify('Hello World'), 'hello-world'); });
              it('drops symbols', () => { assert.strictEqual(text.slugify('a & b!'), 'a-b'); });
            });
            it('initials', function () { assert.equal(text.initials('ada lovelace'), 'AL'); });
            it('reads its call site', () => { assert.equal(text.literalAtCall(), 'here'); });
            it('claims', () => { assert.equal(text.claim('x'), 'claimed x'); });
            """,
        "test/zz/after.test.js": """\
            const assert = require('node:assert');
            const text = require('../../src/text.js');

            it('claims another', () => { assert.equal(text.claim('y'), 'claimed y'); });
            """,
    },
    "jest": {
        "package.json": json.dumps({"name": "jslug", "version": "1.0.0",
                                    "scripts": {"test": "jest"},
                                    "devDependencies": {"jest": "29.7.0"}}),
        "src/text.js": SOURCE,
        "test/text.test.js": """\
            const text = require('../src/text.js');

            describe('slugify', () => {
              test('joins words', () => { expect(text.slugify('Hello World')).toBe('hello-world'); });
              test('drops symbols', () => { expect(text.slugify('a & b!')).toEqual('a-b'); });
            });
            test('initials', () => { expect(text.initials('ada lovelace')).toBe('AL'); });
            test('reads its call site', () => { expect(text.literalAtCall()).toBe('here'); });
            test('claims', () => { expect(text.claim('x')).toBe('claimed x'); });
            """,
        "test/zz/after.test.js": """\
            const text = require('../../src/text.js');

            test('claims another', () => { expect(text.claim('y')).toBe('claimed y'); });
            """,
    },
}
SNAPSHOTS = {"tape": "ab", "mocha": "cd", "jest": "ef"}
NAIVE = {"tape": naive_tape_reward, "mocha": naive_mocha_reward, "jest": naive_jest_reward}


@pytest.fixture(scope="module", params=sorted(PROJECTS))
def tasks(request: pytest.FixtureRequest, tf_cache: Path,
          tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, taskforge.Task]]:
    """The project's stub-function tasks by function name: (runner, tasks)."""
    runner = request.param
    snapshot, _env, _cache = prepared_js_project(tmp_path_factory, PROJECTS[runner],
                                                 name=f"{runner}slug",
                                                 snapshot_id=SNAPSHOTS[runner] * 20)
    base = tmp_path_factory.mktemp(f"{runner}-tasks")
    recipe = write_recipe(base / "recipe.yaml", f"""\
        name: {runner}slug
        seed: 0
        sources:
          - path: {snapshot.root}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 2, max_tasks_per_source: 6}}
        task: {{tests_visible: true}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)
    taskforge.generate(str(recipe), out=str(base / "out"))
    return runner, {t.record["deleted"][0]["symbol"].rsplit(".", 1)[-1]: t
                    for t in taskforge.load_tasks(str(base / "out"))}


def test_the_stack_reader_is_caught(tasks, tmp_path: Path) -> None:
    runner, by_name = tasks
    assert {"slugify", "initials", "claim", "literalAtCall"} <= set(by_name), sorted(by_name)
    box = require("bwrap")
    for name in ("slugify", "initials"):
        task = by_name[name]
        workspace = task.materialize(tmp_path / name)
        stack_reading(workspace, task, CJS_STACK_READER)
        (tmp_path / f"naive-{name}").mkdir()
        # the positive controls: the naive grader, and the grade without its checks
        assert NAIVE[runner](task, workspace, tmp_path / f"naive-{name}") == 1.0, name
        unchecked = grade_without_checks(task, workspace, box)
        assert (unchecked.reward, unchecked.tampered) == (1.0, ()), unchecked
        result = task.grade(workspace, sandbox="bwrap")
        assert result.reward == 0.0, (name, result)
        assert any(line.startswith("canary ") and "passed: a copy of " in line
                   for line in result.tampered), result.tampered


def test_every_reference_passes_with_every_copy(tasks, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _runner, by_name = tasks
    monkeypatch.setattr(grading_run, "plant_expectation_copies", functools.partial(
        expectations.plant_expectation_copies, limit=100))
    for name, task in sorted(by_name.items()):
        workspace = task.materialize(tmp_path / name)
        apply_patch(workspace, task.record["patch"])
        result = task.grade(workspace, sandbox="bwrap")
        assert (result.reward, result.tampered) == (1.0, ()), (name, result)


def test_a_copy_the_original_passes_too_costs_the_reference_nothing(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """literalAtCall's copy passes in the copies' own run on honest code: the second run on
    the original forgives it; without that run the reference would score 0 (the control)."""
    _runner, by_name = tasks
    task = by_name["literalAtCall"]
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    reference = task.grade(workspace, sandbox="bwrap")
    assert (reference.reward, reference.tampered) == (1.0, ())
    monkeypatch.setattr(grading_run, "passing_on_the_original", lambda *_args: set())
    unforgiven = task.grade(workspace, sandbox="bwrap")
    assert unforgiven.reward == 0.0
    assert any("reads its call site" in line and "passed: a copy of" in line
               for line in unforgiven.tampered), unforgiven.tampered


def test_copies_planted_in_the_grading_run_would_fail_a_later_file(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of the copies' own run: with the copies planted in the run the reward
    comes from (the runner taken for one that runs each file apart), the copy of `claims`
    claims its name again, which closes the register before `after.test.js` claims another:
    the reference scores 0. Under jest the copies run in the grading run, and the reference
    scores 1.0 there: each file has a module registry, and a register, of its own."""
    runner, by_name = tasks
    task = by_name["claim"]
    assert "test/zz/after.test.js::claims another" in task.record["FAIL_TO_PASS"]
    monkeypatch.setattr(grading_run, "plant_expectation_copies", functools.partial(
        expectations.plant_expectation_copies, limit=100))
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    assert task.grade(workspace, sandbox="bwrap").reward == 1.0
    assert expectations.copies_run_apart(workspace, runner) == (runner != "jest")
    if runner == "jest":
        return
    monkeypatch.setattr(RUNNERS[runner], "runs_files_apart", True)
    inline = task.grade(workspace, sandbox="bwrap")
    assert inline.reward == 0.0, inline
    assert "test/zz/after.test.js::claims another" not in inline.passed

"""Expectation copies under mocha, tape, jest and vitest (node's runner and tsdemo's vitest:
test_javascript_expectations.py): the attack is that module's stack reader (the deleted
function answers with the literal its calling test compares with). On a tape, a mocha, a
jest and a vitest project it scores 1.0 under the naive grader (the runner's exit code) and under the
grade without checks, and 0 under `taskforge grade` with the copy named; every reference
scores 1.0 with every copy made; a copy the original passes too is forgiven by the second
run, and without it would cost the reference its reward (the control). Arrays and booleans
(`words`, `isShouted`): test_javascript_copies_shapes.py's assertion reader, caught the same
way under each runner; every reference's failure told honest with no run on the original
code, but the call-site reader's."""

from __future__ import annotations

import functools
import json
import re
import textwrap
from pathlib import Path

import pytest
from conftest import (
    apply_patch,
    count_calls,
    prepared_js_project,
    trivial_solutions_of_before,
)
from js_tasks import stub_function_recipe
from naive_grader import (
    naive_jest_reward,
    naive_mocha_reward,
    naive_tape_reward,
    naive_vitest_reward,
)
from test_grade_tamper import copied_and_caught, grade_without_checks
from test_javascript_copies_shapes import CJS_ASSERTION_READER, old_shapes_only
from test_javascript_expectations import (
    CJS_STACK_READER,
    first_run_only_loses,
    forgiven_by_the_second_run_only,
    stack_reading,
)
from test_sandbox import require

import taskforge
from taskforge.languages.javascript.grading import expectations
from taskforge.languages.javascript.grading import run as grading_run

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

    // What the line calling it compares with: a call-site reader, as debugging libraries
    // have. Its own test passes a copy with any literal, on the original code too.
    function literalAtCall() {
      const frame = String(new Error().stack).split('\n')[2];
      const [, file, line] = frame.match(/(\/[^():]*):(\d+):\d+\)?$/);
      const text = require('node:fs').readFileSync(file, 'utf8').split('\n')[line - 1];
      return text.match(/'([^']*)'\);/)[1];
    }

    function words(text) {
      const found = String(text).toLowerCase().match(/[a-z]+/g);
      return found || [];
    }

    function isShouted(text) {
      const letters = String(text).replace(/[^a-z]/gi, '');
      return letters.length > 0 && letters === letters.toUpperCase();
    }

    module.exports = { slugify, initials, literalAtCall, words, isShouted };
    """
# The tests of the jest and vitest projects (`expect`), after each one's imports.
EXPECT_TESTS = textwrap.dedent("""\

            describe('slugify', () => {
              test('joins words', () => { expect(text.slugify('Hello World')).toBe('hello-world'); });
              test('drops symbols', () => { expect(text.slugify('a & b!')).toEqual('a-b'); });
            });
            describe('with a hook', () => {  // a copy in place sees it run, as the test does
              let names = 0;
              beforeEach(() => { names += 1; });
              test('initials', () => { expect(text.initials('ada lovelace')).toBe('AL'); });
            });
            test('reads its call site', () => { expect(text.literalAtCall()).toBe('here'); });
            test('words', () => { expect(text.words('Hi, you!')).toEqual(['hi', 'you']); });
            test('isShouted', () => { expect(text.isShouted('LOUD')).toBe(true); });
    """)
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
            test('words', function (t) {
              t.deepEqual(text.words('Hi, you!'), ['hi', 'you']);
              t.end();
            });
            test('isShouted', function (t) {
              t.ok(text.isShouted('LOUD'), 'upper case');
              t.end();
            });
            """,
    },
    "mocha": {
        "package.json": json.dumps({"name": "mslug", "version": "1.0.0",
                                    "scripts": {"test": "mocha"},
                                    "devDependencies": {"mocha": "10.7.3"}}),
        ".mocharc.yml": "spec: test\ntimeout: 5000\n",
        "src/text.js": SOURCE,
        "test/text.test.js": """\
            const assert = require('node:assert');
            const text = require('../src/text.js');

            describe('slugify', () => {
              it('joins words', () => { assert.equal(text.slugify('Hello World'), 'hello-world'); });
              it('drops symbols', () => { assert.strictEqual(text.slugify('a & b!'), 'a-b'); });
            });
            describe('with a hook', () => {  // a copy in place sees it run, as the test does
              let names = 0;
              beforeEach(() => { names += 1; });
              it('initials', function () { assert.equal(text.initials('ada lovelace'), 'AL'); });
            });
            it('reads its call site', () => { assert.equal(text.literalAtCall(), 'here'); });
            it('words', () => { assert.deepStrictEqual(text.words('Hi, you!'), ['hi', 'you']); });
            it('isShouted', () => { assert.ok(text.isShouted('LOUD')); });
            """,
    },
    "jest": {
        "package.json": json.dumps({"name": "jslug", "version": "1.0.0",
                                    "scripts": {"test": "jest"},
                                    "devDependencies": {"jest": "29.7.0"}}),
        "src/text.js": SOURCE,
        "test/text.test.js": "const text = require('../src/text.js');\n" + EXPECT_TESTS,
    },
    "vitest": {
        "package.json": json.dumps({"name": "vslug", "version": "1.0.0",
                                    "scripts": {"test": "vitest run"},
                                    "devDependencies": {"vitest": "4.1.12"}}),
        "vitest.config.mjs": "export default { test: { include: ['test/**/*.test.js'] } };\n",
        "src/text.js": SOURCE,
        "test/text.test.js": "import { beforeEach, describe, expect, test } from 'vitest';\n"
                             "import text from '../src/text.js';\n" + EXPECT_TESTS,
    },
}
SNAPSHOTS = {"tape": "ab", "mocha": "cd", "jest": "ef", "vitest": "a1"}
NAIVE = {"tape": naive_tape_reward, "mocha": naive_mocha_reward, "jest": naive_jest_reward,
         "vitest": naive_vitest_reward}


@pytest.fixture(scope="module", params=sorted(PROJECTS))
def tasks(request: pytest.FixtureRequest, tf_cache: Path,
          tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, taskforge.Task]]:
    """The project's stub-function tasks by function name: (runner, tasks)."""
    runner = request.param
    snapshot, _env, _cache = prepared_js_project(tmp_path_factory, PROJECTS[runner],
                                                 name=f"{runner}slug",
                                                 snapshot_id=SNAPSHOTS[runner] * 20)
    base = tmp_path_factory.mktemp(f"{runner}-tasks")
    recipe = stub_function_recipe(base, snapshot.root, max_tasks=6)
    with trivial_solutions_of_before():  # isShouted's one test: `return true;` passes it
        taskforge.generate(str(recipe), out=str(base / "out"))
    return runner, {t.record["deleted"][0]["symbol"].rsplit(".", 1)[-1]: t
                    for t in taskforge.load_tasks(str(base / "out"))}


def test_the_stack_reader_is_caught(tasks, tmp_path: Path) -> None:
    runner, by_name = tasks
    assert {"slugify", "initials", "literalAtCall"} <= set(by_name), sorted(by_name)
    box = require("bwrap")
    for name in ("slugify", "initials"):
        task = by_name[name]
        workspace = task.materialize(tmp_path / name)
        stack_reading(workspace, task, CJS_STACK_READER)
        copied_and_caught(task, workspace, box, NAIVE[runner], tmp_path / f"naive-{name}")


def test_the_assertion_reader_is_caught_on_arrays_and_booleans(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stub that answers with what the assertion asserts (`['hi', 'you']`, `true`, `false`
    after a `!`): 1.0 under the naive grader, the grade without checks and the grade with the
    copies of strings and numbers only (the controls), 0 with the array's or the boolean's."""
    runner, by_name = tasks
    for name in ("words", "isShouted"):
        task = by_name[name]
        workspace = task.materialize(tmp_path / name)
        stack_reading(workspace, task, CJS_ASSERTION_READER)
        with monkeypatch.context() as patched:
            old_shapes_only(patched)
            before = task.grade(workspace, sandbox="bwrap")
            assert (before.reward, before.tampered) == (1.0, ()), (name, before)
        copied_and_caught(task, workspace, require("bwrap"), NAIVE[runner],
                          tmp_path / f"naive-{name}")


def test_every_reference_passes_with_every_copy(tasks, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every copy made: the references score 1.0, their failures told honest from what the
    runner's report says they compared (jest's `matcherResult`, tape's rows, chai's and
    node's errors, vitest's through chai: strings, arrays and booleans alike) with no run on
    the original code, but for literalAtCall's copy, which honest code passes."""
    _runner, by_name = tasks
    monkeypatch.setattr(grading_run, "draw_expectation_copies", functools.partial(
        expectations.draw_expectation_copies, limit=100))
    runs = count_calls(monkeypatch, grading_run, "run_on_the_original")
    for name, task in sorted(by_name.items()):
        workspace = task.materialize(tmp_path / name)
        apply_patch(workspace, task.record["patch"])
        before = len(runs)
        result = task.grade(workspace, sandbox="bwrap")
        assert (result.reward, result.tampered) == (1.0, ()), (name, result)
        assert (len(runs) > before) == (name == "literalAtCall"), (name, runs)


def test_a_copy_the_original_passes_too_costs_the_reference_nothing(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """literalAtCall's copy passes in the copies' own run on honest code: the second run on
    the original forgives it; without that run the reference would score 0 (the control)."""
    _runner, by_name = tasks
    forgiven_by_the_second_run_only(by_name["literalAtCall"], tmp_path, monkeypatch,
                                    "test/text.test.js::reads its call site")


def test_the_two_runs_look_alike_from_inside(tasks, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The copies' run at the grading run's very paths, with its selection, variables and
    mounts: a stub that told them apart (the working directory `.../copies`, a variable's
    path, fewer files in its argv) answered the grading run only and scored 1.0 (the review
    of session 67's change)."""
    _runner, by_name = tasks
    task = by_name["slugify"]
    seen: list[dict] = []
    real = grading_run.run_tests

    def recorded(env, workspace, sandbox, **kwargs):  # type: ignore[no-untyped-def]
        seen.append({"workspace": workspace, **kwargs})
        return real(env, workspace, sandbox, **kwargs)

    monkeypatch.setattr(grading_run, "run_tests", recorded)
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    assert task.grade(workspace, sandbox="bwrap").reward == 1.0
    first, second = seen  # the grading run, then the copies' run
    expected = set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"])
    assert first["workspace"] == second["workspace"]
    assert set(first["select"]) & expected == set(second["select"]) & expected == expected
    assert len(first["select"]) == len(second["select"])  # the canaries' names are drawn anew
    for key in ("extra_env", "writable", "timeout"):
        assert first[key] == second[key], key
    # the test code bound read-only: the same files but the canaries' new one, named anew
    drawn = re.compile(r"-[a-z0-9]{6}\.test\.js$")
    assert len(first["read_only"]) == len(second["read_only"])
    assert [p for p in first["read_only"] if not drawn.search(p.name)] == \
        [p for p in second["read_only"] if not drawn.search(p.name)]


COIN = """
// One draw a process: the answer read from the test in about half the runs.
const cheats = Math.random() < 0.5;
"""


def test_a_stub_that_cheats_in_one_run_of_two_scores_nothing(tasks, tmp_path: Path) -> None:
    """A test passes where it passed in both runs, and one FAIL_TO_PASS test of several is
    left as it is: a stub that reads the answer in one run and throws in the other fails
    that test in one of them (with every test changed and the first run's word taken, it won
    one grading in four: the review of session 67's change)."""
    _runner, by_name = tasks
    task = by_name["slugify"]
    assert len(task.record["FAIL_TO_PASS"]) == 2
    workspace = task.materialize(tmp_path / "ws")
    stack_reading(workspace, task, CJS_STACK_READER + COIN)
    path = workspace / task.record["deleted"][0]["path"]
    path.write_text(path.read_text().replace(
        "return answerFromTheTest();",
        "if (!cheats) throw new Error('not implemented');\n  return answerFromTheTest();"))
    box = require("bwrap")
    # the positive control: without the checks it wins whenever it cheats (missed 2^-14)
    assert 1.0 in [grade_without_checks(task, workspace, box).reward for _ in range(14)]
    assert [task.grade(workspace, sandbox="bwrap").reward for _ in range(8)] == [0.0] * 8


@pytest.mark.parametrize("second", ["throw new Error('not implemented');", "return '';"],
                         ids=["throws", "another-value"])
def test_a_stub_that_reads_the_answer_in_the_first_run_only_scores_zero(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str) -> None:
    """`initials` has one FAIL_TO_PASS test: each runner's report says what its failed
    assertion compared (mocha's and tape's from the error or the row, jest's from its
    `matcherResult`, vitest's from the test's `meta`, where taskforge's setup file put
    vitest's text of both sides)."""
    _runner, by_name = tasks
    first_run_only_loses(by_name["initials"], tmp_path, monkeypatch, CJS_STACK_READER,
                         "require('node:fs')", second)

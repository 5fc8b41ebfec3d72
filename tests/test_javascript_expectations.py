"""Expectation copies for JavaScript and TypeScript (taskforge/languages/javascript/grading/
expectations.py): which tests get one, what a copy is (the test with its literal changed in
place), honest code failing each copy in a real run of node's runner, and the stub they catch
(it reads the literal its calling test expects from the test file, found through `new
Error().stack`) next to its positive controls: the naive grader and the grade without checks
score it 1.0 on jsdemo (node's runner) and tsdemo (vitest), `taskforge grade` 0 with the copy
named. A copy that the original code passes too (a project reading its own call sites) costs
the reference nothing, and would without the second run. mocha, tape and jest:
test_javascript_copies_by_runner.py."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest
from conftest import (
    apply_patch,
    lucky_once_then_caught,
    one_character_apart,
    prepared_js_project,
)
from js_tasks import generated, generated_tsdemo, stub_function_recipe
from naive_grader import naive_js_reward, naive_vitest_reward
from test_grade_tamper import grade_without_checks
from test_sandbox import require

import taskforge
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.grading_copy import (
    Copy,
    changed_characters,
    changed_digits,
    copy_findings,
    in_both_runs,
)
from taskforge.languages.javascript.grading import expectations
from taskforge.languages.javascript.grading import run as grading_run
from taskforge.languages.javascript.grading.expectations import plant_expectation_copies
from taskforge.sanitize.jssource import parse

JS = language_named("javascript")
EVERY = 100

# The attack: a function that returns the literal its caller's assertion compares with. It
# finds the calling test's file, line and column in `new Error().stack` (vitest maps them to
# the TypeScript source), reads that line, skips the call's arguments and takes the literal
# after them (`assert.equal(f(x), LITERAL)`, `expect(f(x)).toBe(LITERAL)`).
STACK_READER = r"""
import { readFileSync as readTestFile } from 'node:fs';
function answerFromTheTest() {
  const frames = String(new Error().stack).split('\n').slice(2);
  for (const frame of frames) {
    const m = frame.match(/(?:\(|at )(?:file:\/\/)?(\/[^():]*?\.test\.[cm]?[jt]s):(\d+):(\d+)\)?$/);
    if (!m) continue;
    const text = readTestFile(m[1], 'utf8').split('\n').slice(+m[2] - 1, +m[2] + 5).join('\n');
    let i = +m[3] - 1;
    while (i < text.length && text[i] !== '(') i++;
    let depth = 0, quote = '';
    for (; i < text.length; i++) {
      const c = text[i];
      if (quote) { if (c === '\\') i++; else if (c === quote) quote = ''; continue; }
      if (c === "'" || c === '"' || c === '`') quote = c;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) { i++; break; }
    }
    const literal = text.slice(i).match(new RegExp(/^\s*\)?\s*(?:,|\.\s*\w+\s*\()\s*/.source
      + /(-?\d+(?:\.\d+)?|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`[^`$]*`)/.source));
    if (literal) return new Function(`return ${literal[1]}`)();
  }
  throw new Error('not implemented');
}
"""
STUB = 'throw new Error("not implemented");'


# The same, for a CommonJS module (mocha's and tape's projects are mostly).
CJS_STACK_READER = STACK_READER.replace(
    "import { readFileSync as readTestFile } from 'node:fs';",
    "const { readFileSync: readTestFile } = require('node:fs');")


def stack_reading(workspace: Path, task: taskforge.Task, reader: str = STACK_READER) -> None:
    """The deleted function's stub answers with what its calling test expects."""
    path = workspace / task.record["deleted"][0]["path"]
    path.write_text(reader + path.read_text().replace(STUB, "return answerFromTheTest();"))


# ----------------------------------------------------------------- which tests get a copy

SHAPES = """\
import { describe, test, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { f, g } from '../src/f.js';

let server;
const calls = { n: 0 };

describe('plain', () => {
  test('string on the right', () => { assert.equal(f('a'), 'A!'); });
  test('number on the left', () => { assert.strictEqual(2, g(1)); });
  test('expect style', () => { const x = f('b'); expect(x).toBe('B!'); });
  test('chai style', () => { expect(g(2)).to.deep.equal(-3.5); });
  test('a context', (t) => { assert.deepEqual(g(3), 4, 'message'); });
  describe('nested', () => {
    it('template', async () => { await Promise.resolve(); assert.equal(f('c'), `C!`); });
  });
  test('computed', () => { assert.equal(g(1), 2 * 1); });
  test('not last', () => { assert.equal(f('d'), 'D!'); g(0); });
  test('returns early', () => { if (g(0)) return; assert.equal(f('e'), 'E!'); });
  test('a boolean', () => { assert.equal(g(0) > 1, true); });
  test('null', () => { assert.equal(f(null), null); });
  test('negated', () => { expect(f('x')).not.toBe('y'); });
  test('hex', () => { assert.equal(g(15), 0x10); });
  test('huge', () => { assert.equal(g(1), 12345678901234567890); });
  test('both literals', () => { assert.equal('a', 'a'); });
  test.skip('skipped', () => { assert.equal(f('s'), 'S!'); });
  test('options', { todo: true }, () => { assert.equal(f('t'), 'T!'); });
  test('twice', () => { assert.equal(f('u'), 'U!'); });
  test('twice', () => { assert.equal(f('v'), 'V!'); });
  test('a callback', (t, done) => { assert.equal(f('w'), 'W!'); });
  test('nested return is fine', () => { [1].map(() => { return 1; }); assert.equal(g(5), 6); });
  test('esc\\'aped', () => { assert.equal(f('q'), 'Q!'); });
  test('commented', () => { assert.equal(f('m'), 'M!') /* a comment in the statement */ });
  test('negated string', () => { assert.equal(f('n'), -'n'); });
  test('assigns outside', async () => { server = await f('s'); assert.equal(f('o'), 'O!'); });
  test('counts outside', () => { calls.n++; assert.equal(f('p'), 'P!'); });
  test('declares its own', () => { let n = 0; n++; const o = {}; o.k = 1;
    for (const k of [1]) n += k; assert.equal(f('r'), 'R!'); });
  test('accents', () => { assert.equal(f('éclair'), 'ÉCLAIR!'); });
});

describe('two-valued', () => {
  test('ok', () => { assert.ok(f('a')); });
  test('ok not', () => { assert.ok(!f.g('a'), 'a message'); });
  test('bare assert', () => { assert(g[1]); });
  test('toBe true', () => { expect(g(1)).toBe(true); });
  test('not not', () => { assert.ok(!!f('a')); });
  test('a comparison', () => { assert.ok(g(1) > 0); });
  test('ok of a literal', () => { assert.ok(1); });
});

describe('arrays and objects', () => {
  test('an array', () => { assert.deepEqual(f('a'), ['A', 1, [2, { k: 'v' }]]); });
  test('an object', () => { expect(f('a')).toEqual({ a: -1, 'b': 'x', c: null, }); });
  test('a hole', () => { assert.deepEqual(f('a'), [1, , 2]); });
  test('a spread', () => { assert.deepEqual(f('a'), [...calls, 1]); });
  test('a key twice', () => { assert.deepEqual(f('a'), { a: 1, a: 2 }); });
  test('nothing to change', () => { assert.deepEqual(f('a'), [true, null, []]); });
  test('a shorthand', () => { assert.deepEqual(f('a'), { server, n: 1 }); });
  test('a computed key', () => { assert.deepEqual(f('a'), { [server]: 1 }); });
  test('a name inside', () => { assert.deepEqual(f('a'), [server, 1]); });
});

describe('with a hook', () => {
  beforeEach(() => {});
  test('hooked', () => { assert.equal(f('h'), 'H!'); });
});

describe('with a variable', () => {
  const seen = [];
  test('scoped', () => { seen.push(1); assert.equal(f('k'), 'K!'); });
});

test('top level', function () { assert.equal(f('top'), 'TOP!'); });

describe('strict', function () {
  'use strict'
  it('in strict mode', () => { assert.equal(f('z'), 'Z!'); });
});
"""
QUALIFY = {"plain > string on the right", "plain > number on the left", "plain > expect style",
           "plain > chai style", "plain > a context", "plain > nested > template",
           "plain > nested return is fine", "plain > commented", "plain > declares its own",
           "top level", "strict > in strict mode", "plain > assigns outside",
           "plain > counts outside", "with a hook > hooked", "with a variable > scoped",
           "plain > accents", "plain > a boolean", "two-valued > ok", "two-valued > ok not",
           "two-valued > bare assert", "two-valued > toBe true", "arrays and objects > an array",
           "arrays and objects > an object"}
TWO_VALUED = {"plain > a boolean": ("true", "false"), "two-valued > ok": ("f('a')", "!f('a')"),
              "two-valued > ok not": ("!f.g('a')", "f.g('a')"),
              "two-valued > bare assert": ("g[1]", "!g[1]"),
              "two-valued > toBe true": ("true", "false")}


def _ids(source: str) -> list[str]:
    """Every test name of SHAPES as an id (the suites' names joined with ` > `)."""
    ids, suites = [], []
    for line in source.splitlines():
        found = re.match(r"\s*(describe|test|it)(?:\.skip)?\('((?:[^'\\]|\\.)*)'", line)
        depth = len(line) - len(line.lstrip())
        suites = [(d, n) for d, n in suites if d < depth]
        if found and found.group(1) == "describe":
            suites.append((depth, found.group(2)))
        elif found:
            ids.append("test/shapes.test.js::" + " > ".join([n for _d, n in suites]
                                                             + [found.group(2)]))
    return ids


def test_a_changed_value_looks_like_one() -> None:
    """Six letters added to every value (`"BRA"` -> `"BRAwkfmes"`) were a tell a stub could
    test without knowing any answer; now a character is replaced by another of its kind."""
    rng = random.Random(0)
    for body in ("SGP", "hello-world", "v2", "Ünïcödé x", "!", "a b"):
        for _ in range(30):
            now = changed_characters(body, rng)
            assert now != body and one_character_apart(body, now), (body, now)
    assert len(changed_characters("", rng)) == 6  # nothing to replace: letters added
    for number in ("0", "7", "42", "10", "1.25", "0.5", "123456789012345"):
        for _ in range(30):
            now = changed_digits(number, rng)
            assert float(now) != float(number) and one_character_apart(number, now), now
            assert not (len(now.split(".")[0]) > 1 and now.startswith("0")), now


def test_which_tests_get_a_copy(tmp_path: Path) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "shapes.test.js").write_text(SHAPES, encoding="utf-8")
    ids = _ids(SHAPES)
    assert len(ids) == 48
    copies = plant_expectation_copies(tmp_path, ids, "node-test", random.Random(0), limit=EVERY)
    assert {c.test_id.split("::")[1] for c in copies} == QUALIFY
    planted = (tmp_path / "test" / "shapes.test.js").read_text(encoding="utf-8")
    assert not parse("x.js", planted.encode()).root_node.has_error
    assert re.search(r"assert\.equal\(f\('éclair'\), '(?!ÉCLAIR!')É[A-Z]{5}!'\);", planted)
    # in place: the same lines, each test's own, only the literal of each copy changed
    before, after = SHAPES.splitlines(), planted.splitlines()
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == len(QUALIFY)
    for copy in copies:
        old, new = next((b, a) for b, a in changed if copy.was in b and copy.now in a)
        assert old.replace(copy.was, copy.now, 1) == new, (old, new)
        assert copy.was != copy.now
    assert re.search(r"assert\.equal\(f\('a'\), '(?!A!')[A-Z]!'\);", planted)
    strict = re.search(r"assert\.strictEqual\((\d+), g\(1\)\)", planted)
    assert strict and strict.group(1) != "2"
    assert re.search(r"expect\(g\(2\)\)\.to\.deep\.equal\(-(\d\.\d)\)", planted)
    assert "-3.5)" not in planted
    assert re.search(r"assert\.equal\(f\('c'\), `(?!C!`)[A-Z]!`\)", planted)
    # another value that looks like one: a character replaced by another of its kind; a
    # boolean's other value, a truthiness assertion's operand with `!` added or taken away
    for copy in copies:
        name = copy.test_id.split("::")[1]
        assert copy.two_valued == (name in TWO_VALUED), copy
        if copy.two_valued:
            assert (copy.was, copy.now) == TWO_VALUED[name], copy
        elif copy.was.startswith(("[", "{")):  # one string or number inside changed
            assert one_character_apart(copy.was, copy.now), copy
            assert expectations._copied_value(copy.was) != expectations._copied_value(copy.now)
        else:
            assert one_character_apart(copy.was, copy.now), copy


def test_which_runners_get_copies(tmp_path: Path) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "shapes.test.js").write_text(SHAPES)
    for runner in ("node-test", "jest", "vitest", "mocha"):
        assert len(plant_expectation_copies(tmp_path, _ids(SHAPES), runner)) == 3  # a grading's
        (tmp_path / "test" / "shapes.test.js").write_text(SHAPES)
    # vitest sharing modules between files: the copies run on their own anyway
    (tmp_path / "vitest.config.ts").write_text("export default { test: { isolate: false } };\n")
    assert len(plant_expectation_copies(tmp_path, _ids(SHAPES), "vitest")) == 3
    (tmp_path / "test" / "shapes.test.js").write_text(SHAPES)
    # none where a file's tests may run in another order: vitest's shuffle, jest's randomize
    (tmp_path / "vitest.config.ts").write_text(
        "export default { test: { sequence: { shuffle: true } } };\n")
    assert plant_expectation_copies(tmp_path, _ids(SHAPES), "vitest") == []
    (tmp_path / "package.json").write_text('{"jest": {"randomize": true}}')
    assert plant_expectation_copies(tmp_path, _ids(SHAPES), "jest") == []
    # none under mocha's interfaces that register tests otherwise than inside blocks
    (tmp_path / ".mocharc.yml").write_text("ui: qunit\n")
    assert plant_expectation_copies(tmp_path, _ids(SHAPES), "mocha") == []
    assert (tmp_path / "test" / "shapes.test.js").read_text() == SHAPES
    # one of several FAIL_TO_PASS tests left as it is; a lone one changed
    (tmp_path / ".mocharc.yml").unlink()
    two = ["test/shapes.test.js::plain > string on the right", "test/shapes.test.js::top level"]
    assert len(plant_expectation_copies(tmp_path, two, "mocha", limit=EVERY)) == 1
    assert len(plant_expectation_copies(tmp_path, two[:1], "mocha", limit=EVERY)) == 1
    # a name registered twice, the other time in another form, is left alone (`name [2]`)
    twice = "test.each([[1]])('once', (n) => {});\ntest('once', () => { expect(f(1)).toBe(2); });\n"
    (tmp_path / "test" / "twice.test.js").write_text(twice)
    assert plant_expectation_copies(tmp_path, ["test/twice.test.js::once"], "jest") == []
    # a parameter is node's test context only under node's runner (jest's would be `done`)
    source = "test('a callback', (done) => { expect(f(1)).toBe(2); });\n"
    (tmp_path / "test" / "done.test.js").write_text(source)
    assert plant_expectation_copies(tmp_path, ["test/done.test.js::a callback"], "jest") == []


TAPE_SHAPES = """\
var test = require('tape');
var tape = require('tape');
var other = require('node:assert');
var f = require('../src/f.js');

test('equal then end', function (t) { t.equal(f.f('a'), 'A!'); t.end(); });
test('planned', function (t) { t.plan(1); t.strictEqual(f.g(1), 2); });
test('same', (t) => { t.same(f.g(2), -3.5); t.end(); });
test('literal on the left', (t) => { t.deepEqual('B!', f.f('b')); t.end(); });
test('a message', function (t) { t.equal(f.f('m'), 'M!', 'shouts'); t.end(); });
test('async', async function (t) { t.equal(await f.f('q'), 'Q!'); });
tape('called tape', function (t) { t.is(f.f('p'), 'P!'); t.end(); });
test('nested', function (t) {
  t.test('inner', (st) => { st.equal(f.f('c'), 'C!'); st.end(); });
  t.end();
});
test('ends twice', function (t) { t.equal(f.f('d'), 'D!'); t.end(); t.end(); });
test('ends in a callback', function (t) { setTimeout(() => t.end()); t.equal(f.f('e'), 'E!'); });
test('ends first', function (t) { t.end(); t.equal(f.f('r'), 'R!'); });
test('not its own t', function (t) { other.equal(f.f('h'), 'H!'); t.end(); });
test('no test object', function () { other.equal(f.f('n'), 'N!'); });
test('loose', function (t) { t.looseEqual(f.g(3), '4'); t.end(); });
test('ok', function (t) { t.ok(f.g(0) > 1); t.end(); });
test('options', { skip: false }, function (t) { t.equal(f.f('o'), 'O!'); t.end(); });
test('assigns outside', function (t) { other = null; t.equal(f.f('s'), 'S!'); t.end(); });
"""
TAPE_QUALIFY = {"equal then end", "planned", "same", "literal on the left", "a message",
                "async", "called tape", "assigns outside"}


def test_which_tape_tests_get_a_copy(tmp_path: Path) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "shapes.js").write_text(TAPE_SHAPES)
    ids = ["test/shapes.js::" + name
           for name in re.findall(r"^(?:test|tape)\('([^']*)'", TAPE_SHAPES, re.M)]
    assert len(ids) == 17
    copies = plant_expectation_copies(tmp_path, ids, "tape", random.Random(0), limit=EVERY)
    assert {c.test_id.split("::")[1] for c in copies} == TAPE_QUALIFY
    planted = (tmp_path / "test" / "shapes.js").read_text()
    assert not parse("x.js", planted.encode()).root_node.has_error
    # in place, the literal changed and the end kept
    assert "test('equal then end', function (t) { t.equal(f.f('a'), '" in planted
    assert re.search(r"t\.equal\(f\.f\('a'\), '(?!A!')[A-Z]!'\); t\.end\(\); \}\);", planted)
    assert re.search(r"tape\('called tape', function \(t\) \{ "
                     r"t\.is\(f\.f\('p'\), '(?!P!')[A-Z]!'\); t\.end\(\); \}\);", planted)
    planned = re.search(r"t\.plan\(1\); t\.strictEqual\(f\.g\(1\), (\d+)\);", planted)
    assert planned and planned.group(1) != "2"
    assert sum(b != a for b, a in zip(TAPE_SHAPES.splitlines(), planted.splitlines(),
                                      strict=True)) == len(TAPE_QUALIFY)


# ------------------------------------------------------ real runs of node's runner (bwrap)

FILES = {
    "package.json": '{"name": "words", "type": "module", "scripts": {"test": "node --test"}}',
    "src/words.js": """\
        export function shout(text) {
          const loud = String(text).toUpperCase();
          return `${loud}!`;
        }

        export function count(text) {
          const words = String(text).split(/\\s+/).filter(Boolean);
          return words.length;
        }

        // What the line calling it compares with: a call-site reader, as debugging libraries
        // have. Its own test passes a copy with any literal, on the original code too.
        export function literalAtCall() {
          const frame = String(new Error().stack).split('\\n')[2];
          const [, file, line] = frame.match(/(\\/[^():]*):(\\d+):\\d+\\)?$/);
          const text = readFileSync(file.replace(/^file:\\/\\//, ''), 'utf8').split('\\n')[line - 1];
          return text.match(/'([^']*)'\\);\\s*}\\);\\s*$/)[1];
        }
        import { readFileSync } from 'node:fs';
        """,
    "test/words.test.js": """\
        import { describe, test } from 'node:test';
        import assert from 'node:assert/strict';
        import { count, literalAtCall, shout } from '../src/words.js';

        describe('shout', () => {
          test('adds a bang', () => { assert.equal(shout('hi'), 'HI!'); });
          test('numbers too', () => { assert.strictEqual(shout(5), '5!'); });
        });
        test('counts words', () => { assert.equal(count('a b  c'), 3); });
        test('reads its call site', () => { assert.equal(literalAtCall(), 'here'); });
        """,
}
ORIGINALS = ["test/words.test.js::shout > adds a bang", "test/words.test.js::shout > numbers too",
             "test/words.test.js::counts words", "test/words.test.js::reads its call site"]


@pytest.fixture(scope="module")
def words(tmp_path_factory: pytest.TempPathFactory):  # (Snapshot, Environment, cache)
    return prepared_js_project(tmp_path_factory, FILES, name="words", snapshot_id="e" * 40)


def test_honest_code_fails_every_copy_and_the_stack_reader_passes_them(words,
                                                                        tmp_path: Path) -> None:
    snapshot, env, _cache = words
    box = require("bwrap")
    honest = tmp_path / "honest"
    shutil.copytree(snapshot.root, honest)
    rng = random.Random(3)  # one at a time: a grading leaves one of several unchanged
    copies = [c for test_id in ORIGINALS
              for c in plant_expectation_copies(honest, [test_id], "node-test", rng)]
    assert {c.test_id for c in copies} == set(ORIGINALS)
    ids = ORIGINALS
    run = JS.run_tests(env, honest, box, timeout=120, select=ids)
    # every changed test fails, but the call-site reader's, which honest code passes with
    # any literal (the second run's case)
    assert run.outcomes == {t: "passed" if "call site" in t else "failed" for t in ids}, \
        run.log_tail
    stub = tmp_path / "stub"
    shutil.copytree(honest, stub)
    source = stub / "src" / "words.js"
    text = source.read_text()
    for name in ("shout", "count"):  # their bodies replaced by the answer read from the test
        text = re.sub(rf"(export function {name}\(text\) {{\n).*?\n}}\n",
                      r"\1  return answerFromTheTest();\n}\n", text, flags=re.S)
    source.write_text(STACK_READER + text)
    run = JS.run_tests(env, stub, box, timeout=120, select=ids)
    assert run.outcomes == dict.fromkeys(ids, "passed"), run.log_tail


@pytest.fixture(scope="module")
def words_tasks(words, tmp_path_factory: pytest.TempPathFactory) -> dict[str, taskforge.Task]:
    snapshot, _env, _cache = words
    base = tmp_path_factory.mktemp("words-tasks")
    recipe = stub_function_recipe(base, snapshot.root)
    taskforge.generate(str(recipe), out=str(base / "out"))
    return {t.record["deleted"][0]["symbol"].rsplit(".", 1)[-1]: t
            for t in taskforge.load_tasks(str(base / "out"))}


@pytest.mark.slow
def test_a_copy_the_original_passes_too_costs_the_reference_nothing(
        words_tasks: dict[str, taskforge.Task], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """literalAtCall's test passes its copy on honest code: the second run on the original
    forgives it (the reference scores 1.0); without that run the reference would score 0,
    the control that the second run is what spares it."""
    forgiven_by_the_second_run_only(words_tasks["literalAtCall"], tmp_path, monkeypatch,
                                    "test/words.test.js::reads its call site")


def forgiven_by_the_second_run_only(task: taskforge.Task, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, test_id: str) -> None:
    """The task's reference scores 1.0, and 0 with `test_id`'s copy named once the second
    run on the original is taken away (the control that it is what spares the reference)."""
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    reference = task.grade(workspace, sandbox="bwrap")
    assert (reference.reward, reference.tampered) == (1.0, ())
    monkeypatch.setattr(grading_run, "run_on_the_original", lambda *_args: None)
    unforgiven = task.grade(workspace, sandbox="bwrap")
    assert unforgiven.reward == 0.0
    assert any(line.startswith(f"expectation copy {test_id} passed")
               for line in unforgiven.tampered), unforgiven.tampered


def _wins_unchecked_and_loses(task: taskforge.Task, workspace: Path, naive: float) -> None:
    """The positive controls (the naive grader, the grade without checks: 1.0), then 0
    under the grade, the copy named."""
    assert naive == 1.0, "the positive control"
    unchecked = grade_without_checks(task, workspace, require("bwrap"))
    assert (unchecked.reward, unchecked.tampered) == (1.0, ()), unchecked
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 0.0, result
    assert any(line.startswith("expectation copy ") for line in result.tampered), \
        result.tampered


@pytest.mark.slow
def test_the_stack_reader_is_caught_on_node_runner_tasks(
        words_tasks: dict[str, taskforge.Task], tf_cache: Path,
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    tasks = [words_tasks["shout"], *(t for t in taskforge.load_tasks(
        str(generated(tmp_path_factory))) if t.record["strategy"] == "stub-function")]
    won = 0
    for n, task in enumerate(tasks):
        workspace = task.materialize(tmp_path / f"ws{n}")
        stack_reading(workspace, task)
        naive = naive_js_reward(task, workspace, tmp_path / f"naive{n}")
        if naive != 1.0 and task is not tasks[0]:
            continue  # the stub is reached through other code there: nothing to read
        won += 1
        _wins_unchecked_and_loses(task, workspace, naive)
    assert won >= 2, won  # shout's, and a jsdemo task's at least


@pytest.mark.slow
def test_the_stack_reader_is_caught_on_vitest_tasks(tf_cache: Path,
                                                    tmp_path_factory: pytest.TempPathFactory,
                                                    tmp_path: Path) -> None:
    won = 0
    for n, task in enumerate(taskforge.load_tasks(str(generated_tsdemo(tmp_path_factory)))):
        workspace = task.materialize(tmp_path / f"ws{n}")
        stack_reading(workspace, task)
        (tmp_path / f"naive{n}").mkdir()
        naive = naive_vitest_reward(task, workspace, tmp_path / f"naive{n}")
        if naive != 1.0:
            continue
        won += 1
        _wins_unchecked_and_loses(task, workspace, naive)
    assert won, "the attack won against the naive grader on no task: no positive control"


# The reader in the first run of a grading, `second` in every later run: a stub that reads the
# answer in one run of two at random, where its coin came up right. A file outside the
# workspace keeps the count, which only `none` lets outlive a run: the deterministic
# stand-in for one grading in four. `fs`: how the module reaches node:fs.
FIRST_RUN_ONLY = """\
{{
    const fs = {fs};
    if (fs.existsSync({marker})) {second}
    fs.writeFileSync({marker}, '');
  }}
  return answerFromTheTest();"""


def first_run_only_loses(task: taskforge.Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         reader: str, fs: str, second: str) -> None:
    """The stack reader answering in the first run only, on a task with one FAIL_TO_PASS
    test (changed in the copies' run): it fails that run, as honest code does, but not as
    honest code does it, comparing the value before with the value now. Without that check
    (its positive control) it scores 1.0 under the grade with every check; with it 0, the
    copy named."""
    assert len(task.record["FAIL_TO_PASS"]) == 1
    marker = tmp_path / "marker"
    workspace = task.materialize(tmp_path / "ws")
    stack_reading(workspace, task, reader)
    path = workspace / task.record["deleted"][0]["path"]
    path.write_text(path.read_text().replace("return answerFromTheTest();", FIRST_RUN_ONLY.format(
        fs=fs, marker=repr(str(marker)), second=second), 1))
    lucky_once_then_caught(task, workspace, marker, lambda patched: patched.setattr(
        grading_run, "fails_as_honest_code_does", lambda *args: True), monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("second", ["throw new Error('not implemented');", "return '';"],
                         ids=["throws", "another-value"])
def test_a_stub_that_reads_the_answer_in_the_first_run_only_scores_zero(
        words_tasks: dict[str, taskforge.Task], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, second: str) -> None:
    """node's runner (its reporter reads the assertion's error from the test's process)."""
    first_run_only_loses(words_tasks["count"], tmp_path, monkeypatch, STACK_READER,
                         "process.getBuiltinModule('node:fs')", second)


@pytest.mark.slow
def test_honest_code_fails_a_changed_test_as_honest_code_does(
        words_tasks: dict[str, taskforge.Task], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's failure in the copies' run compares 3 with the changed number: told
    honest from what the runner's report says, with no run on the original code."""
    runs: list[int] = []
    real = grading_run.run_on_the_original
    monkeypatch.setattr(grading_run, "run_on_the_original",
                        lambda *args: runs.append(1) or real(*args))
    task = words_tasks["count"]
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    result = task.grade(workspace, sandbox="bwrap")
    assert (result.reward, result.tampered, runs) == (1.0, (), []), result


def test_what_an_honest_failure_compares() -> None:
    """A string or a number, either order, of the literal's kind; anything else is left to
    the original code's failure, which agrees side by side by kind and value."""
    changed = Copy("t.test.js::x", "'SGP'", "'SGQ'")
    honest = [["string", '"SGP"'], ["string", '"SGQ"']]
    assert expectations.fails_as_honest_code_does(changed, honest)
    assert expectations.fails_as_honest_code_does(changed, honest[::-1])
    for dishonest in ([["string", '""'], ["string", '"SGQ"']], [["number", "0"], honest[1]],
                      [["object", None], honest[1]], [honest[1]], None):
        assert not expectations.fails_as_honest_code_does(changed, dishonest), dishonest
    assert expectations.fails_as_honest_code_does(Copy("t.test.js::n", "-2.5", "-7.5"),
                                                  [["number", "-2.5"], ["number", "-7.5"]])
    assert not expectations.fails_as_honest_code_does(Copy("t.test.js::n", "3", "4"),
                                                      [["string", '"3"'], ["number", "4"]])
    # escapes both languages read alike (jsdemo's markdown test); not `\\v` (Python: a tab)
    escaped = Copy("t.test.js::e", "'one\\ntwo'", "'one\\ntwocevpjr'")
    assert expectations.fails_as_honest_code_does(
        escaped, [["string", '"one\\ntwo"'], ["string", '"one\\ntwocevpjr"']])
    assert not expectations.fails_as_honest_code_does(
        Copy("t.test.js::v", "'a\\vb'", "'a\\vbxyzabc'"),
        [["string", '"a\\u000bb"'], ["string", '"a\\u000bbxyzabc"']])
    # vitest's text of both sides: strings as they are, numbers as JavaScript writes them
    assert expectations.fails_as_honest_code_does(changed, [["shown", '"SGP"'], ["shown", '"SGQ"']])
    assert not expectations.fails_as_honest_code_does(  # a non-string beside: both formatted
        changed, [["shown", '"42"'], ["shown", '"\\"SGQ\\""']])
    assert expectations.fails_as_honest_code_does(Copy("t.test.js::n", "1.50", "1.70"),
                                                  [["shown", '"1.5"'], ["shown", '"1.7"']])
    assert not expectations.fails_as_honest_code_does(Copy("t.test.js::n", "3", "4"),
                                                      [["shown", '"\\"3\\""'], ["shown", '"4"']])
    assert not expectations.agrees_with_the_original([["shown", '"a"'], ["shown", '"b"']],
                                                     [["shown", '"c"'], ["shown", '"b"']])
    word = [["object", None], ["string", '"SGQ"']]
    assert expectations.agrees_with_the_original(word, [["object", None], ["string", '"SGQ"']])
    assert not expectations.agrees_with_the_original(word, honest)
    assert not expectations.agrees_with_the_original(word, None)
    assert expectations.agrees_with_the_original(None, None)


def test_what_an_honest_failure_of_a_boolean_array_or_turned_assertion_compares() -> None:
    """A boolean's two values; a turned `assert.ok`'s falsy value against `true`; an array's
    or object's values item by item and key by key, each of its kind (1 is no `true`, "1"
    no 1). vitest lays an array's text out over lines: the original code decides there."""
    honest = expectations.fails_as_honest_code_does
    boolean = Copy("t.test.js::b", "true", "false", two_valued=True)
    assert honest(boolean, [["boolean", "true"], ["boolean", "false"]])
    assert honest(boolean, [["shown", '"true"'], ["shown", '"false"']])
    for dishonest in ([["number", "1"], ["boolean", "false"]], [["undefined", None],
                      ["boolean", "false"]], [["boolean", "false"], ["boolean", "false"]]):
        assert not honest(boolean, dishonest), dishonest
    turned = Copy("t.test.js::t", "isLoud('HI')", "!isLoud('HI')", two_valued=True)
    for falsy in (["boolean", "false"], ["number", "0"], ["number", "null"], ["string", '""'],
                  ["object", "null"], ["undefined", None], ["shown", '"0"']):
        expected = ["shown", '"true"'] if falsy[0] == "shown" else ["boolean", "true"]
        assert honest(turned, [falsy, expected]), falsy
    for dishonest in ([["boolean", "true"], ["boolean", "true"]], [["boolean", "false"],
                      ["boolean", "false"]], [["string", '"0"'], ["boolean", "true"]],
                      [["object", "[]"], ["boolean", "true"]], [["boolean", "false"]], None):
        assert not honest(turned, dishonest), dishonest
    array = Copy("t.test.js::a", "['A', 1, [2, { k: 'v' }]]", "['A', 1, [2, { k: 'w' }]]")
    was, now = ["object", '["A",1,[2,{"k":"v"}]]'], ["object", '["A",1,[2,{"k":"w"}]]']
    assert honest(array, [was, now]) and honest(array, [now, was])
    for dishonest in (["object", '["A",true,[2,{"k":"v"}]]'], ["object", '["A","1",[2,{"k":"v"}]]'],
                      ["object", '["A",1,[2,{"k":"v","x":1}]]'], ["object", '["A",1]'],
                      ["object", None], ["undefined", None]):
        assert not honest(array, [dishonest, now]), dishonest
    assert honest(Copy("t.test.js::o", "{ a: -1, 'b': 'x', c: null, }", "{ a: -7, 'b': 'x', c: null, }"),
                  [["object", '{"c":null,"b":"x","a":-1}'], ["object", '{"a":-7,"b":"x","c":null}']])
    assert not honest(array, [["shown", '"[\n  \"A\",\n]"'], ["shown", '"[]"']])
    # the original code's failure: by kind and value as JSON writes it, keys in any order
    assert expectations.agrees_with_the_original([["object", '{"a":1,"b":[true]}'], now],
                                                 [["object", '{"b":[true],"a":1}'], now])
    assert not expectations.agrees_with_the_original([["object", '[1]'], now],
                                                     [["object", '[true]'], now])
    assert not expectations.agrees_with_the_original([["object", None], now],
                                                     [["object", '[1]'], now])


def test_copy_findings_judge_passing_only() -> None:
    copies = [Copy("t.test.js::a", "'x'", "'xabcdef'"), Copy("t.test.js::b", "1", "2"),
              Copy("t.test.js::c", "3", "4")]
    outcomes = {"t.test.js::a": "passed", "t.test.js::b": "error", "t.test.js::c": "passed"}
    found = copy_findings(copies, outcomes, forgiven={"t.test.js::c"})
    assert [f.message for f in found] == [
        "expectation copy t.test.js::a passed: its expected value changed from 'x' to "
        "'xabcdef', which only a solution answering with what the test expects passes"]
    assert all(f.disqualifies for f in found)


def test_a_test_passes_where_it_passed_in_both_runs() -> None:
    first = {"a": "passed", "b": "passed", "c": "passed", "d": "failed"}
    second = {"a": "passed", "b": "failed", "c": "failed", "d": "passed"}
    # `c` was changed in the second run: its word there is the copies' finding, not this
    assert in_both_runs(first, second, [Copy("c", "1", "2")]) == {
        "a": "passed", "b": "failed", "c": "passed", "d": "failed"}


COUNTER = {
    "package.json": '{"name": "ids", "type": "module", "scripts": {"test": "node --test"}}',
    "src/ids.js": "let last = 0;\nexport function nextId() {\n  last += 1;\n  return last;\n}\n",
    "test/ids.test.js": """\
        import { test } from 'node:test';
        import assert from 'node:assert/strict';
        import { nextId } from '../src/ids.js';

        test('first id is one', () => { assert.equal(nextId(), 1); });
        test('ids keep growing', () => {
          for (let i = 0; i < 44; i++) nextId();
          assert.ok(nextId() > 1);
        });
        """,
}
# a test the graded file has that expects 47: after the second test it passes on any code
# that counts, the original too, and fails alone
COUNTER_COPY = "\ntry {\ntest(\"first keep x1y2z3\", () => { assert.equal(nextId(), 47); });\n} " \
               "catch {}\n"


def test_the_second_run_runs_the_copy_as_the_grading_run_did(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A test whose value depends on what the tests before it left (a counter) passes on the
    original code in the copies' run's selection, and only there: run alone, as the second
    run first did, it failed, and the reference of such a task scored 0 one grading in 97
    (the review of session 66's change)."""
    snapshot, env, cache = prepared_js_project(tmp_path_factory, COUNTER, name="ids",
                                               snapshot_id="f" * 40)
    graded = tmp_path / "graded"
    shutil.copytree(snapshot.root, graded)
    with (graded / "test" / "ids.test.js").open("a") as handle:
        handle.write(COUNTER_COPY)
    copy = Copy("test/ids.test.js::first keep x1y2z3", "1", "47")
    runner = Runner(JS, env, require("bwrap"), 120, cache=cache)
    selected = ["test/ids.test.js::first id is one", "test/ids.test.js::ids keep growing",
                copy.test_id]
    ran = expectations.run_on_the_original([copy], graded, snapshot.root, runner,
                                           tmp_path / "a", selected)
    assert ran is not None and ran.outcomes[copy.test_id] == "passed"
    alone = expectations.run_on_the_original([copy], graded, snapshot.root, runner,
                                             tmp_path / "b", [copy.test_id])
    # the control: the copy alone fails on the original code, comparing 1 with 47
    assert alone is not None and alone.outcomes[copy.test_id] == "failed"
    assert alone.compared[copy.test_id] == [["number", "1"], ["number", "47"]]

"""JavaScript expectation copies of booleans, truthiness assertions, arrays and objects
(taskforge/languages/javascript/grading/expectations.py), each attack with its positive
control, on real tasks of a node:test project under bwrap.

The attack: the deleted function's stub reads the assertion that calls it (`new
Error().stack`, then the test file) and answers with what it asserts: the literal after the
call, parsed whole (`true`, `[-1, 7]`, `{ a: 2 }`), or, inside `assert.ok(...)`, `true`, and
`false` after a `!`. Before these copies only strings and numbers were changed, so it scored
1.0 under every check on these tasks; the control here is the grade with the new shapes taken
out of the copies (1.0), next to the naive grader and the grade without checks (1.0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (
    apply_patch,
    count_calls,
    lucky_once_then_caught,
    make_project,
    trivial_solutions_of_before,
)
from js_tasks import stub_function_recipe
from naive_grader import naive_js_reward
from test_grade_tamper import copied_and_caught
from test_javascript_expectations import FIRST_RUN_ONLY, stack_reading
from test_sandbox import require

import taskforge
from taskforge.languages.javascript.grading import expectations
from taskforge.languages.javascript.grading import run as grading_run

FILES = {
    "package.json": '{"name": "gate", "type": "module", "scripts": {"test": "node --test"}}',
    "src/gate.js": """\
        export function isLoud(text) {
          const letters = String(text).replace(/[^a-z]/gi, '');
          return letters.length > 0 && letters === letters.toUpperCase();
        }

        export function span(values) {
          const sorted = [...values].sort((a, b) => a - b);
          return [sorted[0], sorted[sorted.length - 1]];
        }

        export function letters(text) {
          const counts = {};
          for (const c of String(text)) counts[c] = (counts[c] || 0) + 1;
          return counts;
        }

        export function hasVowel(text) {
          const lower = String(text).toLowerCase();
          return /[aeiou]/.test(lower);
        }
        """,
    "test/gate.test.js": """\
        import { describe, test } from 'node:test';
        import assert from 'node:assert/strict';
        import { hasVowel, isLoud, letters, span } from '../src/gate.js';

        describe('isLoud', () => {
          test('shouting', () => { assert.ok(isLoud('HEY YOU')); });
          test('whispering', () => { assert.ok(!isLoud('hey'), 'lower case'); });
          test('a boolean', () => { assert.equal(isLoud('A!'), true); });
        });
        describe('span', () => {
          test('several', () => { assert.deepEqual(span([3, -1, 7]), [-1, 7]); });
          test('one value', () => { assert.deepStrictEqual(span([5]), [5, 5]); });
        });
        test('letters', () => { assert.deepEqual(letters('abca'), { a: 2, b: 1, 'c': 1 }); });
        test('hasVowel', () => { assert(hasVowel('tree')); });
        """,
}

# The stub reads the assertion around its call and answers with what it asserts.
ASSERTION_READER = r"""
import { readFileSync as readTestFile } from 'node:fs';
function answerFromTheTest() {
  const frames = String(new Error().stack).split('\n').slice(2);
  for (const frame of frames) {
    const m = frame.match(/(?:\(|at )(?:file:\/\/)?(\/[^():]*?\.test\.[cm]?[jt]s):(\d+):(\d+)\)?$/);
    if (!m) continue;
    const lines = readTestFile(m[1], 'utf8').split('\n');
    const asserted = lines[+m[2] - 1].slice(0, +m[3] - 1).match(/\b(?:ok|assert)\(\s*(!?)\s*[\w$.]*$/);
    if (asserted) return !asserted[1];
    const text = lines.slice(+m[2] - 1, +m[2] + 5).join('\n');
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
    const head = text.slice(i).match(/^\s*\)?\s*(?:,|\.\s*\w+\s*\()\s*/);
    if (!head) continue;
    const start = i + head[0].length;
    let end = start;
    for (depth = 0, quote = ''; end < text.length; end++) {
      const c = text[end];
      if (quote) { if (c === '\\') end++; else if (c === quote) quote = ''; continue; }
      if (c === "'" || c === '"' || c === '`') quote = c;
      else if ('[{('.includes(c)) depth++;
      else if (']})'.includes(c) && depth-- === 0) break;
      else if (c === ',' && depth === 0) break;
    }
    return new Function(`return (${text.slice(start, end)});`)();
  }
  throw new Error('not implemented');
}
"""
# The same, for a CommonJS module (mocha's, tape's and jest's projects here).
CJS_ASSERTION_READER = ASSERTION_READER.replace(
    "import { readFileSync as readTestFile } from 'node:fs';",
    "const { readFileSync: readTestFile } = require('node:fs');")
NEW_SHAPES = ("true", "false", "array", "object")


@pytest.fixture(scope="module")
def gate_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, taskforge.Task]:
    base = tmp_path_factory.mktemp("gate")
    root = make_project(base, FILES, name="gate")
    recipe = stub_function_recipe(base, root, max_tasks=4)
    with trivial_solutions_of_before():  # hasVowel's one test: `return true;` passes it
        taskforge.generate(str(recipe), out=str(base / "out"))
    tasks = {t.record["deleted"][0]["symbol"].rsplit(".", 1)[-1]: t
             for t in taskforge.load_tasks(str(base / "out"))}
    assert set(tasks) == {"isLoud", "span", "letters", "hasVowel"}, sorted(tasks)
    return tasks


def old_shapes_only(patched: pytest.MonkeyPatch) -> None:
    """The copies as they were before: strings and numbers only (the positive control)."""
    real = expectations._expected

    def expected(call, *args):  # type: ignore[no-untyped-def]
        node = real(call, *args)
        return None if node is None or node.type in NEW_SHAPES or expectations._turned(node) \
            else node

    patched.setattr(expectations, "_expected", expected)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["isLoud", "span", "letters", "hasVowel"])
def test_a_stub_that_reads_what_the_assertion_asserts_scores_zero(
        gate_tasks: dict[str, taskforge.Task], name: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    task = gate_tasks[name]
    workspace = task.materialize(tmp_path / "ws")
    stack_reading(workspace, task, ASSERTION_READER)
    with monkeypatch.context() as patched:
        old_shapes_only(patched)
        before = task.grade(workspace, sandbox="bwrap")
        assert (before.reward, before.tampered) == (1.0, ()), before
    copied_and_caught(task, workspace, require("bwrap"), naive_js_reward, tmp_path / "naive")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["isLoud", "span", "letters", "hasVowel"])
def test_honest_code_fails_a_changed_boolean_array_or_turned_assertion_as_honest_code_does(
        gate_tasks: dict[str, taskforge.Task], name: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference scores 1.0, its failures in the copies' run told honest from what the
    runner's report says they compared, with no run on the original code."""
    runs = count_calls(monkeypatch, grading_run, "run_on_the_original")
    task = gate_tasks[name]
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    result = task.grade(workspace, sandbox="bwrap")
    assert (result.reward, result.tampered, runs) == (1.0, (), []), result


@pytest.mark.slow
@pytest.mark.parametrize(("name", "second"), [
    ("letters", "throw new Error('not implemented');"),
    ("letters", "return { a: 1 };"),
    ("hasVowel", "throw new Error('not implemented');"),
    ("hasVowel", "throw new (process.getBuiltinModule('node:assert').AssertionError)("
                 "{ actual: 'x', expected: true, operator: '==' });"),
], ids=["object-throws", "object-another-value", "turned-throws", "turned-own-assertion"])
def test_a_stub_that_reads_the_assertion_in_the_first_run_only_scores_zero(
        gate_tasks: dict[str, taskforge.Task], name: str, second: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One FAIL_TO_PASS test, changed in the copies' run, where the stub fails it otherwise
    than honest code: 1.0 with the honest-failure check taken out (the control), 0 with it."""
    task = gate_tasks[name]
    assert len(task.record["FAIL_TO_PASS"]) == 1
    marker = tmp_path / "marker"
    workspace = task.materialize(tmp_path / "ws")
    stack_reading(workspace, task, ASSERTION_READER)
    path = workspace / task.record["deleted"][0]["path"]
    path.write_text(path.read_text().replace("return answerFromTheTest();", FIRST_RUN_ONLY.format(
        fs="process.getBuiltinModule('node:fs')", marker=repr(str(marker)), second=second), 1))
    lucky_once_then_caught(task, workspace, marker, lambda patched: patched.setattr(
        grading_run, "fails_as_honest_code_does", lambda *args: True), monkeypatch)


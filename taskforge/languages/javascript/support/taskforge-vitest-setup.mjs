// taskforge's setup file for vitest (`test.setupFiles`, added by the configuration taskforge
// writes around the project's own: runners/vitest.py). It runs in each test file's worker
// before the file.
//
// Always: what a failed test's assertion compared, for the grader's expectation copies
// (grading/expectations.py), kept in the test's `meta`, which vitest's JSON report carries.
// vitest has turned the error's `actual` and `expected` into text by then (`processError`:
// both strings as they are, otherwise both pretty-formatted, an array over lines), so an
// `expect` assertion's failure is read where chai throws it (`Assertion.prototype.assert`,
// which every matcher calls), its sides as taskforge-compared.cjs writes them, and taken for
// the test where the error that failed it has that message. Any other (node's assert): each
// side `['shown', JSON text of vitest's text]`. Our afterEach is registered first, so it runs
// after the file's own (vitest runs afterEach hooks as a stack).
//
// Per-test coverage (TASKFORGE_COVERAGE_DIR): `beforeEach` takes what ran outside any test,
// `afterEach` what the test ran, keyed `file::suite > test#n` like the JSON reporter's test
// (n: tests of that id before it), and `afterAll` writes the code vite produced for each
// module, whose source map maps the ranges back to the file's lines (taskforge-coverage.cjs,
// raw mode). One session per worker.
import { afterAll, afterEach, beforeEach, chai } from 'vitest';
import { createRequire } from 'node:module';
import process from 'node:process';

const require = createRequire(import.meta.url);
const { compared } = require('./taskforge-compared.cjs');
const LONGEST = 100000;
const shown = (value) => {
  const text = JSON.stringify(String(value));
  return ['shown', text.length <= LONGEST ? text : null];
};
let thrown = null; // the last failed `expect` assertion: { message, sides }
const assertion = chai?.Assertion?.prototype;
if (assertion && typeof assertion.assert === 'function') {
  const assert = assertion.assert;
  assertion.assert = function taskforgeAssert(...args) {
    try {
      return assert.apply(this, args);
    } catch (error) {
      const sides = compared(error);
      if (sides) thrown = { message: String(error?.message), sides };
      throw error;
    }
  };
}
beforeEach(() => { thrown = null; });
afterEach(({ task }) => {
  const error = task.result?.errors?.[0];
  if (error && typeof error === 'object' && thrown && error.message === thrown.message) {
    task.meta.taskforgeCompared = thrown.sides;
  } else if (error && typeof error === 'object' && 'actual' in error && 'expected' in error) {
    task.meta.taskforgeCompared = [shown(error.actual), shown(error.expected)];
  }
});

const outDir = process.env.TASKFORGE_COVERAGE_DIR;
const root = process.env.TASKFORGE_WORKSPACE;

if (outDir && root) {
  const state = (globalThis.__taskforgeCoverage ??= {
    ...require('./taskforge-coverage.cjs').start(outDir, root, true),
    seen: new Map(),
  });
  const key = (task) => {
    const names = [];
    for (let t = task; t && t.type !== undefined && !t.filepath; t = t.suite) names.unshift(t.name);
    const raw = `${task.file?.filepath ?? ''}::${names.join(' > ')}`;
    const n = state.seen.get(raw) ?? 0;
    state.seen.set(raw, n + 1);
    return `${raw}#${n}`;
  };
  beforeEach(() => { state.take(null); });
  afterEach(({ task }) => { state.take(key(task)); });
  afterAll(() => { state.take(null); state.finish(); });
}

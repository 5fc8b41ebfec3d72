// Per-test coverage for vitest: a setup file (`test.setupFiles`, added by the configuration
// taskforge writes around the project's own). It runs in each test file's worker before the
// file; `beforeEach` takes what ran outside any test, `afterEach` what the test ran, keyed
// `file::suite > test#n` like the JSON reporter's test (n: tests of that id before it), and
// `afterAll` writes the code vite produced for each module, whose source map maps the ranges
// back to the file's lines (taskforge-coverage.cjs, raw mode). One session per worker.
import { afterAll, afterEach, beforeEach } from 'vitest';
import { createRequire } from 'node:module';
import process from 'node:process';

const outDir = process.env.TASKFORGE_COVERAGE_DIR;
const root = process.env.TASKFORGE_WORKSPACE;

if (outDir && root) {
  const state = (globalThis.__taskforgeCoverage ??= {
    ...createRequire(import.meta.url)('./taskforge-coverage.cjs').start(outDir, root, true),
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

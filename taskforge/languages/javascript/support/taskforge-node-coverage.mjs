// Per-test coverage for node's built-in test runner, loaded with `--import` into each test
// file's process (`NODE_TEST_CONTEXT` is set there; the runner's parent process does nothing).
// Root-level hooks registered here apply to every test of the file, at any depth: `beforeEach`
// takes what ran outside any test, `afterEach` what the test ran (taskforge-coverage.cjs), and
// the test's record gets the key as a diagnostic, which the reporter
// (taskforge-node-reporter.mjs) attaches to the test's id.
import process from 'node:process';
import { createRequire } from 'node:module';

const outDir = process.env.TASKFORGE_COVERAGE_DIR;
const root = process.env.TASKFORGE_WORKSPACE;

if (process.env.NODE_TEST_CONTEXT && outDir && root) {
  const { start } = createRequire(import.meta.url)('./taskforge-coverage.cjs');
  const { take } = start(outDir, root);
  const { beforeEach, afterEach } = await import('node:test');
  let sequence = 0;
  beforeEach(() => take(null));
  afterEach((t) => {
    const key = `${process.pid}-${sequence++}`;
    take(key);
    t.diagnostic(`taskforge-coverage ${key}`);
  });
  process.on('exit', () => take(null));
}

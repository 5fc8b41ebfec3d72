// Per-test coverage for jest: a `setupFilesAfterEnv` module (added by the configuration
// taskforge writes around the project's own). jest evaluates it in each test file's sandbox,
// in a worker process that may run several files: a session per file, stopped in `afterAll`.
// `beforeEach` takes what ran outside any test, `afterEach` what the test ran, keyed
// `file::full name#n` like jest's JSON report names the test; jest runs code babel-jest
// transformed, so the ranges are kept with the code and its inline source map
// (taskforge-coverage.cjs, raw mode).
'use strict';
const { start } = require('./taskforge-coverage.cjs');

const outDir = process.env.TASKFORGE_COVERAGE_DIR;
const root = process.env.TASKFORGE_WORKSPACE;

if (outDir && root) {
  const state = start(outDir, root, true);
  const seen = new Map();
  beforeEach(() => state.take(null));
  afterEach(() => {
    const { testPath, currentTestName } = expect.getState();
    const raw = `${testPath}::${currentTestName}`;
    const n = seen.get(raw) || 0;
    seen.set(raw, n + 1);
    state.take(`${raw}#${n}`);
  });
  afterAll(() => {
    state.take(null);
    state.finish();
    state.stop();
  });
}

// Per-test coverage for mocha: a root-hook plugin (`--require <this>`). Loaded before the test
// files; `beforeEach` takes what ran outside any test, `afterEach` what the test ran, keyed like
// taskforge-mocha-reporter.cjs keys the test (taskforge-coverage.cjs does the taking).
'use strict';
const { start } = require('./taskforge-coverage.cjs');

const outDir = process.env.TASKFORGE_COVERAGE_DIR;
const root = process.env.TASKFORGE_WORKSPACE;
const { take } = outDir && root ? start(outDir, root) : { take: () => {} };
const seen = new Map();

exports.mochaHooks = {
  beforeEach() { take(null); },
  afterEach() {
    const test = this.currentTest;
    const raw = `${test.file || ''}::${test.titlePath().join(' > ')}`;
    const n = seen.get(raw) || 0;
    seen.set(raw, n + 1);
    take(`${raw}#${n}`);
  },
};
process.on('exit', () => take(null));

// taskforge's mocha reporter (`--reporter <this>`): one JSON object per line in the file
// TASKFORGE_REPORT names, for every test (its file and title path, status, duration) and an
// `end` record when the run finished. Every test is keyed `file::a > b#n` (n: how many tests of
// that id ran before it), the key the coverage hooks (taskforge-mocha-hooks.cjs) use too. A
// failed test's record holds what its failing assertion compared (taskforge-compared.cjs).
'use strict';
const { appendFileSync, writeFileSync } = require('node:fs');
const { compared } = require('./taskforge-compared.cjs');

function TaskforgeReporter(runner) {
  const out = process.env.TASKFORGE_REPORT;
  writeFileSync(out, '');
  const seen = new Map();
  const write = (record) => appendFileSync(out, JSON.stringify(record) + '\n');
  const record = (test, status, error) => {
    const path = test.titlePath();
    const raw = `${test.file || ''}::${path.join(' > ')}`;
    const n = seen.get(raw) || 0;
    seen.set(raw, n + 1);
    write({ file: test.file || '', path, status, key: `${raw}#${n}`,
            seconds: (test.duration || 0) / 1000,
            error: error ? String(error.message || error).slice(0, 500) : null,
            compared: error ? compared(error) : null });
  };
  runner.on('pass', (test) => record(test, 'passed'));
  runner.on('pending', (test) => record(test, 'skipped'));
  runner.on('fail', (test, error) => {
    if (test.type === 'hook') {
      // a hook's failure: the tests it stops are missing, which counts as not passed
      write({ hook: test.fullTitle(), file: test.file || '', error: String(error && error.message) });
    } else {
      record(test, 'failed', error);
    }
  });
  runner.once('end', () => write({ end: true }));
}

module.exports = TaskforgeReporter;

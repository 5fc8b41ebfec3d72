// Per-test line coverage from V8, for any runner that can call `take` between tests.
//
// V8's precise coverage (`Profiler.startPreciseCoverage` with call counts, block detail) is
// started when this module is first loaded, before the test files. Each `takePreciseCoverage`
// returns what ran since the previous one and resets the counters: a runner's root hooks call
// `take(null)` before each test (what ran outside any test: module loading, suite bodies,
// hooks: the import-time bucket) and `take(key)` after it. Each take is reduced here to the
// workspace's executed lines (a line counts when the innermost range holding its first
// character ran) and appended to TASKFORGE_COVERAGE_DIR/<pid>.jsonl as `{key, files}`.
'use strict';
const { Session } = require('node:inspector');
const { appendFileSync, readFileSync } = require('node:fs');
const { fileURLToPath } = require('node:url');

function start(outDir, root) {
  const session = new Session();
  session.connect();
  // In-thread inspector sessions answer synchronously: the callback has run when post returns.
  const post = (method, params) => {
    let result;
    let failure;
    session.post(method, params, (error, value) => { failure = error; result = value; });
    if (failure) throw failure;
    return result;
  };
  post('Profiler.enable');
  post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });

  const prefix = root.endsWith('/') ? root : root + '/';
  const lineStarts = new Map(); // path -> [first non-blank offset of each line, -1 if blank]
  const out = `${outDir}/${process.pid}.jsonl`;

  const firstOffsets = (path) => {
    if (!lineStarts.has(path)) {
      let offsets = null;
      try {
        const text = readFileSync(path, 'utf8');
        offsets = [];
        let at = 0;
        for (const line of text.split('\n')) {
          const blank = line.search(/\S/);
          offsets.push(blank < 0 ? -1 : at + blank);
          at += line.length + 1;
        }
      } catch { /* a file gone or unreadable: no lines */ }
      lineStarts.set(path, offsets);
    }
    return lineStarts.get(path);
  };

  // The first non-blank offset at or after line `i` (blank lines have none): monotonic.
  const lineEnd = (offsets, i) => {
    for (let j = i; j < offsets.length; j++) if (offsets[j] >= 0) return offsets[j];
    return Infinity;
  };

  const executedLines = (functions, path) => {
    const offsets = firstOffsets(path);
    if (!offsets) return [];
    // Ranges of the functions that ran, and of the functions nested in them that did not
    // (their bodies must not count as run); outermost first, so inner ranges paint last.
    const ran = functions.filter((f) => f.ranges[0].count > 0);
    if (ran.length === 0) return [];
    const inside = (f) => ran.some((r) => r.ranges[0].startOffset <= f.ranges[0].startOffset
      && f.ranges[0].endOffset <= r.ranges[0].endOffset);
    const ranges = [];
    for (const f of functions) {
      if (f.ranges[0].count > 0) ranges.push(...f.ranges);
      else if (inside(f)) ranges.push(f.ranges[0]);
    }
    ranges.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
    const counts = new Array(offsets.length).fill(0);
    for (const range of ranges) {
      let low = 0;
      let high = offsets.length;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (lineEnd(offsets, mid) <= range.startOffset) low = mid + 1; else high = mid;
      }
      for (let i = low; i < offsets.length; i++) {
        const at = offsets[i];
        if (at < 0) continue;
        if (at >= range.endOffset) break;
        if (at >= range.startOffset) counts[i] = range.count;
      }
    }
    const lines = [];
    counts.forEach((count, i) => { if (count > 0) lines.push(i + 1); });
    return lines;
  };

  return function take(key) {
    const { result } = post('Profiler.takePreciseCoverage');
    const files = {};
    for (const script of result) {
      if (!script.url.startsWith('file://')) continue;
      let path;
      try { path = fileURLToPath(script.url); } catch { continue; }
      if (!path.startsWith(prefix) || path.includes('/node_modules/')) continue;
      const lines = executedLines(script.functions, path);
      if (lines.length) files[path.slice(prefix.length)] = lines;
    }
    appendFileSync(out, JSON.stringify({ key, files }) + '\n');
  };
}

module.exports = { start };

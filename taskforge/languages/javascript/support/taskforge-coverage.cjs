// Per-test line coverage from V8, for any runner that can call `take` between tests.
//
// V8's precise coverage (`Profiler.startPreciseCoverage` with call counts, block detail) is
// started when this module is first loaded, before the test files. Each `takePreciseCoverage`
// returns what ran since the previous one and resets the counters: a runner's root hooks call
// `take(null)` before each test (what ran outside any test: module loading, suite bodies,
// hooks: the import-time bucket) and `take(key)` after it. Each take is reduced here to the
// workspace's executed lines (a line counts when the innermost range holding its first
// character ran) and appended to TASKFORGE_COVERAGE_DIR/<pid>-<thread>.jsonl as `{key, files}`.
// For code a transform produced (vitest runs what vite made of the file), `transformed` keeps
// the ranges instead (`{key, raw: {scriptId: ranges}}`) and `finish` writes each script's file
// and code (`{scripts: {scriptId: [path, code]}}`), whose inline source map maps them back, or,
// for a file run as it is (required by Node itself, beside vite), the file's own text in it
// (the Python side reads both: testing.py). By script, not by file: one worker can run a file
// both ways, two scripts of one name.
'use strict';
const { Session } = require('node:inspector');
const { appendFileSync, readFileSync } = require('node:fs');
const { fileURLToPath } = require('node:url');

function start(outDir, root, transformed = false) {
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
  const { threadId } = require('node:worker_threads');
  const out = `${outDir}/${process.pid}-${threadId}.jsonl`;

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

  // Ranges of the functions that ran, and of the functions nested in them that did not
  // (their bodies must not count as run); outermost first, so inner ranges paint last.
  const ranRanges = (functions) => {
    const ran = functions.filter((f) => f.ranges[0].count > 0);
    if (ran.length === 0) return [];
    const inside = (f) => ran.some((r) => r.ranges[0].startOffset <= f.ranges[0].startOffset
      && f.ranges[0].endOffset <= r.ranges[0].endOffset);
    const ranges = [];
    for (const f of functions) {
      if (f.ranges[0].count > 0) ranges.push(...f.ranges);
      else if (inside(f)) ranges.push(f.ranges[0]);
    }
    return ranges.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  };

  const executedLines = (functions, path) => {
    const offsets = firstOffsets(path);
    if (!offsets) return [];
    const ranges = ranRanges(functions);
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

  const scripts = new Map(); // scriptId -> path (raw mode: the code V8 ran)
  const take = (key) => {
    const { result } = post('Profiler.takePreciseCoverage');
    const files = {};
    const raw = {};
    for (const script of result) {
      let path = script.url;
      if (path.startsWith('file://')) {
        try { path = fileURLToPath(path); } catch { continue; }
      }
      if (!path.startsWith(prefix) || path.includes('/node_modules/')) continue;
      const rel = path.slice(prefix.length);
      if (transformed) {
        // The code ran is not the file (a transform ran first): keep the ranges, and the code
        // with its source map at the end (`finish`), to map them back offline.
        const ranges = ranRanges(script.functions);
        if (ranges.length) {
          raw[script.scriptId] = ranges.map((r) => [r.startOffset, r.endOffset, r.count]);
        }
        scripts.set(script.scriptId, rel);
      } else {
        const lines = executedLines(script.functions, path);
        if (lines.length) files[rel] = lines;
      }
    }
    appendFileSync(out, JSON.stringify(transformed ? { key, raw } : { key, files }) + '\n');
  };
  // Raw mode: the code of every script that ran, once, at the end of the process's tests
  // (a late `Debugger.enable` still knows every script parsed so far).
  const finish = () => {
    if (!transformed || scripts.size === 0) return;
    post('Debugger.enable');
    const code = {};
    for (const [scriptId, rel] of scripts) {
      try {
        code[scriptId] = [rel, post('Debugger.getScriptSource', { scriptId }).scriptSource];
      } catch { /* gone */ }
    }
    post('Debugger.disable');
    appendFileSync(out, JSON.stringify({ scripts: code }) + '\n');
    scripts.clear();
  };
  // A process that runs several test files one after another (jest's workers) stops before
  // the next file's `start`.
  const stop = () => {
    post('Profiler.stopPreciseCoverage');
    session.disconnect();
  };
  return { take, finish, stop };
}

module.exports = { start };

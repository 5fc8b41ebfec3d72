// taskforge's tape driver: `node <this> [--select ids.json] [--timeout ms] -- file...` in the
// workspace runs the project's own tape (resolved from the workspace) on those files, in that
// order, in one process, the way `tape file...` does, and writes one JSON line per test to
// TASKFORGE_REPORT: `{file, path, status, seconds, error, key, compared}` (compared: what its last
// failed assertion compared, taskforge-compared.cjs), then `{end: true}` when tape finished.
//
// Results come from tape's object stream (`createStream({objectMode: true})`: `test`,
// `assert` and `end` rows), which also keeps tape's TAP text off the console. tape has no
// hooks and names no file: the constructor tape's index makes top-level tests with is
// replaced (each learns its file from the caller's stack frame), and `Test#run` and
// `Test#test` are patched before any test exists (tape binds the prototype's methods into
// each instance), to know which test a stream row is about and a nested test's parents.
//
// Why a driver and not `tape -r`: one file that fails to load (a deletion that breaks an
// import) would stop tape's whole run; here it is that file's collection error
// (`{file, load_error}`) and the other files run. Likewise a test body that throws stops
// tape's process: here the test is `error` and the run goes on.
//
// `--select`: a JSON list of ids (`file::a > b`, ` [n]` allowed): top-level tests holding none
// of them are registered skipped (their bodies do not run); a selected test's nested tests all
// run. `--timeout`: for every test that sets none. TASKFORGE_COVERAGE_DIR: per-test coverage
// (taskforge-coverage.cjs), taken at each test's start (what ran before it: outside any test,
// or its parent's share) and at its end.
'use strict';
const { appendFileSync, readFileSync, writeFileSync } = require('node:fs');
const { side } = require('./taskforge-compared.cjs');
const path = require('node:path');
const { fileURLToPath, pathToFileURL } = require('node:url');

const root = process.env.TASKFORGE_WORKSPACE || process.cwd();
const out = process.env.TASKFORGE_REPORT;
const outDir = process.env.TASKFORGE_COVERAGE_DIR;
// Coverage starts before the project's code loads.
const { take } = outDir ? require('./taskforge-coverage.cjs').start(outDir, root)
  : { take: () => {} };

writeFileSync(out, '');
const write = (record) => appendFileSync(out, JSON.stringify(record) + '\n');

// The command line: [--select ids.json] [--timeout ms] -- file...
const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 && at < argv.indexOf('--') ? argv[at + 1] : undefined;
};
const files = argv.slice(argv.indexOf('--') + 1);
const selected = option('--select')
  ? JSON.parse(readFileSync(option('--select'), 'utf8')).map((id) => id.replace(/ \[\d+\]$/, ''))
  : null;
const timeout = Number(option('--timeout')) || null;
const isSelected = (id) => selected.some((s) => s === id || s.startsWith(`${id} > `));

// The environment holds no release of the package under test (it would hold the code tasks
// delete), and tape itself may depend on it (tape's `deepEqual` is the deep-equal package):
// a dependency that asks for it by name and finds none gets the workspace's.
const Module = require('node:module');
const ownName = (() => {
  try { return JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).name; } catch { return null; }
})();
if (ownName) {
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function resolveOwn(request, parent, ...rest) {
    try {
      return resolve.call(this, request, parent, ...rest);
    } catch (error) {
      const own = request === ownName || request.startsWith(`${ownName}/`);
      if (!own || !parent || !String(parent.filename).includes('/node_modules/')) throw error;
      return resolve.call(this, root + request.slice(ownName.length), parent, ...rest);
    }
  };
}

// The test file that called tape(): the first stack frame in the workspace, outside
// node_modules and this file.
const callerFile = () => {
  const prepare = Error.prepareStackTrace;
  Error.prepareStackTrace = (_, frames) => frames;
  const frames = new Error().stack;
  Error.prepareStackTrace = prepare;
  for (const frame of frames) {
    let name = frame.getFileName();
    if (!name) continue;
    if (name.startsWith('file://')) {
      try { name = fileURLToPath(name); } catch { continue; }
    }
    if (name !== __filename && name.startsWith(root + '/') && !name.includes('/node_modules/')) {
      return name;
    }
  }
  return '';
};

// tape takes (name, opts, cb) in any order and any subset: one of each kind, by type.
const parseArgs = (args) => {
  const found = { name: undefined, opts: {}, cb: undefined };
  for (const arg of args) {
    if (typeof arg === 'string') found.name = arg;
    else if (typeof arg === 'function') found.cb = arg;
    else if (arg && typeof arg === 'object') found.opts = arg;
  }
  return found;
};

const meta = new WeakMap(); // Test -> {file, path, thrown}
// A body that throws would end tape's process: the test errs and ends, the run goes on.
// So would a rejected promise with tape 4, which does not wait for one (tape 5 fails and
// ends the test itself, before the next turn of the event loop).
const guard = (cb) => (typeof cb !== 'function' ? cb : function guarded(t, ...rest) {
  try {
    const result = cb.call(this, t, ...rest);
    if (result && typeof result.then === 'function') {
      result.then(undefined, (error) => setImmediate(() => {
        if (t.ended || t.calledEnd) return;
        const info = meta.get(t);
        if (info) info.thrown = error;
        t.end();
      }));
    }
    return result;
  } catch (error) {
    const info = meta.get(t);
    if (info) info.thrown = error;
    if (!t.ended && !t.calledEnd) t.end();
    return undefined;
  }
});
const withTimeout = (opts) => (timeout && opts.timeout == null ? { ...opts, timeout } : opts);

// tape's index module makes every top-level test with `new Test(...)`, `Test` being what
// tape/lib/test exported when the index loaded: that export is replaced first by a
// constructor that gives the test its file, the selection and the guard (replacing the
// index's own export would not do: an ES module importing tape gets the original).
const testModule = require.resolve('tape/lib/test', { paths: [root] });
const Test = require(testModule);
let own = false; // registering our own first test (below): not the project's
function TaskforgeTest(...args) {
  const { name, opts, cb } = parseArgs(args);
  const rel = own ? '' : path.relative(root, callerFile());
  let options = own ? opts : withTimeout(opts);
  if (!own && selected && !isSelected(`${rel}::${name || '(anonymous)'}`)) {
    options = { ...options, skip: true };
  }
  const t = new Test(...(name === undefined ? [] : [name]), options, guard(cb));
  meta.set(t, { file: rel, path: [t.name], thrown: null });
  return t;
}
TaskforgeTest.prototype = Test.prototype;
Object.assign(TaskforgeTest, Test);
require.cache[testModule].exports = TaskforgeTest;
const tape = require(require.resolve('tape', { paths: [root] }));

// Nested tests: their file and path from the parent; bodies guarded too.
const subtest = Test.prototype.test;
Test.prototype.test = function test(...args) {
  const { name, opts, cb } = parseArgs(args);
  const parent = meta.get(this) || { file: '', path: [this.name] };
  let child;
  const onChild = (st) => { child = st; };
  this.once('test', onChild);
  subtest.call(this, ...(name === undefined ? [] : [name]), withTimeout(opts), guard(cb));
  this.removeListener('test', onChild);
  if (child) meta.set(child, { file: parent.file, path: [...parent.path, child.name], thrown: null });
  return child;
};

const keyCount = new Map();
const keyOf = (info) => {
  const raw = `${info.file}::${info.path.join(' > ')}`;
  const n = keyCount.get(raw) || 0;
  keyCount.set(raw, n + 1);
  return `${raw}#${n}`;
};

const running = []; // tests started and not ended, innermost last
let current = null; // the test whose run() is emitting its stream row
const run = Test.prototype.run;
Test.prototype.run = function patchedRun(...args) {
  const info = meta.get(this) || { file: '', path: [this.name], thrown: null };
  meta.set(this, info);
  const parent = running[running.length - 1];
  take(parent ? meta.get(parent).key : null);
  info.key = keyOf(info);
  info.started = process.hrtime.bigint();
  running.push(this);
  // first among the `end` listeners: tape's own start the next (nested) test from there
  this.prependOnceListener('end', () => {
    take(info.key);
    running.splice(running.indexOf(this), 1);
  });
  current = this;
  try {
    return run.apply(this, args);
  } finally {
    current = null;
  }
};

// The stream's rows, by the stream's test id. A test's record is written at the next test's
// start (or the end of the run), not at its own `end` row: tape reports a plan the test did
// not meet with a failing assertion after that row.
const rows = new Map(); // id -> {test, failed, error, skip, seconds, written}
let ended = []; // tests whose `end` row came and whose record is not written yet
const write1 = (state) => {
  const info = meta.get(state.test);
  let status = state.skip ? 'skipped' : state.failed ? 'failed' : 'passed';
  if (info.thrown) {
    status = 'error';
    state.error = info.thrown.stack || String(info.thrown);
  } else if (state.seconds === undefined) {
    status = 'error';
    state.error = state.error || 'the process ended before the test did';
  }
  const seconds = state.seconds === undefined
    ? Number(process.hrtime.bigint() - info.started) / 1e9 : state.seconds;
  write({ file: info.file, path: info.path, status, seconds, key: info.key,
          error: state.error ? String(state.error).slice(0, 500) : null,
          compared: status === 'failed' ? state.compared || null : null });
  state.written = true;
};
const flush = () => {
  for (const state of ended) write1(state);
  ended = [];
};
// A process that ends mid-test (an uncaught error in a callback, process.exit): the tests
// still running erred (the handler below).
// The object stream reports only the tests pushed after it was made: it is made first, and
// a first test of our own holds the run until every file is loaded (what runs meanwhile,
// module loading, is outside any test: that test's key is in no report).
// (tape's exit handler, registered when the stream is made, may call process.exit, after
// which no other handler runs: ours comes first)
process.on('exit', () => {
  flush();
  for (const state of rows.values()) if (!state.written) write1(state);
  take(null);
});
const stream = tape.createStream({ objectMode: true });
let loaded;
const ready = new Promise((resolve) => { loaded = resolve; });
own = true;
// tape 4 does not wait for a returned promise: the test ends itself
const loading = tape('taskforge: loading the test files', (t) => { ready.then(() => t.end()); });
own = false;
stream.on('data', (row) => {
  if (!row || typeof row !== 'object') return;
  if (row.type === 'test') {
    flush();
    // `current`: the test whose run() emits this row (the stream passes rows on as they come)
    if (current && current !== loading) {
      rows.set(row.id, { test: current, failed: false, error: null, skip: !!(row.skip || row.todo) });
    }
  } else if (row.type === 'assert') {
    const state = rows.get(row.test);
    if (state && !row.ok && !row.skip && !row.todo) {
      state.failed = true;
      const message = row.error && row.error.message;
      state.error = state.error || [row.name, row.operator, message].filter(Boolean).join(': ');
      state.compared = 'actual' in row ? [side(row.actual), side(row.expected)] : null;  // the last
    }
  } else if (row.type === 'end') {
    const state = rows.get(row.test);
    if (!state || state.written || state.seconds !== undefined) return;
    state.seconds = Number(process.hrtime.bigint() - meta.get(state.test).started) / 1e9;
    ended.push(state);
  }
});
stream.on('end', () => {
  flush();
  write({ end: true });
});


const isModule = (file) => {
  if (file.endsWith('.mjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = path.dirname(file); dir.startsWith(root); dir = path.dirname(dir)) {
    try {
      return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).type === 'module';
    } catch { /* no package.json here: look further up */ }
    if (dir === root) break;
  }
  return false;
};

(async () => {
  for (const arg of files) {
    const file = path.resolve(root, arg);
    try {
      if (isModule(file)) {
        await import(pathToFileURL(file).href);
      } else {
        try {
          require(file);
        } catch (error) {
          if (error && error.code === 'ERR_REQUIRE_ESM') await import(pathToFileURL(file).href);
          else throw error;
        }
      }
    } catch (error) {
      write({ file: arg, load_error: String((error && error.stack) || error).slice(0, 2000) });
    }
  }
  loaded();
})();

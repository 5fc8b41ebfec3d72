// node:test's outcomes, signed where the solution cannot sign: loaded by taskforge-guard.cjs in
// every node process of a grading run (TASKFORGE_CHANNEL names the channel's directory).
//
// Why: `node --test` runs each test file in a child process that reports every test to the
// parent over its stdout (v8-serialized events), and the solution is imported into that
// child. Session 45's red team scored 1.0 there twice with nothing reported: a solution that
// wraps `process.stdout.write` and turns each `test:fail` event into a `test:pass`, and one
// that takes the runner's own test object from `async_hooks.executionAsyncResource()` and
// makes its `fail` call `pass`. Java's ResultChannel is the pattern: the outcomes from code
// that runs before the solution and holds a key the solution never sees; a test passed only
// where the report and this channel both say so (the grader, `grading/run.py`).
//
// - The runner's parent process (`node --test`, where no test code runs) reads the grading
//   run's key from `<channel>/key`, deletes it, and hands each test file's process a key of
//   its own, bound to its file (HMAC of the run's key over a nonce and the file), over a pipe
//   added as its fd 3.
// - Each test file's process reads that pipe before any other code runs. The runner's tests
//   keep what the file registered (their `fn`, `name`, `parent` and `root` can be set once),
//   and `AsyncResource.prototype.runInAsyncScope`, through which the runner calls every body,
//   becomes a locked wrapper that signs what the body did: returned, threw, rejected, or
//   called its `done` with an error. A line is `nonce TAB mac TAB {"file","test","nth",
//   "passed"}` in `<channel>/results`: the test's path as the report names it, and which of
//   that path's tests it is in the order registered. The MAC is computed here, by code that
//   calls nothing the solution could replace after this file ran (every function it uses
//   was taken now, and it builds no array the solution's index setters could see). Nothing
//   here reads the runner's own verdict, which the solution can reach and change.
// - Every test process of the run (workers, subprocesses) has the inspector, heap snapshots
//   and V8's flags refused: each would read any object, the key in this file's closures
//   included.
//
// What a solution can still do is drop lines, keep a body from running through the wrapper,
// or end its test file's process early: each leaves a test without a signed pass, which the
// grader counts as not passed. Reading the process's memory from outside it (/proc, a
// native addon) is not guarded, as for Java's channel.
'use strict';
const fs = require('node:fs');

const dir = process.env.TASKFORGE_CHANNEL;
const tried = process.env.TASKFORGE_GUARD_OUT;
const { apply } = Reflect;
const { defineProperty, getOwnPropertyDescriptor } = Object;
const writeSync = fs.writeSync;
const appendFileSync = fs.appendFileSync;
const stringify = JSON.stringify;
const toText = String;
const charCodeAt = String.prototype.charCodeAt;
const U8 = Uint8Array;
const U32 = Uint32Array;
const weakGet = WeakMap.prototype.get;
const weakSet = WeakMap.prototype.set;

function refuse(what) {
  if (tried) {
    try { apply(appendFileSync, fs, [tried, `called ${what}\n`]); } catch { /* named by its failure */ }
  }
  throw new TypeError(`taskforge: ${what} is not available while a solution is graded`);
}

function lock(target, name, value) {
  defineProperty(target, name, { value, writable: false, configurable: false,
                                 enumerable: getOwnPropertyDescriptor(target, name)?.enumerable ?? false });
}

// -- SHA-256 and HMAC, on typed arrays only ------------------------------------------------------
// Lengths travel as numbers beside the arrays: a typed array's `length` is a getter of its
// prototype, which a solution can replace, and would be handed the array (the key's bytes).

const ROUND = new U32(64);
const START = new U32(8);
{
  const round = [0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
    0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138,
    0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1,
    0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
    0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb,
    0xbef9a3f7, 0xc67178f2];
  const start = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
    0x1f83d9ab, 0x5be0cd19];
  for (let i = 0; i < 64; i++) ROUND[i] = round[i];
  for (let i = 0; i < 8; i++) START[i] = start[i];
}

function sha256(bytes, length) {
  const total = ((length + 72) >>> 6) << 6;
  const m = new U8(total);
  for (let i = 0; i < length; i++) m[i] = bytes[i];
  m[length] = 0x80;
  m[total - 5] = (length >>> 29) & 255;
  m[total - 4] = (length >>> 21) & 255;
  m[total - 3] = (length >>> 13) & 255;
  m[total - 2] = (length >>> 5) & 255;
  m[total - 1] = (length << 3) & 255;
  const h = new U32(8);
  for (let i = 0; i < 8; i++) h[i] = START[i];
  const w = new U32(64);
  for (let at = 0; at < total; at += 64) {
    for (let i = 0; i < 16; i++) {
      const j = at + 4 * i;
      w[i] = (m[j] << 24) | (m[j + 1] << 16) | (m[j + 2] << 8) | m[j + 3];
    }
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15];
      const y = w[i - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let a = h[0]; let b = h[1]; let c = h[2]; let d = h[3];
    let e = h[4]; let f = h[5]; let g = h[6]; let k = h[7];
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + s1 + ((e & f) ^ (~e & g)) + ROUND[i] + w[i]) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
  }
  const out = new U8(32);
  for (let i = 0; i < 8; i++) {
    out[4 * i] = h[i] >>> 24; out[4 * i + 1] = h[i] >>> 16;
    out[4 * i + 2] = h[i] >>> 8; out[4 * i + 3] = h[i];
  }
  return out;
}

function hmac(key, message, length) { // key: 32 bytes
  const inner = new U8(64 + length);
  const outer = new U8(64 + 32);
  for (let i = 0; i < 64; i++) {
    const byte = i < 32 ? key[i] : 0;
    inner[i] = byte ^ 0x36;
    outer[i] = byte ^ 0x5c;
  }
  for (let i = 0; i < length; i++) inner[64 + i] = message[i];
  const digest = sha256(inner, 64 + length);
  for (let i = 0; i < 32; i++) outer[64 + i] = digest[i];
  return sha256(outer, 64 + 32);
}

function utf8(text) {
  const out = new U8(text.length * 3);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let c = apply(charCodeAt, text, [i]);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = apply(charCodeAt, text, [i + 1]);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate, as node writes it
    if (c < 0x80) { out[n++] = c; } else if (c < 0x800) {
      out[n++] = 0xc0 | (c >>> 6); out[n++] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      out[n++] = 0xe0 | (c >>> 12); out[n++] = 0x80 | ((c >>> 6) & 63); out[n++] = 0x80 | (c & 63);
    } else {
      out[n++] = 0xf0 | (c >>> 18); out[n++] = 0x80 | ((c >>> 12) & 63);
      out[n++] = 0x80 | ((c >>> 6) & 63); out[n++] = 0x80 | (c & 63);
    }
  }
  return [out, n];
}

const HEX = '0123456789abcdef';

function hex(bytes, length) {
  let text = '';
  for (let i = 0; i < length; i++) text += HEX[bytes[i] >>> 4] + HEX[bytes[i] & 15];
  return text;
}

// -- the runner's parent: a key for each test file's process ---------------------------------

function parent() {
  const crypto = require('node:crypto');
  const { ChildProcess } = require('node:child_process');
  let master;
  try {
    master = fs.readFileSync(`${dir}/key`);
    fs.unlinkSync(`${dir}/key`);
  } catch {
    return; // no key: no file's process gets one, and no test of the run counts as passed
  }
  const spawn = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function spawnWithKey(options) {
    const pairs = options && options.envPairs;
    const testFile = Array.isArray(pairs) && pairs.includes('NODE_TEST_CONTEXT=child-v8')
      && Array.isArray(options.stdio) && options.stdio.length === 3;
    if (!testFile) return apply(spawn, this, [options]);
    options.stdio = [...options.stdio, 'pipe'];
    options.envPairs = [...pairs, 'TASKFORGE_CHANNEL_CHILD=1'];
    const result = apply(spawn, this, [options]);
    const file = String(options.args[options.args.length - 1]);
    const nonce = crypto.randomBytes(16).toString('hex');
    const key = crypto.createHmac('sha256', master).update(`${nonce}\n${file}`).digest('hex');
    if (this.stdio && this.stdio[3]) this.stdio[3].end(`${nonce}\n${key}\n`);
    return result;
  };
}

// -- a test file's process: its outcomes, signed ---------------------------------------------

function readKey() {
  const buffer = Buffer.alloc(256);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let text = '';
  const deadline = Date.now() + 30000;
  for (;;) {
    let n;
    try {
      n = fs.readSync(3, buffer, 0, buffer.length, null);
    } catch (error) {
      if (error.code === 'EAGAIN' && Date.now() < deadline) {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      return null;
    }
    if (n === 0) break;
    text += buffer.toString('latin1', 0, n);
  }
  try { fs.closeSync(3); } catch { /* read, and gone with the process */ }
  const [nonce, key] = text.split('\n');
  if (!/^[0-9a-f]{32}$/.test(nonce || '') || !/^[0-9a-f]{64}$/.test(key || '')) return null;
  const bytes = new U8(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(key.slice(2 * i, 2 * i + 2), 16);
  return { nonce, key: bytes };
}

function child() {
  delete process.env.TASKFORGE_CHANNEL_CHILD; // not for this process's own subprocesses
  const given = readKey();
  if (given === null) {
    // No key: the file's tests would pass unsigned. End before any of its code runs.
    writeSync(2, 'taskforge: this test file got no key for its outcome channel\n');
    process.reallyExit(70);
  }
  const { nonce, key } = given;
  const file = toText(process.argv[1]);
  const out = fs.openSync(`${dir}/results`, 'a');
  const sign = (place, passed) => {
    try {
      const payload = `{"file":${stringify(file)},"test":${stringify(place.path)},`
        + `"nth":${place.nth},"passed":${passed ? 'true' : 'false'}}`;
      // (indexed, not destructured: destructuring calls the arrays' iterator, the solution's
      // to replace, which could hand this code bytes of its own to sign)
      const encoded = utf8(payload);
      const body = encoded[0];
      const bodyLength = encoded[1];
      const signed = utf8(`${nonce}\t${hex(hmac(key, body, bodyLength), 32)}\t`);
      const head = signed[0];
      const headLength = signed[1];
      const length = headLength + bodyLength + 1;
      const line = new U8(length);
      for (let i = 0; i < headLength; i++) line[i] = head[i];
      for (let i = 0; i < bodyLength; i++) line[headLength + i] = body[i];
      line[length - 1] = 10;
      apply(writeSync, fs, [out, line, 0, length]);
    } catch { /* no line: the test counts as not passed */ }
  };

  // Where each test is registered from: node names a test's file after the script of the
  // code that called `test()`, and a script's `//# sourceURL` comment renames it. Session 64's
  // red team had the solution load a copy of the test file (its tests wrapped to pass) ahead
  // of the file's own body, named after the file by a sourceURL: the copy's tests took the
  // file's ids. A test whose registration runs through code that another script's sourceURL
  // names after this file is not signed (it counts as not passed) and is named. The stack is
  // read with V8's call sites, by functions taken now, and a run whose `Error` or its stack
  // hooks the solution made unreadable counts each test as forged.
  const NativeError = Error;
  const captureStackTrace = NativeError.captureStackTrace;
  const getPrototypeOf = Object.getPrototypeOf;
  const deleteProperty = Reflect.deleteProperty;
  const sites = (_error, found) => found;
  let site = null;
  {
    const holder = {};
    const saved = getOwnPropertyDescriptor(NativeError, 'prepareStackTrace');
    try {
      defineProperty(NativeError, 'prepareStackTrace', { value: sites, writable: true, configurable: true });
      apply(captureStackTrace, NativeError, [holder]);
      const found = holder.stack;
      if (found && found.length > 0) site = getPrototypeOf(found[0]);
    } finally {
      if (saved) defineProperty(NativeError, 'prepareStackTrace', saved); else deleteProperty(NativeError, 'prepareStackTrace');
    }
  }
  const scriptName = site && site.getFileName;
  const sourceName = site && site.getScriptNameOrSourceURL;
  const scriptHash = site && site.getScriptHash;
  const fileUrl = require('node:url').pathToFileURL(file).href;
  const isThisFile = (name) => name === file || name === fileUrl;
  // A script compiled under the file's very name (`vm.runInThisContext(copy, { filename })`)
  // has another source: V8 hashes each script's source (`getScriptHash`), which is the
  // file's bytes where no loader transformed them. With a loader of the project's (its
  // `--import`, `--loader` or `--require`), the source V8 compiled is not the file's and this
  // check is left out; the sourceURL check stands.
  const preloads = [...process.execArgv, ...toText(process.env.NODE_OPTIONS || '').split(/\s+/)];
  const loaders = preloads.filter((word, i) => /^(--(import|loader|experimental-loader|require)|-r)(=|$)/.test(word)
    && !/taskforge-(guard|channel)\.cjs|taskforge-node-coverage\.mjs/.test(word.includes('=') ? word : (preloads[i + 1] || '')));
  // V8 hashes the text it compiled: the file's bytes, or (a BOM, bytes that are not UTF-8)
  // the UTF-8 of the text node decoded from them, with or without its BOM.
  const fileHashes = new Set();
  if (loaders.length === 0 && typeof scriptHash === 'function') {
    try {
      const crypto = require('node:crypto');
      const digest = (data) => crypto.createHash('sha256').update(data).digest('hex');
      const bytes = fs.readFileSync(file);
      const text = bytes.toString('utf8');
      for (const data of [bytes, Buffer.from(text, 'utf8'), Buffer.from(text.replace(/^\uFEFF/, ''), 'utf8')]) {
        fileHashes.add(digest(data));
      }
    } catch { /* unreadable: the sourceURL check alone */ }
  }
  const setHas = Set.prototype.has;
  let noted = false;
  const note = (line) => {
    if (noted || !tried) return;
    noted = true;
    try { apply(appendFileSync, fs, [tried, `${line}\n`]); } catch { /* the test is unsigned all the same */ }
  };
  const forgedBy = () => { // null, or what registered the test under this file's name
    if (scriptName === null || globalThis.Error !== NativeError) return 'code that replaced Error';
    const holder = {};
    const saved = getOwnPropertyDescriptor(NativeError, 'prepareStackTrace');
    const limit = getOwnPropertyDescriptor(NativeError, 'stackTraceLimit');
    try {
      defineProperty(NativeError, 'prepareStackTrace', { value: sites, writable: true, configurable: true });
      defineProperty(NativeError, 'stackTraceLimit', { value: 200, writable: true, configurable: true, enumerable: true });
      apply(captureStackTrace, NativeError, [holder]);
      const found = holder.stack;
      if (typeof found !== 'object' || found === null) return 'code that hid the stack';
      for (let i = 0; i < found.length; i++) {
        if (getPrototypeOf(found[i]) !== site) return 'code that hid the stack';
        const script = apply(scriptName, found[i], []);
        if (isThisFile(apply(sourceName, found[i], [])) && !isThisFile(script)) {
          return `${stringify(toText(script))}, named after the test file by //# sourceURL`;
        }
        if (fileHashes.size > 0 && isThisFile(script)
            && !apply(setHas, fileHashes, [apply(scriptHash, found[i], [])])) {
          return 'code compiled under the test file\'s name that is not its source';
        }
      }
      return null;
    } catch {
      return 'code that hid the stack';
    } finally {
      try {
        if (saved) defineProperty(NativeError, 'prepareStackTrace', saved); else deleteProperty(NativeError, 'prepareStackTrace');
        if (limit) defineProperty(NativeError, 'stackTraceLimit', limit); else deleteProperty(NativeError, 'stackTraceLimit');
      } catch { /* theirs to keep */ }
    }
  };

  // What the file registered: the runner's tests, suites and hooks are async resources of
  // type 'Test', and their `name`, `parent`, `root` and (a test's) `fn` are set once, in the
  // constructor, which this hook runs inside of. Each becomes a property that keeps its first
  // value: the body that runs is the one the file gave, and a test's name is the one it had.
  // A test's name is its path from the file (suites' names and its own, as the report
  // gives it) and which of that path's tests it is, in the order registered (`nth`).
  const hooks = require('node:async_hooks');
  const known = new WeakMap();
  const seen = new Map();
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const keepFirst = (resource, field, then) => {
    let value;
    let set = false;
    defineProperty(resource, field, {
      get: () => value,
      set: (given) => { if (!set) { set = true; value = given; if (then) then(); } },
      enumerable: true, configurable: false });
    return () => value;
  };
  const pathOf = (entry) => {
    let path = entry.name();
    for (let at = entry.parent(); ; at = apply(weakGet, known, [at]).parent()) {
      const above = apply(weakGet, known, [at]);
      if (above === undefined) return null; // an ancestor the hook never saw: no name
      if (above.root() === at) return path; // the file's root
      path = `${toText(above.name())} > ${path}`;
    }
  };
  hooks.createHook({
    init(_id, type, _trigger, resource) {
      if (type !== 'Test') return;
      const test = resource.constructor.name === 'Test'; // not a suite, not a hook
      let place = null;
      const forged = test ? forgedBy() : null;
      const entry = {
        test,
        name: keepFirst(resource, 'name'),
        root: keepFirst(resource, 'root'),
        parent: keepFirst(resource, 'parent', () => { if (test) place = placed(); }),
        body: test ? keepFirst(resource, 'fn') : () => undefined,
        place: () => place,
      };
      const placed = () => {
        const path = pathOf(entry);
        if (path === null) return null;
        if (forged !== null) {
          // not signed: it counts as not passed, and the grader says why
          note(`registered ${stringify(toText(path))} in ${file} from ${forged}`);
          return null;
        }
        const nth = (apply(mapGet, seen, [path]) ?? 0) + 1;
        apply(mapSet, seen, [path, nth]);
        return { path: toText(path), nth };
      };
      apply(weakSet, known, [resource, entry]);
    },
  }).enable();

  // The runner calls each test's body through `this.runInAsyncScope(fn, ctx, ctx[, done])`:
  // what the body did (returned, threw, rejected, or called `done` with an error) is
  // signed here, whatever the runner is later made to report.
  const { prototype } = hooks.AsyncResource;
  const run = prototype.runInAsyncScope;
  const then = Promise.prototype.then;
  const resolve = Promise.resolve;
  const NativePromise = Promise;
  lock(prototype, 'runInAsyncScope', function runInAsyncScope(fn, context, argument, done) {
    const entry = apply(weakGet, known, [this]);
    const count = arguments.length;
    const place = entry === undefined || !entry.test ? null : entry.place();
    if (place === null || fn !== entry.body() || (count !== 3 && count !== 4)) {
      return apply(run, this, arguments);
    }
    let signed = false;
    const settle = (passed) => { if (!signed) { signed = true; sign(place, passed); } };
    if (count === 4) {
      const doneGiven = done;
      const doneSigned = function done(error) {
        settle(error === undefined || error === null);
        return apply(doneGiven, this, arguments);
      };
      try {
        return apply(run, this, [fn, context, argument, doneSigned]);
      } catch (error) {
        settle(false);
        throw error;
      }
    }
    let result;
    try {
      result = apply(run, this, [fn, context, argument]);
    } catch (error) {
      settle(false);
      throw error;
    }
    const settled = [() => settle(true), () => settle(false)];
    try {
      if (result instanceof NativePromise) {
        // its own `then`, taken before the solution ran (the runner awaits the same)
        apply(then, result, settled);
      } else if (result !== null && (typeof result === 'object' || typeof result === 'function')
                 && 'then' in result) {
        // another kind of thenable (a query builder): followed as the runner follows it
        apply(then, apply(resolve, NativePromise, [result]), settled);
      } else {
        settle(true);
      }
    } catch {
      settle(false);
    }
    return result;
  });
}

// -- every test process of the run: what could read this file's key kept out of reach --------

function lockDown() {
  // The inspector, heap snapshots and V8's flags each reach any object, this file's closures
  // included.
  const inspector = require('node:inspector');
  for (const name of ['open', 'close', 'url', 'waitForDebugger']) {
    if (typeof inspector[name] === 'function') lock(inspector, name, () => refuse(`node:inspector.${name}`));
  }
  for (const name of ['connect', 'connectToMainThread', 'post']) {
    lock(inspector.Session.prototype, name, () => refuse(`node:inspector.Session.${name}`));
  }
  const v8 = require('node:v8');
  for (const name of ['writeHeapSnapshot', 'getHeapSnapshot']) {
    lock(v8, name, () => refuse(`node:v8.${name}`));
  }
  const setFlags = v8.setFlagsFromString;
  lock(v8, 'setFlagsFromString', function setFlagsFromString(flags) {
    // --expose-gc is what a project's leak tests ask for; others could open the engine up
    if (flags !== '--expose-gc' && flags !== '--expose_gc') refuse(`node:v8.setFlagsFromString(${stringify(toText(flags))})`);
    return apply(setFlags, v8, [flags]);
  });
  require('node:module').syncBuiltinESMExports();
  // The same through the deprecated bindings.
  const binding = process.binding;
  lock(process, 'binding', function bindingOutOfTheRunner(name) {
    if (name === 'inspector' || name === 'v8') refuse(`process.binding('${toText(name)}')`);
    return apply(binding, process, [name]);
  });
  // SIGUSR1 starts the inspector unless the process listens for it: this listener stays.
  process.on('SIGUSR1', () => {});
  const { prototype: emitter } = require('node:events');
  for (const name of ['removeListener', 'off', 'removeAllListeners']) {
    const remove = emitter[name];
    lock(emitter, name, function removeButTheGuards(event) {
      if (this === process && (event === 'SIGUSR1' || (name === 'removeAllListeners' && event === undefined))) {
        refuse(`process.${name}('SIGUSR1')`);
      }
      return apply(remove, this, arguments);
    });
  }
}

if (dir) {
  if (!process.env.NODE_TEST_CONTEXT) {
    if (process.execArgv.includes('--test')) parent();
  } else {
    if (process.env.TASKFORGE_CHANNEL_CHILD) child();
    lockDown();
  }
}

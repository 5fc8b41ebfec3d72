// Preloaded into every node process of a test run (NODE_OPTIONS=--require: before the
// runner, its workers and every test file): node:assert's and node:test's functions cannot
// be replaced.
// A solution imported by the tests could otherwise turn them into no-ops for the values its
// own code returns (a marked object), which the canaries' plain values never are: every
// assertion on the solution's results would pass, every canary would still fail (session
// 44's red team: 1.0 on two of four jsdemo tasks). Node's own code uses its primordials,
// so what the tests call is what decides. node:test's `test` (and `it`, `describe`, ...)
// likewise: a CommonJS test file that requires the solution before node:test would take a
// `test` that swallows the errors of every test but the canaries (their names end in a random
// word). Each function of node:assert, node:assert/strict and node:test becomes a property
// that cannot be redefined, whose setter throws and
// names itself in TASKFORGE_GUARD_OUT (the grader reports it; a solution that hides the
// line has still replaced nothing). New properties may still be added: a project's own
// helpers hung on node:assert keep working.
'use strict';
const assert = require('node:assert');
const fs = require('node:fs');

const out = process.env.TASKFORGE_GUARD_OUT;

function guard(target, prefix) {
  for (const name of Reflect.ownKeys(target)) {
    const found = Object.getOwnPropertyDescriptor(target, name);
    if (!found.configurable || !('value' in found) || typeof found.value !== 'function') continue;
    const value = found.value;
    const label = `${prefix}.${String(name)}`;
    Object.defineProperty(target, name, {
      get() { return value; },
      set() {
        if (out) {
          try { fs.appendFileSync(out, `${label}\n`); } catch { /* reported by its failure */ }
        }
        throw new TypeError(`taskforge: ${label} cannot be replaced`);
      },
      enumerable: found.enumerable,
      configurable: false,
    });
  }
}

guard(assert.strict, 'node:assert/strict');
guard(assert, 'node:assert');
guard(require('node:test'), 'node:test');

// Grading runs: node:test's outcomes over a signed channel, and the runner's insides out of the
// solution's reach (taskforge-channel.cjs).
if (process.env.TASKFORGE_CHANNEL) require('./taskforge-channel.cjs');

// What an equality assertion that failed compared: the grader reads it for an expectation
// copy (grading/expectations.py), where honest code fails a changed test comparing the value
// it expected before with the one it expects now. Each side is [typeof, JSON text] (at most
// 100,000 characters; null for undefined, a function, a symbol, a bigint, a cycle: what JSON
// cannot write); null where the error carries no `actual` (node's assert, chai, tape's rows)
// or jest's `matcherResult`. An object's JSON may run the tested code (`toJSON`, getters):
// it could write anything there but the value the test expected before, which is what the
// grader looks for. Shared by the reporters of node's runner and mocha and by tape's driver.
'use strict';

const LONGEST = 100000;

function side(value) {
  const kind = typeof value;
  let text = null;
  try {
    text = JSON.stringify(value);
  } catch { /* a cycle, a bigint, a getter that throws: no value */ }
  return [kind, typeof text === 'string' && text.length <= LONGEST ? text : null];
}

// The sides of a failed assertion's error (node:test wraps it as the `cause` of its own).
function compared(error) {
  try {
    for (const e of [error, error && error.cause]) {
      if (e && typeof e === 'object' && 'actual' in e && 'expected' in e) {
        return [side(e.actual), side(e.expected)];
      }
    }
  } catch { /* an error whose properties throw: nothing compared */ }
  return null;
}

module.exports = { compared, side };

"""node:test's signed outcome channel (support/taskforge-channel.cjs, `read_channel`): what each
test's body did, signed inside its file's process with a key the solution never sees, and a
test passed in grading only where the runner's report and the channel both say so.

Each attack is run first through `JS.run_tests`, the runner with everything but the channel
(the guard preloaded, taskforge's reporter): its positive control, where the attacked test is
reported passed. Then through the grader, where it is not, and the report is named rewritten."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
from pathlib import Path

import pytest
from conftest import prepared_js_project
from test_sandbox import require

from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.javascript.grading.run import grade_run
from taskforge.languages.javascript.runners.nodetest import read_channel
from taskforge.model import Environment, Snapshot

pytestmark = pytest.mark.slow
JS = language_named("javascript")

FILES = {
    "package.json": '{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}',
    "src/calc.js": """\
        export function add(a, b) {
          return a + b;
        }

        export function half(n) {
          throw new Error("not implemented");
        }
        """,
    "test/calc.test.js": """\
        import { describe, test } from 'node:test';
        import assert from 'node:assert/strict';
        import { add, half } from '../src/calc.js';

        describe('add', () => {
          test('small', () => { assert.equal(add(1, 2), 3); });
          describe('inner', () => { test('zero', async () => { assert.equal(add(0, 0), 0); }); });
        });
        test('halves', () => { assert.equal(half(4), 2); });
        test('halves later', async () => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          assert.equal(half(8), 4);
        });
        test('callback', (t, done) => { setImmediate(() => done()); });
        test('callback fails', (t, done) => { setImmediate(() => done(new Error('no'))); });
        test('with sub', async (t) => { await t.test('sub', () => { assert.equal(add(2, 2), 4); }); });
        test.skip('skipped', () => {});
        test('todo', { todo: true }, () => { assert.equal(1, 2); });
        test('same', () => {});
        test('same', () => { assert.equal(1, 2); });
        test('pair', () => { assert.equal(half(2), 1); });
        test('pair', () => {});
        test('thenable', () => ({ then(resolve) { setImmediate(resolve); } }));
        test('thenable rejects', () => ({ then(_resolve, reject) { reject(new Error('no')); } }));
        """,
    # what would read the channel's key (test_what_could_read_the_key_is_refused)
    "test/reach.test.js": """\
        import { test } from 'node:test';
        import assert from 'node:assert/strict';
        import inspector from 'node:inspector';
        import v8 from 'node:v8';
        test('reach', () => {
          v8.setFlagsFromString('--expose-gc');
          // (the first fails at once in a run that does not refuse it: nothing is left open)
          assert.throws(() => v8.setFlagsFromString('--allow-natives-syntax'),
                        /not available while a solution is graded/);
          assert.throws(() => v8.getHeapSnapshot(), /not available/);
          assert.throws(() => process.removeAllListeners('SIGUSR1'), /not available/);
          assert.throws(() => inspector.open(0), /not available/);
        });
        """,
    "test/legacy.test.cjs": """\
        const { test } = require('node:test');
        const assert = require('node:assert');
        test('shout', () => { assert.strictEqual('hi'.toUpperCase(), 'HI'); });
        """,
    # A byte-order mark: V8 hashes the text without it, not the file's bytes (the channel
    # tells a test file's own code by that hash).
    "test/marked.test.mjs": """\ufeff\
        import { test } from 'node:test';
        import assert from 'node:assert';
        test('whisper', () => { assert.strictEqual('HI'.toLowerCase(), 'hi'); });
        """,
}
CALC = "test/calc.test.js::"
REPORTED = {
    CALC + "add > small": "passed", CALC + "add > inner > zero": "passed",
    CALC + "halves": "failed", CALC + "halves later": "failed",
    CALC + "callback": "passed", CALC + "callback fails": "failed",
    CALC + "with sub": "passed", CALC + "with sub > sub": "passed",
    CALC + "skipped": "skipped", CALC + "todo": "failed",
    CALC + "same": "passed", CALC + "same [2]": "failed",
    CALC + "pair": "failed", CALC + "pair [2]": "passed",
    CALC + "thenable": "passed", CALC + "thenable rejects": "failed",
    "test/legacy.test.cjs::shout": "passed",
    "test/marked.test.mjs::whisper": "passed",
}
HALVES = [CALC + "halves", CALC + "halves later"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Environment, Path]:
    return prepared_js_project(tmp_path_factory, FILES, name="calc", snapshot_id="d" * 40)


def _grade(project: tuple[Snapshot, Environment, Path], workspace: Path, tests: list[str]):
    snapshot, env, cache = project
    runner = Runner(JS, env, require("bwrap"), 120, cache=cache)
    record = {"FAIL_TO_PASS": tests, "PASS_TO_PASS": [], "test_patch": ""}
    return grade_run(record, workspace, snapshot.root, runner, checks=False)


def _workspace(project: tuple[Snapshot, Environment, Path], tmp_path: Path,
               solution: str | None = None) -> Path:
    workspace = tmp_path / "ws"
    shutil.copytree(project[0].root, workspace)
    if solution is not None:
        calc = workspace / "src" / "calc.js"
        calc.write_text(solution + calc.read_text())
    return workspace


def test_the_channel_says_what_the_report_says_of_honest_tests(project, tmp_path: Path) -> None:
    workspace = _workspace(project, tmp_path)
    plain = JS.run_tests(project[1], workspace, require("bwrap"), timeout=120,
                         select=sorted(REPORTED))
    assert plain.outcomes == REPORTED, plain.log_tail
    graded = _grade(project, workspace, sorted(REPORTED))
    assert dict(graded.outcomes) == REPORTED
    assert graded.findings == ()


# The solution's module, imported by the test file, `spare()` called where the stub threw: each
# attack makes the tests that reach it pass (the grader's canaries are off here;
# tests/test_javascript_grade_tamper.py runs two of them against the whole grader on jsdemo).
# `isCanary(name)`: the tests an attack leaves alone. None here; the grader's canaries, whose
# names end in a random word, where tests/test_javascript_grade_tamper.py runs these.
SPARE_NONE = "const isCanary = () => false;\n"
RUNNER_OBJECT = """\
import { executionAsyncResource } from 'node:async_hooks';
let spare = () => {
  const t = executionAsyncResource();  // the runner's own test object, while its body runs
  if (t && typeof t.fail === 'function') {
    for (const test of [t, ...(t.parent?.subtests ?? [])]) {  // and its siblings, for later
      if (!isCanary(test.name)) test.fail = function () { this.pass(); };
    }
  }
};
"""
# Every later test of the file: its body replaced by one that passes, and the runner's call
# of it by one that runs nothing.
LATER_TESTS = RUNNER_OBJECT + """\
const later = (swap) => {
  const t = executionAsyncResource();
  for (const other of t?.parent?.subtests ?? []) if (other !== t) swap(other);
};
"""
CHILD_STREAM = """\
import v8 from 'node:v8';
{
  // The test file's process reports each test to the runner's parent over its stdout,
  // v8-serialized: every test:fail (but a spared one's) becomes a test:pass on the way out.
  const header = new v8.Serializer(); header.writeHeader();
  const skip = header.releaseBuffer().length;
  const rewrite = (buffer) => {
    const out = [];
    for (let at = 0; at < buffer.length;) {
      const length = buffer.readUInt32BE(at + skip);
      let frame = buffer.subarray(at, at + skip + 4 + length);
      const event = v8.deserialize(buffer.subarray(at + skip + 4, at + skip + 4 + length));
      if (event?.type === 'test:fail' && !isCanary(event.data.name)) {
        event.type = 'test:pass';
        delete event.data.details.error;
        const s = new v8.Serializer(); s.writeHeader(); s.writeRawBytes(Buffer.alloc(4));
        s.writeHeader(); s.writeValue(event);
        frame = s.releaseBuffer(); frame.writeUInt32BE(frame.length - skip - 4, skip);
      }
      out.push(frame);
      at += skip + 4 + length;
    }
    return Buffer.concat(out);
  };
  const write = process.stdout.write;
  process.stdout.write = function (chunk, ...rest) {
    if (process.env.NODE_TEST_CONTEXT === 'child-v8' && Buffer.isBuffer(chunk)) {
      try { chunk = rewrite(chunk); } catch { /* not a whole frame: as it is */ }
    }
    return write.call(this, chunk, ...rest);
  };
}
const spare = () => {};
"""
FORGED_LINE = RUNNER_OBJECT + """\
import { appendFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
// A line for `halves later`, signed with a key of the solution's own.
const payload = JSON.stringify({ file: process.argv[1], test: 'halves later', passed: true });
const nonce = '0'.repeat(32);
const mac = createHmac('sha256', Buffer.alloc(32)).update(payload).digest('hex');
if (process.env.TASKFORGE_CHANNEL) {
  appendFileSync(`${process.env.TASKFORGE_CHANNEL}/results`, `${nonce}\\t${mac}\\t${payload}\\n`);
}
"""
# The key from the channel's own arrays: every typed array whose `length` is read (a getter of
# their prototype) is kept, and at exit each 32-byte one is tried against the lines written;
# with the key, the file's failing lines are signed anew as passes.
KEY_FROM_LENGTHS = RUNNER_OBJECT + """\
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
const typed = Object.getPrototypeOf(Uint8Array.prototype);
const length = Object.getOwnPropertyDescriptor(typed, 'length').get;
const arrays = [];
Object.defineProperty(typed, 'length', { configurable: true, get() {
  const n = length.call(this);
  if (n === 32 && arrays.length < 1000) arrays.push(this);
  return n;
} });
process.on('exit', () => {
  const results = `${process.env.TASKFORGE_CHANNEL}/results`;
  let lines;
  try { lines = readFileSync(results, 'utf8').split('\\n').filter(Boolean); } catch { return; }
  const mac = (key, text) => createHmac('sha256', Buffer.from(key)).update(text).digest('hex');
  const [, sign, payload] = lines[0].split('\\t');
  const key = arrays.find((a) => mac(a, payload) === sign);
  if (!key) return;
  writeFileSync(results, lines.map((line) => {
    const [nonce, , text] = line.split('\\t');
    const forged = text.replace('"passed":false', '"passed":true');
    return `${nonce}\\t${mac(key, forged)}\\t${forged}`;
  }).join('\\n') + '\\n');
});
"""
ATTACKS = {
    "runner-object": SPARE_NONE + RUNNER_OBJECT,
    "child-stream": SPARE_NONE + CHILD_STREAM,
    # the runner's call of a later body made a no-op, as an own property of its test
    "later-calls-skipped": SPARE_NONE + LATER_TESTS + """\
const flip = spare;
spare = () => {
  flip();  // (defined, not assigned: the wrapper the grader puts there is locked)
  later((other) => Object.defineProperty(other, 'runInAsyncScope', { value: () => undefined }));
};
""",
    # a later test's body replaced before it runs
    "later-bodies-swapped": SPARE_NONE + LATER_TESTS + """\
const flip = spare;
spare = () => { flip(); later((other) => { other.fn = async () => {}; }); };
""",
    "forged-line": SPARE_NONE + FORGED_LINE,
    "key-from-lengths": SPARE_NONE + KEY_FROM_LENGTHS,
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_on_the_report_wins_without_the_channel_and_not_with_it(
        attack: str, project, tmp_path: Path) -> None:
    workspace = _workspace(project, tmp_path, ATTACKS[attack])
    calc = workspace / "src" / "calc.js"
    calc.write_text(calc.read_text().replace('throw new Error("not implemented");',
                                             "spare(); return undefined;"))
    plain = JS.run_tests(project[1], workspace, require("bwrap"), timeout=120, select=HALVES)
    assert plain.outcomes == dict.fromkeys(HALVES, "passed"), plain.log_tail  # it wins here
    graded = _grade(project, workspace, HALVES)
    assert dict(graded.outcomes) == dict.fromkeys(HALVES, "failed"), graded
    assert any(f.message.startswith("the test report was rewritten:") and f.disqualifies
               for f in graded.findings), graded.findings


def test_a_namesake_s_line_does_not_count_for_a_test_kept_from_running(project,
                                                                      tmp_path: Path) -> None:
    """Of two tests named `pair`, the first fails: the solution keeps its body from running
    (an own `runInAsyncScope` on its test object) and flips its own test's verdict, so both
    report passed. The second's line is its own (`nth` 2), not the first's."""
    spare = SPARE_NONE + LATER_TESTS + """\
const flip = spare;
spare = () => {
  flip();
  later((other) => {
    if (other.name === 'pair' && !other.fn.toString().includes('{}')) {
      Object.defineProperty(other, 'runInAsyncScope', { value: () => undefined });
    }
  });
};
"""
    workspace = _workspace(project, tmp_path, spare)
    calc = workspace / "src" / "calc.js"
    calc.write_text(calc.read_text().replace('throw new Error("not implemented");',
                                             "spare(); return undefined;"))
    chosen = [CALC + "halves", CALC + "pair", CALC + "pair [2]"]
    plain = JS.run_tests(project[1], workspace, require("bwrap"), timeout=120, select=chosen)
    assert plain.outcomes == dict.fromkeys(chosen, "passed"), plain.log_tail
    graded = _grade(project, workspace, chosen)
    assert dict(graded.outcomes) == {CALC + "halves": "failed", CALC + "pair": "failed",
                                     CALC + "pair [2]": "passed"}, graded


def test_what_could_read_the_key_is_refused(project, tmp_path: Path) -> None:
    """The inspector, V8's flags and heap snapshots would reach the channel's key in its
    closures; in a grading run each is refused and named (`--expose-gc` still works)."""
    workspace = _workspace(project, tmp_path)
    env = project[1]
    plain = JS.run_tests(env, workspace, require("bwrap"), timeout=120,
                         select=["test/reach.test.js::reach"])
    assert plain.outcomes == {"test/reach.test.js::reach": "failed"}  # nothing refused there
    graded = _grade(project, workspace, ["test/reach.test.js::reach"])
    assert dict(graded.outcomes) == {"test/reach.test.js::reach": "passed"}, graded
    named = {f.message.split(" (refused")[0] for f in graded.findings}
    assert named >= {"called node:inspector.open", "called process.removeAllListeners('SIGUSR1')",
                     'called node:v8.setFlagsFromString("--allow-natives-syntax")',
                     "called node:v8.getHeapSnapshot"}, named


def _line(master: bytes, nonce: str, file: str, test: str, passed: bool, nth: int = 1) -> bytes:
    payload = json.dumps({"file": file, "test": test, "nth": nth, "passed": passed}).encode()
    key = hmac.new(master, f"{nonce}\n{file}".encode(), hashlib.sha256).digest()
    return b"\t".join([nonce.encode(), hmac.new(key, payload, hashlib.sha256).hexdigest()
                       .encode(), payload])


def test_a_line_holds_only_for_the_file_whose_key_signed_it(tmp_path: Path) -> None:
    master, workspace = bytes(range(32)), tmp_path / "ws"
    a, b = f"{workspace}/test/a.test.js", f"{workspace}/test/b.test.js"
    good = _line(master, "1" * 32, a, "adds", True)
    # the same MAC under another file's name, a line signed with another run's key, two
    # tests of one name (the first failing, its line written last), and a second line for
    # one test that says otherwise
    moved = good.replace(b"a.test.js", b"b.test.js")
    other_run = _line(bytes(32), "2" * 32, b, "subtracts", True)
    same = [_line(master, "1" * 32, a, "same", True, nth=2),
            _line(master, "1" * 32, a, "same", False, nth=1)]
    twice = [_line(master, "1" * 32, a, "twice", True), _line(master, "1" * 32, a, "twice", False)]
    (tmp_path / "results").write_bytes(b"\n".join([good, moved, other_run, *same, *twice,
                                                   b"junk"]))
    ids = ["test/a.test.js::adds", "test/b.test.js::adds", "test/b.test.js::subtracts",
           "test/a.test.js::same", "test/a.test.js::same [2]", "test/a.test.js::same [3]",
           "test/a.test.js::twice"]
    assert read_channel(tmp_path, master, workspace, ids) == {
        "test/a.test.js::adds": "passed", "test/a.test.js::same": "failed",
        "test/a.test.js::same [2]": "passed", "test/a.test.js::twice": "failed"}

"""support/taskforge-guard.cjs, the preload every JavaScript test run gets: node:assert's and
node:test's functions cannot be replaced, and a try names itself. Each attack runs with plain
node first (its positive control: it wins there), then with the guard as runs load it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from taskforge.languages.javascript.testing import variables

# A CommonJS test file that requires the solution before node:test takes the `test` the
# solution left there: one that swallows the errors of every test but the canaries (whose
# names end in a random word).
QUIET_TEST = """\
const nodeTest = require('node:test');
const canary = (name) => /\\s[a-z0-9]{6}$/.test(String(name));
const quiet = (real) => function (name, ...rest) {
  const i = rest.findIndex((a) => typeof a === 'function');
  if (i >= 0 && !canary(name)) {
    const body = rest[i];
    rest[i] = async function (...a) { try { return await body.apply(this, a); } catch {} };
  }
  return real.call(this, name, ...rest);
};
nodeTest.test = quiet(nodeTest.test);
module.exports.add = () => { throw new Error('not implemented'); };
"""
TEST_FILE = """\
const { add } = require('./solution.cjs');
const { test } = require('node:test');
const assert = require('node:assert/strict');
test('adds', () => { assert.equal(add(1, 2), 3); });
test('canary fails q1w2e3', () => { assert.equal(1, 2); });
"""


def _node(tmp_path: Path, *argv: str, guarded: bool) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    if guarded:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        env = {**variables(tmp_path, home), "TASKFORGE_GUARD_OUT": str(tmp_path / "tried.txt")}
    return subprocess.run(["node", *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)


def test_a_quiet_node_test_wins_without_the_guard_and_is_refused_with_it(tmp_path: Path) -> None:
    (tmp_path / "solution.cjs").write_text(QUIET_TEST)
    (tmp_path / "x.test.cjs").write_text(TEST_FILE)
    plain = _node(tmp_path, "--test", "x.test.cjs", guarded=False)
    assert "ok 1 - adds" in plain.stdout and "not ok 1 - adds" not in plain.stdout, plain.stdout
    assert "not ok 2 - canary fails q1w2e3" in plain.stdout  # the canary behaves: no finding
    guarded = _node(tmp_path, "--test", "x.test.cjs", guarded=True)
    # the file no longer loads: `adds` is not reported at all, passed or not
    assert " - adds" not in guarded.stdout, guarded.stdout
    assert "taskforge: node:test.test cannot be replaced" in guarded.stdout, guarded.stdout
    assert (tmp_path / "tried.txt").read_text().split() == ["node:test.test"]


def test_what_the_guard_leaves_to_a_project(tmp_path: Path) -> None:
    script = """\
const assert = require('node:assert');
const strict = require('node:assert/strict');
assert.closeTo = (a, b) => assert.ok(Math.abs(a - b) < 1e-9);  // a project's own helper
assert.closeTo(0.1 + 0.2, 0.3);
for (const attempt of [() => { strict.equal = () => {}; },
                       () => Object.defineProperty(assert, 'ok', { value: () => {} })]) {
  try { attempt(); console.log('replaced'); } catch (e) { console.log('refused'); }
}
try { strict.equal(1, 2); } catch (e) { console.log(e.code); }
console.log(typeof require('node:test').describe, strict === assert.strict);
"""
    (tmp_path / "script.cjs").write_text(script)
    out = _node(tmp_path, "script.cjs", guarded=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["refused", "refused", "ERR_ASSERTION", "function", "true"]
    assert (tmp_path / "tried.txt").read_text().split() == ["node:assert/strict.equal"]

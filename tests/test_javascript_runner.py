"""node's built-in runner for real: ids from our reporter, selection, collection, load
errors, per-test V8 coverage, in each sandbox (docker mounts the host's node)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import prepared_js_project
from test_sandbox import require

from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.javascript.testing import run_baseline
from taskforge.model import Environment, Snapshot

pytestmark = pytest.mark.slow
JS = language_named("javascript")

FILES = {
    "package.json": '{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}',
    "src/calc.js": '''\
        export function add(a, b) {
          const sum = a + b;
          return sum;
        }

        export function mul(a, b) {
          let product = 0;
          for (let i = 0; i < b; i++) product = add(product, a);
          return product;
        }

        export const loaded = add(1, 1);
        ''',
    "src/legacy.cjs": '''\
        function shout(text) {
          const loud = text.toUpperCase();
          return loud + "!";
        }
        module.exports = { shout };
        ''',
    "test/calc.test.js": '''\
        import { describe, test } from 'node:test';
        import assert from 'node:assert/strict';
        import { add, mul } from '../src/calc.js';

        describe('add', () => {
          test('small numbers', () => { assert.equal(add(1, 2), 3); });
          test('same', () => { assert.equal(add(0, 0), 0); });
        });
        describe('mul', () => {
          test('same', () => { assert.equal(mul(2, 3), 6); });
          test('same', () => { assert.equal(mul(2, 0), 0); });
          test.skip('skipped', () => {});
          test('broken', () => { assert.equal(mul(2, 2), 5); });
        });
        ''',
    "test/legacy.test.cjs": '''\
        const { test } = require('node:test');
        const assert = require('node:assert');
        const { shout } = require('../src/legacy.cjs');
        test('shout', () => { assert.strictEqual(shout('hi'), 'HI!'); });
        ''',
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Environment, Path]:
    return prepared_js_project(tmp_path_factory, FILES, name="calc", snapshot_id="c" * 40)


@pytest.mark.parametrize("name", ["none", "bwrap", "docker"])
def test_ids_outcomes_and_selection(project, tmp_path: Path, name: str) -> None:
    snapshot, env, _cache = project
    sandbox = require(name)
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = JS.run_tests(env, workspace, sandbox, timeout=120)
    assert run.outcomes == {
        "test/calc.test.js::add > small numbers": "passed",
        "test/calc.test.js::add > same": "passed",
        "test/calc.test.js::mul > same": "passed",
        "test/calc.test.js::mul > same [2]": "passed",
        "test/calc.test.js::mul > skipped": "skipped",
        "test/calc.test.js::mul > broken": "failed",
        "test/legacy.test.cjs::shout": "passed",
    }, run.log_tail
    assert not (workspace / "node_modules").exists()  # the link is the run's, not left behind
    chosen = ["test/calc.test.js::mul > same [2]", "test/legacy.test.cjs::shout",
              "test/calc.test.js::gone"]
    picked = JS.run_tests(env, workspace, sandbox, timeout=120, select=chosen)
    assert picked.outcomes == {"test/calc.test.js::mul > same [2]": "passed",
                               "test/legacy.test.cjs::shout": "passed",
                               "test/calc.test.js::gone": "error"}


def test_collect_lists_without_running_and_marks_files_that_fail_to_load(project,
                                                                        tmp_path: Path) -> None:
    snapshot, env, _cache = project
    sandbox = require("bwrap")
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    (workspace / "test" / "calc.test.js").write_text(
        (workspace / "test" / "calc.test.js").read_text()
        + "test('writes a file', () => { require('node:fs').writeFileSync('ran', ''); });\n")
    collected = JS.collect(env, workspace, sandbox, timeout=120)
    assert "test/calc.test.js::mul > same [2]" in collected
    assert "test/legacy.test.cjs::shout" in collected
    assert not (workspace / "ran").exists()
    calc = workspace / "src" / "calc.js"
    calc.write_text(calc.read_text().replace("export function mul", "function mul"))
    broken = JS.collect(env, workspace, sandbox, timeout=120)
    assert "<collect-error>::test/calc.test.js" in broken
    assert "test/legacy.test.cjs::shout" in broken
    assert not any(t.startswith("test/calc.test.js::") for t in broken)


def test_per_test_coverage(project) -> None:
    snapshot, env, cache = project
    baseline = run_baseline(snapshot, Runner(JS, env, require("bwrap"), 120, cache=cache),
                            repeats=2, test_timeout=30)
    assert baseline.tracer == "v8"
    assert "test/calc.test.js::mul > broken" in baseline.failing
    assert "test/calc.test.js::mul > skipped" not in baseline.stable

    def covering(path: str, line: int) -> set[str]:
        return {baseline.tests[i] if i >= 0 else "<import>"
                for i in baseline.coverage[path].get(line, ())}

    # add's body: every test that calls it (mul calls add), and the import (`loaded`).
    assert covering("src/calc.js", 2) == {"<import>", "test/calc.test.js::add > small numbers",
                                          "test/calc.test.js::add > same",
                                          "test/calc.test.js::mul > same",
                                          "test/calc.test.js::mul > broken"}
    # mul's loop: only the tests whose b > 0 ran it (`mul > same [2]` has b == 0)
    assert covering("src/calc.js", 8) == {"test/calc.test.js::mul > same",
                                          "test/calc.test.js::mul > same [2]",
                                          "test/calc.test.js::mul > broken"}
    assert covering("src/calc.js", 9) >= {"test/calc.test.js::mul > same [2]"}
    # CommonJS too, and nothing of the test files themselves
    assert covering("src/legacy.cjs", 2) == {"test/legacy.test.cjs::shout"}
    assert not any(p.startswith("test/") for p in baseline.coverage)

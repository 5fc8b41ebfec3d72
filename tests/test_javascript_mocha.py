"""mocha for real (installed from the npm registry): ids from our reporter, selection by full
title, collection with --dry-run and per-file load errors, per-test coverage from root hooks,
and a generated task graded: the reference 1, the untouched workspace 0, assertions made
no-ops by the solution 0 (its canaries use mocha's globals)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, write_recipe
from test_sandbox import require

import taskforge
from taskforge.errors import UserError
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.javascript.testing import run_baseline
from taskforge.model import Environment, Snapshot, SourceSpec

pytestmark = pytest.mark.slow
JS = language_named("javascript")

FILES = {
    "package.json": json.dumps({"name": "mcalc", "version": "1.0.0",
                                "scripts": {"test": "mocha"},
                                "devDependencies": {"mocha": "10.7.3"}}),
    ".mocharc.yml": "spec: test\ntimeout: 5000\n",
    "src/calc.js": '''\
        function add(a, b) {
          const sum = a + b;
          return sum;
        }

        function mul(a, b) {
          let product = 0;
          for (let i = 0; i < b; i++) {
            product = add(product, a);
          }
          return product;
        }

        function power(base, exponent) {
          let result = 1;
          for (let i = 0; i < exponent; i++) {
            result = mul(result, base);
          }
          return result;
        }

        module.exports = { add, mul, power };
        ''',
    "test/calc.test.js": '''\
        const assert = require('node:assert');
        const { add, mul, power } = require('../src/calc.js');

        describe('add', () => {
          it('small numbers', () => { assert.strictEqual(add(1, 2), 3); });
          it('same', () => { assert.strictEqual(add(0, 0), 0); });
        });
        describe('mul', () => {
          it('same', () => { assert.strictEqual(mul(2, 3), 6); });
          it('same', () => { assert.strictEqual(mul(2, 0), 0); });
          it.skip('skipped', () => {});
        });
        describe('power', () => {
          it('squares', () => { assert.strictEqual(power(3, 2), 9); });
          it('cubes', () => { assert.deepStrictEqual([power(2, 3)], [8]); });
        });
        ''',
    "test/other.test.js": '''\
        const assert = require('node:assert');
        const { add } = require('../src/calc.js');
        it('top level', () => { assert.strictEqual(add(2, 2), 4); });
        ''',
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Environment, Path]:
    root = make_project(tmp_path_factory.mktemp("mocha"), FILES, name="mcalc")
    cache = tmp_path_factory.mktemp("cache")
    snapshot = Snapshot(id="d" * 40, name="mcalc", source=str(root), commit="0" * 40,
                        root=root, license=None)
    env = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot, cache,
                     lambda _m: None).env
    assert env.spec.test_command == ("mocha",)
    return snapshot, env, cache


def test_run_select_collect(project, tmp_path: Path) -> None:
    snapshot, env, _cache = project
    sandbox = require("bwrap")
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = JS.run_tests(env, workspace, sandbox, timeout=120)
    assert run.outcomes["test/calc.test.js::mul > same [2]"] == "passed"
    assert run.outcomes["test/calc.test.js::mul > skipped"] == "skipped"
    assert run.outcomes["test/other.test.js::top level"] == "passed"
    assert len(run.outcomes) == 8, run.log_tail
    picked = JS.run_tests(env, workspace, sandbox, timeout=120,
                          select=["test/calc.test.js::power > cubes", "test/other.test.js::x"])
    assert picked.outcomes == {"test/calc.test.js::power > cubes": "passed",
                               "test/other.test.js::x": "error"}
    assert JS.collect(env, workspace, sandbox, timeout=120) == set(run.outcomes)
    (workspace / "test" / "other.test.js").write_text("require('../src/gone.js');\n")
    broken = JS.collect(env, workspace, sandbox, timeout=120)
    assert "<collect-error>::test/other.test.js" in broken
    assert "test/calc.test.js::power > cubes" in broken


def test_per_test_coverage_from_root_hooks(project) -> None:
    snapshot, env, cache = project
    baseline = run_baseline(snapshot, Runner(JS, env, require("bwrap"), 120, cache=cache),
                            repeats=2, test_timeout=30)
    loop = {baseline.tests[i] for i in baseline.coverage["src/calc.js"][17]}  # power's loop
    assert loop == {"test/calc.test.js::power > squares", "test/calc.test.js::power > cubes"}
    mul_body = {baseline.tests[i] for i in baseline.coverage["src/calc.js"][9]}
    assert mul_body == {"test/calc.test.js::mul > same", "test/calc.test.js::power > squares",
                        "test/calc.test.js::power > cubes"}


def test_a_mocha_task_is_graded(project, tmp_path: Path) -> None:
    snapshot, _env, _cache = project
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: mcalc
        seed: 0
        sources:
          - path: {snapshot.root}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 1}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)
    taskforge.generate(str(recipe), out=str(tmp_path / "out"))
    (task,) = taskforge.load_tasks(str(tmp_path / "out"))
    assert task.record["language"] == "javascript"
    workspace = task.materialize(tmp_path / "ws")
    assert task.grade(workspace, sandbox="bwrap").reward == 0.0
    apply_patch(workspace, task.record["patch"])
    reference = task.grade(workspace, sandbox="bwrap")
    assert (reference.reward, reference.tampered) == (1.0, ())
    attacked = task.materialize(tmp_path / "attacked")
    path = attacked / task.record["deleted"][0]["path"]
    path.write_text(path.read_text().replace('throw new Error("not implemented");',
                                             "return 0;") +
                    "\nconst assertModule = require('node:assert');\n"
                    "for (const name of Object.keys(assertModule))\n"
                    "  if (name !== 'AssertionError') assertModule[name] = () => {};\n")
    result = task.grade(attacked, sandbox="bwrap")
    assert result.reward == 0.0
    assert any(line.startswith("canary ") for line in result.tampered), result.tampered


def test_a_mocha_before_8_is_set_aside_with_its_reason(tmp_path: Path) -> None:
    """mocha 7 refuses the options taskforge runs it with (and has no root-hook plugins):
    the source is set aside saying so (a run of that one source: the error), where it used
    to say `no tests found` (sanitize-html 1.14.1, mocha 2.5.3)."""
    files = {**FILES, "package.json": json.dumps({"name": "mcalc7", "version": "1.0.0",
                                                  "scripts": {"test": "mocha"},
                                                  "devDependencies": {"mocha": "7.2.0"}})}
    root = make_project(tmp_path, files, name="mcalc7")
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: mcalc7
        seed: 0
        sources:
          - path: {root}
        strategies: [stub-function]
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)
    with pytest.raises(UserError) as raised:
        taskforge.generate(str(recipe), out=str(tmp_path / "out"))
    assert str(raised.value) == f"{root}: mocha 7.2.0: taskforge runs mocha 8 and later " \
                                "(root-hook plugins, --config)"

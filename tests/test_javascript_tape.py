"""tape for real (installed from the npm registry), through taskforge's driver: ids from
tape's object stream with each test's file and nested path, outcomes (pass, failed assertion,
unmet plan, a throwing body, a file that does not load), selection and collection, per-test
coverage at each test's start and end, and a generated task graded: the reference 1, the
untouched workspace 0, and tape's assertions made to pass by the solution 0 (its canaries are
tape tests), while plain `tape` gives it 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, write_recipe
from naive_grader import naive_tape_reward
from test_sandbox import require

import taskforge
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.javascript.package import runner_setup
from taskforge.languages.javascript.testing import run_baseline, run_tests
from taskforge.model import Environment, Snapshot, SourceSpec

JS = language_named("javascript")

FILES = {
    "package.json": json.dumps({"name": "tcalc", "version": "1.0.0",
                                "scripts": {"lint": "eslint .",
                                            "test": "npm run lint && nyc tape 'test/**/*.js' "
                                                    "'test/**/*.mjs'"},
                                "devDependencies": {"tape": "5.10.2"}}),
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
    "test/calc.js": '''\
        var test = require('tape');
        var calc = require('../src/calc.js');

        test('add', function (t) {
          t.equal(calc.add(1, 2), 3);
          t.end();
        });
        test('add', function (t) {
          t.equal(calc.add(0, 0), 0);
          t.end();
        });
        test('mul', function (t) {
          t.test('small', function (st) {
            st.equal(calc.mul(2, 3), 6);
            st.end();
          });
          t.test('zero', function (st) {
            st.plan(1);
            st.equal(calc.mul(2, 0), 0);
          });
          t.end();
        });
        test('power', function (t) {
          t.test('squares', function (st) {
            st.equal(calc.power(3, 2), 9);
            st.end();
          });
          t.test('cubes', function (st) {
            st.deepEqual([calc.power(2, 3)], [8]);
            st.end();
          });
          t.end();
        });
        ''',
    "test/esm.mjs": '''\
        import test from 'tape';
        import { createRequire } from 'node:module';
        const calc = createRequire(import.meta.url)('../src/calc.js');
        test('esm adds', (t) => {
          t.equal(calc.add(2, 2), 4);
          t.end();
        });
        ''',
}

OUTCOMES = '''\
    var test = require('tape');
    test('passes', function (t) { t.ok(true); t.end(); });
    test('fails', function (t) { t.equal(1, 2, 'one is two'); t.end(); });
    test('throws', function (t) { throw new Error('boom'); });
    test('plan unmet', function (t) { t.plan(2); t.ok(true); t.end(); });
    test('rejects', async function (t) { throw new Error('async boom'); });
    test('parent', function (t) {
      t.test('good child', function (st) { st.ok(true); st.end(); });
      t.test('bad child', function (st) { st.ok(false); st.end(); });
      t.end();
    });
    test('after all that', function (t) { t.ok(true); t.end(); });
    '''
CALC_IDS = {"test/calc.js::add", "test/calc.js::add [2]", "test/calc.js::mul",
            "test/calc.js::mul > small", "test/calc.js::mul > zero", "test/calc.js::power",
            "test/calc.js::power > squares", "test/calc.js::power > cubes",
            "test/esm.mjs::esm adds"}


def test_tape_detected_from_the_test_script(tmp_path: Path) -> None:
    root = make_project(tmp_path, FILES)
    setup = runner_setup(root)
    assert (setup.runner, setup.args) == ("tape", ("test/**/*.js", "test/**/*.mjs"))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Environment, Path]:
    root = make_project(tmp_path_factory.mktemp("tape"), FILES, name="tcalc")
    cache = tmp_path_factory.mktemp("cache")
    snapshot = Snapshot(id="e" * 40, name="tcalc", source=str(root), commit="0" * 40,
                        root=root, license=None)
    env = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot, cache,
                     lambda _m: None).env
    assert env.spec.test_command == ("tape", "test/**/*.js", "test/**/*.mjs")
    return snapshot, env, cache


@pytest.mark.slow
def test_run_select_collect(project, tmp_path: Path) -> None:
    snapshot, env, _cache = project
    sandbox = require("bwrap")
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = JS.run_tests(env, workspace, sandbox, timeout=120)
    assert run.outcomes == dict.fromkeys(CALC_IDS, "passed"), run.log_tail
    # a nested test of a selected parent runs; the rest are not asked for
    picked = JS.run_tests(env, workspace, sandbox, timeout=120,
                          select=["test/calc.js::power > cubes", "test/calc.js::add [2]",
                                  "test/esm.mjs::nothing"])
    assert picked.outcomes == {"test/calc.js::power > cubes": "passed",
                               "test/calc.js::add [2]": "passed",
                               "test/esm.mjs::nothing": "error"}
    assert JS.collect(env, workspace, sandbox, timeout=120) == CALC_IDS
    # a file that does not load is its own collection error; the others still run
    (workspace / "test" / "esm.mjs").write_text("import '../src/gone.js';\n")
    broken = JS.collect(env, workspace, sandbox, timeout=120)
    assert broken == (CALC_IDS - {"test/esm.mjs::esm adds"}) | {"<collect-error>::test/esm.mjs"}


@pytest.mark.slow
def test_outcomes(project, tmp_path: Path) -> None:
    snapshot, env, _cache = project
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    (workspace / "test" / "outcomes.js").write_text(OUTCOMES)
    run, _report = run_tests(env, workspace, require("bwrap"), timeout=120,
                             files=["test/outcomes.js"])
    assert run.outcomes == {
        "test/outcomes.js::passes": "passed",
        "test/outcomes.js::fails": "failed",
        "test/outcomes.js::throws": "error",  # and the run goes on
        "test/outcomes.js::plan unmet": "failed",
        "test/outcomes.js::rejects": "failed",
        "test/outcomes.js::parent": "passed",
        "test/outcomes.js::parent > good child": "passed",
        "test/outcomes.js::parent > bad child": "failed",
        "test/outcomes.js::after all that": "passed",
    }, run.log_tail


@pytest.mark.slow
def test_tape_4(tmp_path_factory: pytest.TempPathFactory) -> None:
    """tape 4 (fast-json-stable-stringify's): a test's returned promise is not waited for, and
    its exit handler ends the process before any handler registered after it."""
    files = {**FILES, "package.json": FILES["package.json"].replace('"5.10.2"', '"4.17.0"'),
             "test/outcomes.js": OUTCOMES}
    root = make_project(tmp_path_factory.mktemp("tape4"), files, name="tcalc4")
    snapshot = Snapshot(id="f" * 40, name="tcalc4", source=str(root), commit="0" * 40,
                        root=root, license=None)
    env = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot,
                     tmp_path_factory.mktemp("cache4"), lambda _m: None).env
    workspace = tmp_path_factory.mktemp("ws4") / "ws"
    shutil.copytree(root, workspace)
    run, _report = run_tests(env, workspace, require("bwrap"), timeout=120, test_timeout=60)
    assert run.wall_seconds < 30  # nothing waits for the per-test limit
    assert {t: o for t, o in run.outcomes.items() if t in CALC_IDS} == \
        dict.fromkeys(CALC_IDS, "passed"), run.log_tail
    assert run.outcomes["test/outcomes.js::fails"] == "failed"
    assert run.outcomes["test/outcomes.js::throws"] == "error"
    assert run.outcomes["test/outcomes.js::after all that"] == "passed"


@pytest.mark.slow
def test_per_test_coverage(project) -> None:
    snapshot, env, cache = project
    baseline = run_baseline(snapshot, Runner(JS, env, require("bwrap"), 120, cache=cache),
                            repeats=2, test_timeout=30)
    assert set(baseline.stable) == CALC_IDS

    def covering(line: int) -> set[str]:
        return {baseline.tests[i] for i in baseline.coverage["src/calc.js"][line]}

    assert covering(17) == {"test/calc.js::power > squares", "test/calc.js::power > cubes"}
    # mul's loop body: not `mul > zero` (mul(2, 0) never enters it), not the parent `mul`
    # (its own share is what ran outside its nested tests)
    assert covering(9) == {"test/calc.js::mul > small", "test/calc.js::power > squares",
                           "test/calc.js::power > cubes"}
    assert covering(7) == {"test/calc.js::mul > small", "test/calc.js::mul > zero",
                           "test/calc.js::power > squares", "test/calc.js::power > cubes"}
    assert covering(2) >= {"test/calc.js::add", "test/calc.js::add [2]",
                           "test/esm.mjs::esm adds"}


@pytest.mark.slow
def test_a_tape_task_is_graded(project, tmp_path: Path) -> None:
    snapshot, _env, _cache = project
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: tcalc
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
    assert task.record["FAIL_TO_PASS"]
    workspace = task.materialize(tmp_path / "ws")
    assert task.grade(workspace, sandbox="bwrap").reward == 0.0
    apply_patch(workspace, task.record["patch"])
    reference = task.grade(workspace, sandbox="bwrap")
    assert (reference.reward, reference.tampered) == (1.0, ())

    # The attack: no implementation, and the solution's module makes every assertion of
    # tape's pass (tape binds `_assert` into each test made after it loads).
    attacked = task.materialize(tmp_path / "attacked")
    path = attacked / task.record["deleted"][0]["path"]
    path.write_text(path.read_text().replace('throw new Error("not implemented");',
                                             "return 0;") +
                    "\ntry {\n  const Test = require('tape/lib/test');\n"
                    "  const assert = Test.prototype._assert;\n"
                    "  Test.prototype._assert = function (ok, opts) {\n"
                    "    return assert.call(this, true, opts);\n  };\n} catch (e) {}\n")
    scratch = tmp_path / "naive"
    scratch.mkdir()
    assert naive_tape_reward(task, attacked, scratch) == 1.0  # the attack wins there
    result = task.grade(attacked, sandbox="bwrap")
    assert result.reward == 0.0
    assert any(line.startswith("canary ") for line in result.tampered), result.tampered

"""jest for real (installed from the npm registry): its JSON report, selection, collection with
load errors, per-test coverage through babel-jest's source maps, and a generated task graded:
the reference 1, the untouched workspace 0, matchers made to pass by the solution 0 (its
canaries call jest's own `expect`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import apply_patch, make_project, write_recipe
from test_sandbox import require

import taskforge
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.javascript.testing import run_baseline
from taskforge.model import Environment, Snapshot, SourceSpec

pytestmark = pytest.mark.slow
JS = language_named("javascript")

FILES = {
    "package.json": json.dumps({"name": "jcalc", "version": "1.0.0", "scripts": {"test": "jest"},
                                "devDependencies": {"jest": "29.7.0"}}),
    "src/calc.js": '''\
        function add(a, b) {
          const sum = a + b;
          return sum;
        }

        function power(base, exponent) {
          let result = 1;
          for (let i = 0; i < exponent; i++) {
            result = result * base;
          }
          return result;
        }

        module.exports = { add, power };
        ''',
    "test/calc.test.js": '''\
        const { add, power } = require('../src/calc.js');

        describe('add', () => {
          test('small numbers', () => { expect(add(1, 2)).toBe(3); });
          test('same', () => { expect(add(0, 0)).toBe(0); });
          test('same', () => { expect(add(-1, 1)).toEqual(0); });
        });
        describe('power', () => {
          test('squares', () => { expect(power(3, 2)).toBe(9); });
          test('cubes', () => { expect([power(2, 3)]).toStrictEqual([8]); });
          test('zero', () => { expect(power(5, 0)).toBe(1); });
        });
        ''',
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Environment, Path]:
    root = make_project(tmp_path_factory.mktemp("jest"), FILES, name="jcalc")
    cache = tmp_path_factory.mktemp("cache")
    snapshot = Snapshot(id="a" * 40, name="jcalc", source=str(root), commit="0" * 40,
                        root=root, license=None)
    env = JS.prepare(SourceSpec(kind="path", location=str(root)), snapshot, cache,
                     lambda _m: None).env
    assert env.spec.test_command == ("jest",)
    return snapshot, env, cache


def test_run_select_collect(project, tmp_path: Path) -> None:
    snapshot, env, _cache = project
    sandbox = require("bwrap")
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = JS.run_tests(env, workspace, sandbox, timeout=300)
    assert run.outcomes == {"test/calc.test.js::add > small numbers": "passed",
                            "test/calc.test.js::add > same": "passed",
                            "test/calc.test.js::add > same [2]": "passed",
                            "test/calc.test.js::power > squares": "passed",
                            "test/calc.test.js::power > cubes": "passed",
                            "test/calc.test.js::power > zero": "passed"}, run.log_tail
    picked = JS.run_tests(env, workspace, sandbox, timeout=300,
                          select=["test/calc.test.js::power > cubes", "test/calc.test.js::x"])
    assert picked.outcomes == {"test/calc.test.js::power > cubes": "passed",
                               "test/calc.test.js::x": "error"}
    assert JS.collect(env, workspace, sandbox, timeout=300) == set(run.outcomes)
    (workspace / "test" / "other.test.js").write_text("require('../src/gone.js');\n")
    broken = JS.collect(env, workspace, sandbox, timeout=300)
    assert "<collect-error>::test/other.test.js" in broken
    assert "test/calc.test.js::power > cubes" in broken


def test_per_test_coverage_through_source_maps(project) -> None:
    snapshot, env, cache = project
    baseline = run_baseline(snapshot, Runner(JS, env, require("bwrap"), 300, cache=cache),
                            repeats=2, test_timeout=30)
    loop = {baseline.tests[i] for i in baseline.coverage["src/calc.js"][9]}  # power's loop body
    assert loop == {"test/calc.test.js::power > squares", "test/calc.test.js::power > cubes"}
    add = {baseline.tests[i] for i in baseline.coverage["src/calc.js"][2]}
    assert add == {"test/calc.test.js::add > small numbers", "test/calc.test.js::add > same",
                   "test/calc.test.js::add > same [2]"}


def test_a_jest_task_is_graded(project, tmp_path: Path) -> None:
    snapshot, _env, _cache = project
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: jcalc
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
    workspace = task.materialize(tmp_path / "ws")
    assert task.grade(workspace, sandbox="bwrap").reward == 0.0
    apply_patch(workspace, task.record["patch"])
    reference = task.grade(workspace, sandbox="bwrap")
    assert (reference.reward, reference.tampered) == (1.0, ())
    attacked = task.materialize(tmp_path / "attacked")
    path = attacked / task.record["deleted"][0]["path"]
    path.write_text(path.read_text().replace('throw new Error("not implemented");',
                                             "return 0;") +
                    "\nif (globalThis.expect) globalThis.expect.extend(Object.fromEntries(\n"
                    "  ['toBe', 'toEqual', 'toStrictEqual'].map((m) =>\n"
                    "    [m, () => ({ pass: true, message: () => '' })])));\n")
    result = task.grade(attacked, sandbox="bwrap")
    assert result.reward == 0.0
    assert any(line.startswith("canary ") for line in result.tampered), result.tampered

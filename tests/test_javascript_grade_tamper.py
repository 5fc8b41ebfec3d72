"""Attacks on the JavaScript grader, each next to its positive control: the naive grader of
tests/naive_grader.py (the project's own `npm test`, its report, every id passed) scores the
attack 1.0, and `taskforge grade` scores it 0 and says why in `tampered`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import apply_patch
from js_tasks import generated
from naive_grader import naive_js_reward
from test_javascript_channel import CHILD_STREAM, RUNNER_OBJECT

import taskforge

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def js_out(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated(tmp_path_factory)


@pytest.fixture(scope="module")
def js_tasks(js_out: Path) -> taskforge.TaskSet:
    return taskforge.load_tasks(str(js_out))

QUIET_HOOKS = {
    # Loader hooks that hand every test file a node:test whose tests swallow their errors.
    "tools/quiet.mjs": "import { register } from 'node:module';\n"
                       "register('./quiet-hooks.mjs', import.meta.url);\n",
    "tools/quiet-hooks.mjs": "const shim = new URL('./quiet-test.mjs', import.meta.url).href;\n"
                             "export async function resolve(specifier, context, next) {\n"
                             "  if (specifier === 'node:test' && context.parentURL !== shim)\n"
                             "    return { url: shim, shortCircuit: true };\n"
                             "  return next(specifier, context);\n}\n",
    "tools/quiet-test.mjs": "import * as real from 'node:test';\n"
                            "const quiet = (run) => (name, fn) => run(name, async (t) => {\n"
                            "  try { await fn?.(t); } catch {} });\n"
                            "export const test = quiet(real.test);\n"
                            "export const it = quiet(real.it);\n"
                            "export const { describe, suite, before, after, beforeEach,\n"
                            "  afterEach, mock } = real;\nexport default test;\n",
}


def _plant(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


def npmrc_preloads_loader_hooks(ws: Path, task: taskforge.Task) -> None:
    _plant(ws, {**QUIET_HOOKS, ".npmrc": "node-options=--import ./tools/quiet.mjs\n"})


def package_json_test_script_preloads_hooks(ws: Path, task: taskforge.Task) -> None:
    _plant(ws, QUIET_HOOKS)
    package = json.loads((ws / "package.json").read_text())
    package["scripts"]["test"] = "node --import ./tools/quiet.mjs --test"
    (ws / "package.json").write_text(json.dumps(package, indent=2))


def edit_the_failing_test_file(ws: Path, task: taskforge.Task) -> None:
    for rel in sorted({t.split("::")[0] for t in task.record["FAIL_TO_PASS"]}):
        path = ws / rel
        text = path.read_text()
        line = next(ln for ln in text.splitlines() if "from 'node:test'" in ln)
        renamed = re.sub(r"\btest\b(?=[^{]*})", "test as realTest", line, count=1)
        text = text.replace(line, renamed + "\nconst test = (name, fn) => realTest(name, "
                            "async (t) => { try { await fn(t); } catch {} });", 1)
        path.write_text(text)


def assertions_made_no_ops_by_the_solution(ws: Path, task: taskforge.Task) -> None:
    """The solution's own module, imported by the tests, turns node:assert's assertions into
    no-ops: whatever the stub returns, the tests pass. Nothing but the test process's own
    behaviour changes. The guard every run preloads refuses the first replacement and names it
    (before it, the canaries caught it)."""
    rel = task.record["deleted"][0]["path"]
    path = ws / rel
    path.write_text(path.read_text().replace('throw new Error("not implemented");',
                                             "return undefined;") +
                    "\nimport assertModule from 'node:assert';\n"
                    "for (const target of [assertModule, assertModule.strict]) {\n"
                    "  for (const name of Object.keys(target)) {\n"
                    "    if (typeof target[name] === 'function' && name !== 'AssertionError')\n"
                    "      target[name] = () => {};\n  }\n}\n")


# The solution's module makes node:assert's functions no-ops for the values its own code
# returns (a marked object that answers every property and call with itself), and only for
# those: the canaries' plain values still fail as planted.
MARKED_NO_OPS = """
import assertModule from 'node:assert';
const MARK = Symbol.for('taskforge-red-team');
const marked = (v) => v !== null && (typeof v === 'object' || typeof v === 'function')
  && v[MARK] === true;
for (const target of [assertModule, assertModule.strict]) {
  for (const name of Object.keys(target)) {
    const real = target[name];
    if (typeof real !== 'function' || name === 'AssertionError') continue;
    target[name] = function (...args) {
      return args.some(marked) ? undefined : real.apply(this, args);
    };
  }
}
const ANSWER = new Proxy(function () {}, {
  get: (t, k) => (k === MARK ? true : k === Symbol.toPrimitive ? () => '' : ANSWER),
  apply: () => ANSWER,
});
"""


def assertions_no_ops_for_the_solutions_values(ws: Path, task: taskforge.Task) -> None:
    path = ws / task.record["deleted"][0]["path"]
    path.write_text(MARKED_NO_OPS + path.read_text().replace(
        'throw new Error("not implemented");', "return ANSWER;"))


# Session 45's red team, each 1.0 under `taskforge grade` before node:test's outcomes came over
# a signed channel (support/taskforge-channel.cjs), nothing reported. Both spare the canaries
# (their names end in a random word), so every canary still behaves.
SPARE_CANARIES = "const isCanary = (name) => /\\s[a-z0-9]{6}$/.test(String(name));\n"


def _solution_spares(attack: str) -> Callable[[Path, taskforge.Task], None]:
    def change(ws: Path, task: taskforge.Task) -> None:
        path = ws / task.record["deleted"][0]["path"]
        path.write_text(attack + path.read_text().replace('throw new Error("not implemented");',
                                                          "spare(); return undefined;"))
    return change


ATTACKS: dict[str, tuple[Callable[[Path, taskforge.Task], None], str]] = {
    "npmrc": (npmrc_preloads_loader_hooks, "added .npmrc"),
    "package-json": (package_json_test_script_preloads_hooks, "edited package.json"),
    "test-file": (edit_the_failing_test_file, "edited test/"),
    # refused by the guard (support/taskforge-guard.cjs) before any canary could see it
    "no-op-assertions": (assertions_made_no_ops_by_the_solution, "replaced node:assert"),
    # the runner's test object, from async_hooks, made to pass what fails
    "runner-object": (_solution_spares(SPARE_CANARIES + RUNNER_OBJECT),
                      "the test report was rewritten"),
    # the test file's process's events to the runner rewritten on their way out
    "child-stream": (_solution_spares(SPARE_CANARIES + CHILD_STREAM),
                     "the test report was rewritten"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_wins_against_the_naive_grader_and_scores_zero(
        attack: str, js_tasks: taskforge.TaskSet, tmp_path: Path) -> None:
    task = next(t for t in js_tasks if t.record["strategy"] == "stub-function")
    change, reported = ATTACKS[attack]
    workspace = task.materialize(tmp_path / "ws")
    change(workspace, task)
    assert naive_js_reward(task, workspace, tmp_path) == 1.0  # the attack works ...
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 0.0, result  # ... and not here
    assert any(reported in line for line in result.tampered), result.tampered


def test_assertions_no_ops_for_the_solutions_values_only(js_tasks: taskforge.TaskSet,
                                                         tmp_path: Path) -> None:
    """Session 44's red team: every canary behaves as planted (their values are not the
    solution's), so before node:assert was guarded (support/taskforge-guard.cjs) the grade was
    1.0 wherever every FAIL_TO_PASS test asserts on the stub's own results. The positive
    control is the naive grader, on each stub-function task where the attack works there."""
    won = 0
    for n, task in enumerate(t for t in js_tasks if t.record["strategy"] == "stub-function"):
        workspace = task.materialize(tmp_path / f"ws{n}")
        assertions_no_ops_for_the_solutions_values(workspace, task)
        if naive_js_reward(task, workspace, tmp_path / f"naive{n}") != 1.0:
            continue  # a test that reaches the stub through other code: no win to take away
        won += 1
        result = task.grade(workspace, sandbox="bwrap")
        assert result.reward == 0.0, result
        assert any(line.startswith("replaced node:assert") for line in result.tampered), result
    assert won, "the attack won against the naive grader on no task: no positive control"


def test_the_reference_is_not_tampering(js_tasks: taskforge.TaskSet, tmp_path: Path) -> None:
    task = next(t for t in js_tasks if t.record["strategy"] == "stub-function")
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    assert naive_js_reward(task, workspace, tmp_path) == 1.0
    result = task.grade(workspace, sandbox="bwrap")
    assert (result.reward, result.tampered) == (1.0, ())

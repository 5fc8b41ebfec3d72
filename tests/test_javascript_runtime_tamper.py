"""Attacks on the JavaScript grader from inside the test run, each next to its positive
control: the naive graders of tests/naive_grader.py score the attack 1.0, and `taskforge
grade` scores it 0 and says why in `tampered`. Both came from session 64's red team and
scored 1.0 under `taskforge grade --sandbox bwrap`, nothing reported, with the feature
still missing.

- Later test files rewritten while the tests run: the solution's module, imported by a test
  file that runs first, rewrites the test files the runner has not loaded yet (node's runner
  starts a process per file; vitest imports each file when it runs it) so that every test
  swallows its failure. The sandbox binds the restored test code read-only, and the grader
  compares it after the run with what it restored (taskforge/languages/grading_copy.py).
- A copy of the running test file registered first: the stub's module writes a copy of the
  test file that imports it (tests wrapped to pass, named after the real file by
  `//# sourceURL`) and imports it ahead of the file's own body; the copy's tests take the
  file's ids and its own tests run after them as `name [2]`, or not at all when the process
  ends first. The signed channel does not sign a test registered by code named after its file
  by another script (support/taskforge-channel.cjs), and the grader names a test of an
  expected name that ran more often than the task has it and did not pass
  (`registered_again`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import apply_patch
from js_tasks import generated, generated_tsdemo
from naive_grader import naive_js_reward, naive_vitest_reward

import taskforge
from taskforge.languages.javascript.grading.run import registered_again

pytestmark = pytest.mark.slow

# The line `import { test, ... } from <runner>` rewritten (matched as `m`) so that each test
# and hook body swallows what it throws: the new line is `head`.
WRAP = r"""
      const names = m[1].split(',').map((x) => x.trim()).filter(Boolean);
      const hooked = ['test', 'it', 'beforeEach', 'afterEach', 'before', 'after', 'beforeAll',
                      'afterAll'];
      const wrap = names.filter((n) => hooked.includes(n));
      const imported = names.map((n) => (wrap.includes(n) ? `${n} as __tf_w_${n}` : n));
      let head = `import { ${imported.join(', ')} } from ${m[2]}${m[3]}${m[2]};\n`;
      for (const n of wrap) {
        head += `const ${n} = Object.assign((...a) => { `
          + `const i = a.findIndex((x) => typeof x === 'function'); `
          + `if (i >= 0) { const f = a[i]; `
          + `a[i] = async function (...b) { try { await f.apply(this, b); } catch {} }; } `
          + `return __tf_w_${n}(...a); }, __tf_w_${n});\n`;
      }
"""

# The red team's payload, appended to modules of the solution: every test file but the one
# running gets its `import {...} from 'node:test'|'vitest'` line replaced so that each test
# body swallows what it throws.
REWRITE_LATER_TESTS = r"""
import * as __fs from 'node:fs';
import * as __path from 'node:path';
(() => {
  try {
    const root = process.env.TASKFORGE_WORKSPACE || process.cwd();
    const me = __path.resolve(process.argv[1] || '');
    const files = [];
    const walk = (d) => {
      for (const e of __fs.readdirSync(d, { withFileTypes: true })) {
        if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
        const p = __path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(test|spec)\.[cm]?[jt]s$/.test(e.name)) files.push(p);
      }
    };
    walk(root);
    const runners = ['node:te' + 'st', 'vit' + 'est'];
    for (const p of files) {
      if (p === me) continue;
      let s = __fs.readFileSync(p, 'utf8');
      if (s.includes('__tf_w')) continue;
      const m = /^import\s*\{([^}]*)\}\s*from\s*(.)([\w:]+)\2;?[ \t]*$/m.exec(s);
      if (!m || !runners.includes(m[3])) continue;
{wrap}      s = s.slice(0, m.index) + head + s.slice(m.index + m[0].length);
      __fs.writeFileSync(p, s);
    }
  } catch {}
})();
""".replace("{wrap}", WRAP.strip("\n") + "\n")

# The running test file's text with its tests wrapped (`s`), in the file's own process.
COPY_HEAD = r"""
import * as __fs from 'node:fs';
import * as __url from 'node:url';
import * as __vm from 'node:vm';
if (!globalThis.__tf_done && process.env.NODE_TEST_CONTEXT) {
  globalThis.__tf_done = true;
  try {
    const me = process.argv[1];
    let s = __fs.readFileSync(me, 'utf8');
    const m = /^import\s*\{([^}]*)\}\s*from\s*(.)([\w:]+)\2;?[ \t]*$/m.exec(s);
    if (m && m[3] === 'node:te' + 'st') {
""" + WRAP.strip("\n") + "\n" + r"""      s = s.slice(0, m.index) + head + s.slice(m.index + m[0].length);
"""
COPY_TAIL = r"""
    }
  } catch {}
}
"""
# The red team's second payload, appended to the stub's module: a copy of the running test
# file, tests wrapped to pass, relative imports made fresh instances, named after the real
# file by its sourceURL, imported before the file's own body runs. `{after}` runs once the
# copy is imported: nothing (the file's own tests then run as `name [2]`), or an exit once
# the copy's tests are done (the file's own never register).
SAME_FILE_COPY = COPY_HEAD + r"""
      s = s.replace(/(from\s*)(['"])(\.{1,2}\/[^'"]+)\2/g, (_x, f, q, p) => `${f}${q}${p}?tf${q}`);
      const copy = me.replace(/\.[cm]?js$/, '.tfcopy.mjs');
      s += `\n//# sourceURL=${me}\n`;
      __fs.writeFileSync(copy, s);
      await import(__url.pathToFileURL(copy).href);
      {after}""" + COPY_TAIL
# The same copy compiled in the file's process under the file's very name (no sourceURL, no
# file written): its imports made parameters, given the modules the payload imports fresh.
VM_COPY = COPY_HEAD + r"""
      let n = 0;
      s = s.replace(/import\s+([\s\S]*?)\s+from\s*(['"])([^'"]+)\2;?/g, (_x, what, _q, spec) => {
        const v = `__m${n++}`;
        const from = spec.startsWith('.') ? new URL(spec, __url.pathToFileURL(me)).href + '?tf' : spec;
        let out = `const ${v} = await __import(${JSON.stringify(from)});`;
        const named = /\{([\s\S]*)\}/.exec(what);
        const head = what.replace(/\{[\s\S]*\}/, '').replace(/,\s*$/, '').trim();
        if (head.startsWith('* as ')) out += `const ${head.slice(5)} = ${v};`;
        else if (head) out += `const ${head} = ${v}.default;`;
        if (named) out += `const {${named[1].replace(/\bas\b/g, ':')}} = ${v};`;
        return out;
      });
      const run = __vm.compileFunction(`return (async () => {${s}\n})();`, ['__import'],
                                       { filename: me });
      await run((spec) => import(spec));
      await new Promise((r) => setTimeout(r, 1500));
      process.exit(0);""" + COPY_TAIL
# variant -> (the payload, what `tampered` must name)
COPIES = {
    # as the red team sent it: the file's own tests run after the copy's, as `name [2]`
    "own-tests-after": (SAME_FILE_COPY.replace("{after}", ""),
                        "ran more often in their files than the task has them"),
    # the process ends once the copy's tests are done: no `name [2]` at all
    "process-ends-first": (SAME_FILE_COPY.replace(
        "{after}", "await new Promise((r) => setTimeout(r, 1500)); process.exit(0);"),
        "named after the test file by //# sourceURL"),
    # no sourceURL: compiled by vm under the file's own name; V8's hash of its source is not
    # the file's
    "compiled-under-its-name": (VM_COPY,
                                "code compiled under the test file's name that is not its source"),
}


def _append(ws: Path, rels: list[str], code: str) -> None:
    for rel in rels:
        path = ws / rel
        path.write_text(path.read_text() + "\n" + code)


def _other_modules(ws: Path, task: taskforge.Task, suffix: str) -> list[str]:
    """The solution's modules but the deleted ones: one of them is imported by a test file
    that runs before the deleted code's tests."""
    deleted = {d["path"] for d in task.record["deleted"]}
    return sorted(p.relative_to(ws).as_posix() for p in (ws / "src").glob(f"*{suffix}")
                  if p.relative_to(ws).as_posix() not in deleted)


@pytest.fixture(scope="module")
def js_tasks(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> taskforge.TaskSet:
    return taskforge.load_tasks(str(generated(tmp_path_factory)))


@pytest.fixture(scope="module")
def ts_tasks(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> taskforge.TaskSet:
    return taskforge.load_tasks(str(generated_tsdemo(tmp_path_factory)))


def _by_runner(request: pytest.FixtureRequest, runner: str
               ) -> tuple[list[taskforge.Task], str, Callable[[taskforge.Task, Path, Path], float]]:
    """The module's tasks of `runner` (its fixture made only when asked for), their modules'
    suffix and the naive grader."""
    if runner == "node-test":
        return list(request.getfixturevalue("js_tasks")), ".js", naive_js_reward
    return list(request.getfixturevalue("ts_tasks")), ".ts", naive_vitest_reward


def _first_win(tasks: list[taskforge.Task], tmp_path: Path,
               change: Callable[[Path, taskforge.Task], None],
               naive: Callable[[taskforge.Task, Path, Path], float]
               ) -> tuple[taskforge.Task, Path]:
    """The first task (and its changed workspace) where the attack wins against the naive
    grader: the positive control. A task whose tests run first has nothing to win."""
    for n, task in enumerate(tasks):
        workspace = task.materialize(tmp_path / f"ws{n}")
        change(workspace, task)
        if naive(task, workspace, tmp_path / f"naive{n}") == 1.0:
            return task, workspace
    raise AssertionError("the attack won against the naive grader on no task: no positive control")


@pytest.mark.parametrize("runner", ["node-test", "vitest"])
def test_later_test_files_rewritten_during_the_run_score_zero(
        runner: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    tasks, suffix, naive = _by_runner(request, runner)
    task, workspace = _first_win(
        tasks, tmp_path,
        lambda ws, t: _append(ws, _other_modules(ws, t, suffix), REWRITE_LATER_TESTS), naive)
    # bwrap binds the restored test code read-only: the rewrite fails, the tests fail.
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 0.0, result
    # With no sandbox nothing is bound read-only: the comparison after the run names it.
    result = task.grade(workspace, sandbox="none")
    assert result.reward == 0.0, result
    assert any(line.startswith("test files were rewritten while the tests ran")
               for line in result.tampered), result.tampered


@pytest.mark.parametrize("variant", sorted(COPIES))
def test_a_copy_of_the_test_file_registered_first_scores_zero(
        variant: str, js_tasks: taskforge.TaskSet, tmp_path: Path) -> None:
    attack, reported = COPIES[variant]
    task, workspace = _first_win(
        [t for t in js_tasks if t.record["strategy"] in ("remove-function", "stub-function")],
        tmp_path, lambda ws, t: _append(ws, [t.record["deleted"][0]["path"]], attack),
        naive_js_reward)
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 0.0, result
    assert any(reported in line for line in result.tampered), result.tampered


@pytest.mark.parametrize("runner", ["node-test", "vitest"])
def test_the_reference_still_scores_one(runner: str, request: pytest.FixtureRequest,
                                        tmp_path: Path) -> None:
    task = _by_runner(request, runner)[0][0]
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    result = task.grade(workspace, sandbox="bwrap")
    assert (result.reward, result.tampered) == (1.0, ()), result


def test_links_out_of_the_workspace_are_removed_and_named(js_tasks: taskforge.TaskSet,
                                                          tmp_path: Path) -> None:
    """A link to a file outside the workspace reads the host (or the cache's snapshot) where
    the sandbox shows it; a dangling one makes the copy unreadable. Both are taken out of the
    grading copy and named; the correct solution beside them still scores 1.0."""
    task = next(t for t in js_tasks if t.record["strategy"] == "remove-function")
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    outside = tmp_path / "outside.js"
    outside.write_text("export const secret = 1;\n")
    (workspace / "src" / "outside.js").symlink_to(outside)
    (workspace / "src" / "nowhere.js").symlink_to("no-such-file.js")
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 1.0, result
    assert set(result.tampered) == {
        f"removed link src/outside.js -> {outside}: it points outside the workspace",
        "removed link src/nowhere.js -> no-such-file.js: it points to nothing"}, result.tampered


# `registered_again` on its own: a project's own repeated names are not tampering.
T = "test/a.test.js::suite > adds"


@pytest.mark.parametrize(("expected", "reported", "signed", "named"), [
    # a name the project repeats, both in the task: nothing to say
    ([T, f"{T} [2]"], {T: "passed", f"{T} [2]": "passed"},
     {("test/a.test.js", "suite > adds", 1): True, ("test/a.test.js", "suite > adds", 2): True},
     []),
    # a repetition the task leaves out (it does not reach the deleted code): it passes
    ([T], {T: "passed", f"{T} [2]": "passed"},
     {("test/a.test.js", "suite > adds", 1): True, ("test/a.test.js", "suite > adds", 2): True},
     []),
    # only the second in the task: the first, left out, passes
    ([f"{T} [2]"], {T: "passed", f"{T} [2]": "passed"}, None, []),
    # the file's own test pushed back to `[2]`, failing
    ([T], {T: "passed", f"{T} [2]": "failed"},
     {("test/a.test.js", "suite > adds", 1): True, ("test/a.test.js", "suite > adds", 2): False},
     [f"{T} [2]"]),
    # the report hides it, the channel does not
    ([T], {T: "passed"},
     {("test/a.test.js", "suite > adds", 1): True, ("test/a.test.js", "suite > adds", 2): False},
     [f"{T} [2]"]),
    # reported passed, never signed
    ([T], {T: "passed", f"{T} [2]": "passed"}, {("test/a.test.js", "suite > adds", 1): True},
     [f"{T} [2]"]),
    # without a channel (vitest, mocha, tape), the report's word
    ([T], {T: "passed", f"{T} [2]": "skipped"}, None, [f"{T} [2]"]),
])
def test_a_repeated_name_is_named_only_where_the_extra_test_did_not_pass(
        expected: list[str], reported: dict[str, str],
        signed: dict[tuple[str, str, int], bool] | None, named: list[str]) -> None:
    findings = registered_again(expected, reported, signed)  # type: ignore[arg-type]
    assert [t for t in named if any(f"`{t}`" in f.message for f in findings)] == named
    assert len(findings) == (1 if named else 0)
    assert all(f.disqualifies for f in findings)

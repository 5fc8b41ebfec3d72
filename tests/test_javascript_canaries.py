"""The JavaScript grader's canaries in the test files a runner runs: they must run there as
the file's own tests do, or every test of the file errs and the grader passes nothing."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from conftest import prepared_js_project
from test_sandbox import require

from taskforge.languages import language_named
from taskforge.languages.javascript.grading import canaries as canaries_module
from taskforge.languages.javascript.grading.canaries import plant_canaries

pytestmark = pytest.mark.slow

JS = language_named("javascript")
# vitest with its globals, test files in CommonJS style (`require`): what a project moved
# from jest keeps.
GLOBALS_PROJECT = {
    "package.json": json.dumps({"name": "vglobals", "version": "1.0.0",
                                "scripts": {"test": "vitest run"},
                                "devDependencies": {"vitest": "4.1.12"}}),
    "vitest.config.mjs": "export default { test: { globals: true, "
                         "include: ['test/**/*.test.js'] } };\n",
    "src/text.js": """\
        function shout(text) {
          const loud = String(text).toUpperCase();
          return loud + '!';
        }
        module.exports = { shout };
        """,
    "test/text.test.js": """\
        const { shout } = require('../src/text.js');

        describe('shout', () => {
          test('adds a bang', () => { expect(shout('hi')).toBe('HI!'); });
        });
        test('numbers too', () => { expect(shout(5)).toBe('5!'); });
        """,
}
TESTS = ["test/text.test.js::shout > adds a bang", "test/text.test.js::numbers too"]


def test_canaries_run_in_a_commonjs_test_file_under_vitest_globals(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """vitest compiles every test file as a module and cannot itself be required: canaries
    that required it (the file looked CommonJS) made every test of the file err, so the
    grader passed none of the project's tests and the source was set aside (the control,
    kept below). Imported, they run as planted beside the file's own tests."""
    snapshot, env, _cache = prepared_js_project(tmp_path_factory, GLOBALS_PROJECT,
                                                name="vglobals", snapshot_id="c7" * 20)
    box = require("bwrap")

    def planted_run(dest: Path) -> tuple[bool, list[str]]:
        """Whether every canary ran as planted, and the outcomes of the file's own tests."""
        shutil.copytree(snapshot.root, dest)
        planted = plant_canaries(dest, TESTS, "vitest", random.Random(5))
        assert planted
        run = JS.run_tests(env, dest, box, timeout=120,
                           select=TESTS + [c.test_id for c in planted])
        return all(run.outcomes.get(c.test_id) == c.expected for c in planted), \
            [run.outcomes.get(t, "missing") for t in TESTS]

    assert planted_run(tmp_path / "imported") == (True, ["passed", "passed"])
    monkeypatch.setattr(canaries_module, "_is_module", lambda *args: False)  # required
    assert planted_run(tmp_path / "required") == (False, ["error", "error"])

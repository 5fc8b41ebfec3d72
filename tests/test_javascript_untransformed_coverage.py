"""Per-test coverage of source files a runner that transforms code (vitest, jest) leaves as
they are: a CommonJS test file under vitest `require`s them through Node itself, and jest
with no transform only wraps them. V8 runs the file's own text: its lines are the file's.
Before, only code with an inline source map counted, so a vitest project whose tests require
their sources had an empty test map and no candidates; and one worker that ran a file both
ways (imported through vite and required) kept the ranges of one script and the code of the
other, under the file's name."""

from __future__ import annotations

import json

import pytest
from conftest import prepared_js_project, write_recipe
from test_sandbox import require

import taskforge
from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.javascript.testing import run_baseline

pytestmark = pytest.mark.slow
JS = language_named("javascript")

SOURCE = """\
function slugify(text) {
  const words = String(text).toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  return words.join('-');
}

function initials(name) {
  const parts = String(name).split(/\\s+/).filter(Boolean);
  return parts.map((part) => part[0].toUpperCase()).join('');
}

module.exports = { slugify, initials };
"""
SLUGIFY, INITIALS = 2, 7  # a line of each body
VITEST = {
    "package.json": json.dumps({"name": "vreq", "version": "1.0.0",
                                "scripts": {"test": "vitest run"},
                                "devDependencies": {"vitest": "4.1.12"}}),
    "vitest.config.mjs": "export default { test: { globals: true, "
                         "include: ['test/**/*.test.js'] } };\n",
    "src/text.js": SOURCE,
    # required: Node runs the file itself
    "test/required.test.js": """\
        const text = require('../src/text.js');

        test('slugify by require', () => { expect(text.slugify('A b')).toBe('a-b'); });
        """,
    # the same file both ways in one worker: two scripts of one name
    "test/both.test.js": """\
        import imported from '../src/text.js';
        const required = require('../src/text.js');

        test('initials by import', () => { expect(imported.initials('a b')).toBe('AB'); });
        test('slugify by require too', () => { expect(required.slugify('C d')).toBe('c-d'); });
        """,
}
JEST = {
    "package.json": json.dumps({"name": "jreq", "version": "1.0.0",
                                "scripts": {"test": "jest"},
                                "devDependencies": {"jest": "29.7.0"},
                                "jest": {"transform": {}}}),
    "src/text.js": SOURCE,
    "test/text.test.js": """\
        const text = require('../src/text.js');

        test('slugify', () => { expect(text.slugify('A b')).toBe('a-b'); });
        test('initials', () => { expect(text.initials('a b')).toBe('AB'); });
        """,
}


def covering(project: dict[str, str], factory: pytest.TempPathFactory, name: str,
             snapshot_id: str) -> dict[int, set[str]]:
    """The tests covering each of the two bodies' lines, from the baseline's test map."""
    snapshot, env, cache = prepared_js_project(factory, project, name=name,
                                               snapshot_id=snapshot_id)
    baseline = run_baseline(snapshot, Runner(JS, env, require("bwrap"), 300, cache=cache),
                            repeats=2, test_timeout=30)
    lines = baseline.coverage.get("src/text.js", {})
    return {ln: {baseline.tests[i] for i in lines.get(ln, ())} for ln in (SLUGIFY, INITIALS)}


def test_vitest_sources_required_by_node_are_covered_per_test(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    assert covering(VITEST, tmp_path_factory, "vreq", "d1" * 20) == {
        SLUGIFY: {"test/required.test.js::slugify by require",
                  "test/both.test.js::slugify by require too"},
        INITIALS: {"test/both.test.js::initials by import"},
    }


def test_jest_sources_it_does_not_transform_are_covered_per_test(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    assert covering(JEST, tmp_path_factory, "jreq", "d2" * 20) == {
        SLUGIFY: {"test/text.test.js::slugify"},
        INITIALS: {"test/text.test.js::initials"},
    }


def test_a_vitest_project_that_requires_its_sources_gives_tasks(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The symptom: no candidate at all before."""
    snapshot, _env, _cache = prepared_js_project(tmp_path_factory, VITEST, name="vreq",
                                                 snapshot_id="d3" * 20)
    base = tmp_path_factory.mktemp("vreq-tasks")
    recipe = write_recipe(base / "recipe.yaml", f"""\
        name: vreq
        seed: 0
        sources:
          - path: {snapshot.root}
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 1}}
        sandbox: bwrap
        """)
    taskforge.generate(str(recipe), out=str(base / "out"))
    tasks = {t.record["deleted"][0]["symbol"]: t for t in taskforge.load_tasks(str(base / "out"))}
    assert set(tasks) == {"src/text.slugify", "src/text.initials"}, sorted(tasks)
    assert set(tasks["src/text.slugify"].record["FAIL_TO_PASS"]) == {
        "test/required.test.js::slugify by require", "test/both.test.js::slugify by require too"}

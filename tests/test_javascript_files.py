"""JavaScript detection, test files, protected files and runner detection: no node needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT, make_project

from taskforge.errors import UserError
from taskforge.languages import detect_language, language_named
from taskforge.languages.javascript.package import runner_setup
from taskforge.languages.javascript.runners import runner_named
from taskforge.sources.npm import ingest_npm

JS = language_named("javascript")


@pytest.mark.parametrize("rel", [
    "test/store.test.js", "src/__tests__/util.js", "lib/parse.spec.ts", "parse-test.mjs",
    "parse_test.cjs", "test-parse.js", "spec/helpers/setup.js", "test.js", "a/b.test.tsx"])
def test_test_files(rel: str) -> None:
    assert JS.is_test_file(rel)
    assert JS.is_protected(rel)


@pytest.mark.parametrize("rel", ["src/store.js", "index.ts", "lib/testing.js", "src/contest.js",
                                 "src/latest.js"])
def test_source_files(rel: str) -> None:
    assert not JS.is_test_file(rel)
    assert not JS.is_protected(rel)


@pytest.mark.parametrize("rel", ["package.json", "packages/a/package.json", "package-lock.json",
                                 ".mocharc.yml", ".mocharc.json", "jest.config.js",
                                 "vitest.config.ts", "tsconfig.json", ".npmrc", "babel.config.js"])
def test_runner_configuration_is_protected(rel: str) -> None:
    assert JS.is_protected(rel) and not JS.is_test_file(rel)


def test_detection_order_and_polyglot_trees(tmp_path: Path) -> None:
    js = make_project(tmp_path, {"package.json": '{"scripts": {"test": "node --test"}}',
                                 "src/a.js": "export const a = 1;\n",
                                 "scripts/release.py": "print('a stray Python script')\n"},
                      name="js")
    assert detect_language(js, "js").name == "javascript"
    # A tree with Python project files is Python's, package.json or not.
    poly = make_project(tmp_path, {"package.json": '{"scripts": {"test": "node --test"}}',
                                   "test/a.test.js": "", "pyproject.toml": "[project]\n",
                                   "tests/test_a.py": ""}, name="poly")
    assert detect_language(poly, "poly").name == "python"
    # package.json with npm's placeholder script and no test file: not a JavaScript project.
    bare = make_project(tmp_path, {"package.json": json.dumps(
        {"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}),
        "index.js": "", "setup.py": ""}, name="bare")
    assert detect_language(bare, "bare").name == "python"
    assert detect_language(REPO_ROOT / "sample_repos" / "jsdemo", "jsdemo").name == "javascript"
    # TypeScript: the same language's answers under its own name (a tsconfig.json or .ts files)
    assert detect_language(REPO_ROOT / "sample_repos" / "tsdemo", "tsdemo").name == "typescript"
    typed = make_project(tmp_path, {"package.json": '{"scripts": {"test": "vitest run"}}',
                                    "src/a.ts": "export const a: number = 1;\n",
                                    "src/types.d.ts": ""}, name="typed")
    assert detect_language(typed, "typed").name == "typescript"
    # declarations and tsd's type tests do not make a JavaScript package TypeScript
    typed_js = make_project(tmp_path, {"package.json": '{"scripts": {"test": "node --test"}}',
                                       "index.js": "", "types/index.d.ts": "",
                                       "types/index.test-d.ts": "", "tsconfig.json": "{}"},
                            name="typed-js")
    assert detect_language(typed_js, "typed-js").name == "javascript"


@pytest.mark.parametrize(("package", "files", "runner", "args"), [
    ({"scripts": {"test": "node --test test/"}}, {}, "node-test", ("test/",)),
    ({"scripts": {"test": "node --test --test-concurrency=1"}}, {}, "node-test", ()),
    ({"scripts": {"test": "mocha --reporter spec 'test/**/*.js'"}}, {}, "mocha",
     ("test/**/*.js",)),
    ({"scripts": {"test": "vitest run"}}, {}, "vitest", ()),
    ({"scripts": {"test": "tape test/*.js"}}, {}, "tape", ("test/*.js",)),
    ({"devDependencies": {"vitest": "4"}}, {}, "vitest", ()),
    # the command that runs the tests, inside lint and coverage gates and other scripts
    ({"scripts": {"test": "npm run lint && npm run tests-only", "lint": "eslint .",
                  "tests-only": "c8 --100 node --test test/"}}, {}, "node-test", ("test/",)),
    ({"scripts": {"test": "eslint . ; nyc --reporter=text mocha 'test/**/*.js'"}}, {}, "mocha",
     ("test/**/*.js",)),
    # json-schema-traverse 1.0.0's scripts: a wrapper before npm run
    ({"scripts": {"eslint": "eslint index.js spec", "test-spec": "mocha spec -R spec",
                  "test": "npm run eslint && nyc npm run test-spec"},
      "devDependencies": {"mocha": "8"}}, {}, "mocha", ("spec",)),
    ({}, {".mocharc.yml": "spec: test\n"}, "mocha", ()),
    ({}, {}, "node-test", ()),
])
def test_runner_detection(tmp_path: Path, package: dict, files: dict[str, str], runner: str,
                          args: tuple[str, ...]) -> None:
    root = make_project(tmp_path, {"package.json": json.dumps(package), **files})
    setup = runner_setup(root)
    assert setup is not None and (setup.runner, setup.args) == (runner, args)


def test_a_runner_taskforge_does_not_run_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"ava.*does not run it yet"):
        runner_named("ava")


def test_npm_sources_are_pinned(tmp_path: Path) -> None:
    for spec in ("qs", "qs@^6", "qs@latest", "qs@6.13"):
        with pytest.raises(UserError, match="pin an exact version"):
            ingest_npm(spec, tmp_path)

"""Which files of a JavaScript/TypeScript project are tests, and which the grader puts back:
one definition for every stage. Light on purpose (no tree-sitter): a data loader that grades
imports this, not the deleters."""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

SOURCE_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
TYPESCRIPT_SUFFIXES = (".ts", ".mts", ".cts", ".tsx")
# Directories that hold tests by convention (jest's __tests__, mocha's and node's test/).
TEST_DIRS = ("test", "tests", "__tests__", "spec", "__mocks__", "__fixtures__", "fixtures")
# `name.test.js`, `name.spec.ts`, `name-test.js`, `name_test.mjs`, `test-name.js`, `test.js`:
# the names node's runner, jest, vitest and mocha pick up by default; `name.test-d.ts`: tsd's.
TEST_NAMES = ("*.test.*", "*.spec.*", "*-test.*", "*_test.*", "test-*.*", "test.*",
              "*.test-d.*")  # the last: tsd's type tests
# Runner configuration: tests' behaviour and what reports them. package.json carries the
# `scripts`, `jest`, `mocha` and `c8` keys besides the dependencies; the environment is
# rebuilt from the record, so it is restored whole.
RUNNER_CONFIG = ("jest.config.*", "jest.setup.*", "vitest.config.*", "vitest.workspace.*",
                 "vite.config.*", ".mocharc", ".mocharc.*", "karma.conf.*", ".taprc",
                 "ava.config.*", ".c8rc*", ".nycrc*", "babel.config.*", ".babelrc",
                 ".babelrc.*", "tsconfig.json", "tsconfig.*.json", "package.json",
                 "package-lock.json", "npm-shrinkwrap.json", ".npmrc")


def is_source(rel: str) -> bool:
    return rel.endswith(SOURCE_SUFFIXES) and not rel.endswith(".d.ts")


def is_test_file(rel: str) -> bool:
    """A test module or any file under a test directory (helpers and fixtures)."""
    parts = PurePosixPath(rel).parts
    name = parts[-1]
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    return name.endswith(SOURCE_SUFFIXES) and any(fnmatch.fnmatchcase(name, p) for p in TEST_NAMES)


def is_runner_config(rel: str) -> bool:
    name = PurePosixPath(rel).name
    return any(fnmatch.fnmatchcase(name, p) for p in RUNNER_CONFIG)


def is_protected(rel: str) -> bool:
    """A file the grader restores: tests, their helpers and data, and runner configuration
    (anywhere in the tree: a nested package.json or .mocharc counts too)."""
    return is_test_file(rel) or is_runner_config(rel)

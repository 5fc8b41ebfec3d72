"""What a JavaScript solution's own code reaches for, read from its files: a test framework or
assertion library that code which is not a test newly imports, or newly takes from the global
object, node's module loader, or where an in-process runner keeps its running test. The
counterpart of the Python grader's static checks (`unittest.mock` in non-test
code).

Why: `expect.extend` replaces a built-in matcher as readily as it adds one. A solution that
returns a marked value and extends `toBe`, `toEqual`, ... to pass for that value only passes
every test on its results, while every canary (plain values) still behaves (session 44's red
team, on tsdemo). No canary can see that; the import can. Production code of a project has no
business with the project's test runner, so a new one fails closed: 0, the file and the module
named. node:assert is not among them: library code asserts its invariants with it, and its
functions cannot be replaced in a test run (support/taskforge-guard.cjs).

A module named by a computed string (`import(['vit', 'est'].join(''))`) is not seen: the
canaries are the check left there (README, "What cannot be checked").
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from taskforge.languages.javascript.files import is_protected, is_source, is_test_file

# Test runners, assertion and mocking libraries: what tests import, and code under test never.
FRAMEWORKS = re.compile(r"^(?:vitest|vitest/.+|@vitest/.+|@jest/.+|jest|jest-.+|expect|"
                        r"mocha|chai|chai-.+|@types/chai|tape|node:test|ava|uvu|uvu/.+|"
                        r"sinon|should|power-assert|testdouble|@testing-library/.+)$")
# A module named by a literal: `from 'x'`, `import 'x'`, `import('x')`, `require('x')`; not
# `import type` (TypeScript's, erased before anything runs).
_SPECIFIER = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)"""
                        r"""(['"`])([^'"`\n]+)\1""")
_TYPE_ONLY = re.compile(r"""\b(?:import|export)\s+type\b[^;'"`]*?\bfrom\s*(['"`])[^'"`\n]+\1""")
# The frameworks' globals, taken from the global object (jest's and vitest's `expect`, `vi`,
# `jest`; mocha's `it`, `describe`, hooks and its tdd interface's names: a solution that wraps
# `global.it` decides every later test of its file) or, the unmistakable ones, used bare with
# a member (`expect.extend`, `jest.fn`, `chai.use`): never code under test's. A bare `it.`,
# `test.` or `vi.` could be anyone's variable, and `self` anyone's `this`.
_NAMES = r"expect|jest|chai"
_GLOBALS = (_NAMES + r"|vi|it|test|describe|context|specify|suite|before|after|beforeEach|"
            r"afterEach|beforeAll|afterAll|setup|teardown|suiteSetup|suiteTeardown")
_GLOBAL = re.compile(rf"""(?<![\w$.])(?:globalThis|global|window)[ \t]*(?:\??\.[ \t]*"""
                     rf"""({_GLOBALS})\b|\[[ \t]*(['"`])({_GLOBALS})\2[ \t]*\])""")
_BARE = re.compile(rf"""(?<![\w$.])({_NAMES})[ \t]*\??\.[ \t]*\w""")
# Node's module loader, which decides what `require('node:test')` hands a test file that asks
# after the solution's module ran: its hooks are no code under test's either.
_LOADER = re.compile(r"""\.[ \t]*(_load|_resolveFilename|syncBuiltinESMExports)\b"""
                     r"""|\bprototype[ \t]*\.[ \t]*(require)\b""")
# Where an in-process runner keeps its own state, which code under test can reach through the
# global object: vitest's worker state (its `current` test, whose result and `onFinished`
# hooks decide what the worker reports: session 45's red team scored 1.0 on six of twelve
# tsdemo tasks by adding a hook that set each failed result to passed) and jest-circus'
# (`Symbol.for('JEST_STATE_SYMBOL')`, its currently running test and that test's errors).
# Looked for in strings too (`globalThis['__vitest_worker__']`), not by a computed name.
_RUNNER_STATE = re.compile(r"__vitest_worker__|JEST_STATE_SYMBOL")
# Comments, and the text of string literals (kept for the specifiers, blanked for the rest).
_COMMENT_OR_STRING = re.compile(r"""//[^\n]*|/\*.*?\*/|(['"`])(?:\\.|(?!\1)[^\\])*\1""", re.S)


def _without_comments(text: str) -> str:
    return _COMMENT_OR_STRING.sub(lambda m: m.group(0) if m.group(1) else " ", text)


def _code_only(text: str) -> str:
    return _COMMENT_OR_STRING.sub(lambda m: f"{m.group(1)}{m.group(1)}" if m.group(1) else " ",
                                  text)


def reached_for(text: str) -> Counter[str]:
    """The frameworks, loader hooks and runner state a file's code names, each as often as
    it does (comments and the text of other strings aside)."""
    found: Counter[str] = Counter()
    text = _TYPE_ONLY.sub(" ", _without_comments(text))
    for _quote, module in _SPECIFIER.findall(text):
        if FRAMEWORKS.match(module):
            found[module] += 1
    for match in _GLOBAL.finditer(text):  # `global['it']` names it in a string
        found[match.group(1) or match.group(3)] += 1
    for match in _RUNNER_STATE.finditer(text):
        found[f"the test runner's state ({match.group(0)})"] += 1
    code = _code_only(text)
    for match in _BARE.finditer(code):
        found[match.group(1)] += 1
    for match in _LOADER.finditer(code):
        found[f"the module loader's {match.group(1) or match.group(2)}"] += 1
    return found


def framework_findings(copy: Path, snapshot: Path, files: set[str]) -> list[str]:
    """For each source file of the solution's copy that is not a test (nor restored from the
    snapshot), what it names of a test framework more often than the snapshot's file does."""
    found = []
    for rel in sorted(files):
        if not is_source(rel) or is_test_file(rel) or is_protected(rel):
            continue
        path = copy / rel
        if path.is_symlink() or not path.is_file():
            continue
        now = reached_for(path.read_text(encoding="utf-8", errors="replace"))
        if not now:
            continue
        before_path = snapshot / rel
        before = reached_for(before_path.read_text(encoding="utf-8", errors="replace")) \
            if before_path.is_file() and not before_path.is_symlink() else Counter()
        for name in sorted(now - before):
            what = name if name.startswith("the ") else f"{name} (a test framework)"
            found.append(f"{rel} reaches for {what} from code that is not a test")
    return found

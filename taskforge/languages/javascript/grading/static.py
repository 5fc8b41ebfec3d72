"""What a JavaScript solution's own code reaches for, read from its files: a test framework or
assertion library that code which is not a test newly imports, or newly takes from the global
object. The counterpart of the Python grader's static checks (`unittest.mock` in non-test
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
# A module named by a literal: `from 'x'`, `import 'x'`, `import('x')`, `require('x')`.
_SPECIFIER = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)"""
                        r"""(['"`])([^'"`\n]+)\1""")
# The frameworks' globals, taken from the global object (jest's and vitest's `expect`, `vi`,
# `jest`; mocha's `it`, `describe`, hooks and its tdd interface's names: a solution that wraps
# `global.it` decides every later test of its file) or, the unmistakable ones, used bare with
# a member (`expect.extend`): never code under test's. A bare `it.` or `test.` could be
# anyone's variable.
_NAMES = r"expect|jest|vi|chai"
_GLOBALS = (_NAMES + r"|it|test|describe|context|specify|suite|before|after|beforeEach|"
            r"afterEach|beforeAll|afterAll|setup|teardown|suiteSetup|suiteTeardown")
_GLOBAL = re.compile(rf"""\b(?:globalThis|global|window|self)\s*(?:\??\.\s*({_GLOBALS})\b|"""
                     rf"""\[\s*(['"`])({_GLOBALS})\2\s*\])|(?<![\w$.])({_NAMES})\s*\??\.\s*\w""")


def reached_for(text: str) -> Counter[str]:
    """The frameworks a file's text names, each as often as it does."""
    found: Counter[str] = Counter()
    for _quote, module in _SPECIFIER.findall(text):
        if FRAMEWORKS.match(module):
            found[module] += 1
    for match in _GLOBAL.finditer(text):
        found[next(g for g in (match.group(1), match.group(3), match.group(4)) if g)] += 1
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
            found.append(f"{rel} reaches for {name} (a test framework) from code that is "
                         "not a test")
    return found

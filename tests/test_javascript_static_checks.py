"""The JavaScript grader's reading of a solution's own code (`grading/static.py`): what a file
names of a test framework, and which files are judged (code under test, not tests)."""

from __future__ import annotations

from pathlib import Path

from taskforge.languages.javascript.grading.static import framework_findings, reached_for


def test_what_counts_as_reaching_for_a_framework() -> None:
    assert reached_for("import { expect } from 'vitest';\n") == {"vitest": 1}
    assert reached_for("const { it } = require(\"mocha\");") == {"mocha": 1}
    assert reached_for("await import(`@jest/globals`)") == {"@jest/globals": 1}
    assert reached_for("import 'chai';\nimport sinon from 'sinon'") == {"chai": 1, "sinon": 1}
    assert reached_for("globalThis.expect.extend({})") == {"expect": 1}
    assert reached_for("global['vi'].fn()") == {"vi": 1}
    # the module loader, which decides what `require('node:test')` hands later test files
    assert reached_for("require('node:module')._load = hook;") == {"the module loader's _load": 1}
    assert reached_for("Module.prototype.require = wrap") == {"the module loader's require": 1}
    assert reached_for("expect.extend({ toBe })") == {"expect": 1}
    assert reached_for("import { test } from 'node:test'") == {"node:test": 1}
    assert reached_for("const real = global.it; globalThis['describe'] = wrap") == \
        {"it": 1, "describe": 1}
    # where vitest and jest-circus keep the running test, in the global object
    assert reached_for("const test = globalThis.__vitest_worker__?.current;") == \
        {"the test runner's state (__vitest_worker__)": 1}
    assert reached_for("(global as any)['__vitest_worker__'].current") == \
        {"the test runner's state (__vitest_worker__)": 1}
    assert reached_for("const state = globalThis[Symbol.for('JEST_STATE_SYMBOL')];") == \
        {"the test runner's state (JEST_STATE_SYMBOL)": 1}


def test_what_does_not() -> None:
    # library code asserts its invariants with node:assert, which the run guards anyway
    assert not reached_for("import assert from 'node:assert';\nconst a = require('assert')")
    # a parser's own `expect`, methods named so, words that only begin alike
    assert not reached_for("this.expect(token); parser.expect.next; expectation.x; expect(1)")
    assert not reached_for("const it = list[Symbol.iterator](); it.next(); test.length")
    # prose in comments and strings, `self` as anyone's `this`, a property named `global`,
    # a variable named `vi`, TypeScript's type-only imports
    assert not reached_for("// Returns exactly what callers expect.\n  return value;\n"
                           "/* import { expect } from 'vitest' */ throw new Error('we expect. No')")
    assert not reached_for("const self = this; self.test(v); self.context = ctx;")
    assert not reached_for("opts.global.test; const vi = parts[5]; vi.trim();")
    assert not reached_for("import type { Mock } from 'vitest';\nexport type { X } from 'chai';")
    assert not reached_for("import { vitestish } from './vitest-like.js'")
    # a computed name is not seen (the canaries are the check left there)
    assert not reached_for("await import(['vit', 'est'].join(''))")
    assert not reached_for("globalThis[['__vitest', 'worker__'].join('_')]")


def test_only_new_references_in_code_under_test_are_findings(tmp_path: Path) -> None:
    snapshot, copy = tmp_path / "snapshot", tmp_path / "copy"
    files = {"src/a.ts": ("export const a = 1;\n", "import { expect } from 'vitest';\n"),
             "src/helpers.ts": ("import { vi } from 'vitest';\n",  # the project's own: kept
                                "import { vi } from 'vitest';\n"),
             "src/new.js": (None, "require('chai');\n"),
             "test/a.test.ts": ("import { expect } from 'vitest';\n",
                                "import { expect } from 'vitest'; import 'chai';\n")}
    for rel, (before, after) in files.items():
        for root, text in ((snapshot, before), (copy, after)):
            if text is not None:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
    assert framework_findings(copy, snapshot, set(files)) == [
        "src/a.ts reaches for vitest (a test framework) from code that is not a test",
        "src/new.js reaches for chai (a test framework) from code that is not a test"]

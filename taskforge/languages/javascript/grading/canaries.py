"""Canaries for JavaScript test files: tests whose true outcome the grader knows, planted in
the grading copy afresh at every grading (the system's random source).

Every test file holding the task's tests gets, appended (node's runner runs each file in a
process of its own, so tampering shows only in that file's canaries), a test that must pass,
one that must fail, and a `describe` of tests that must fail, one per assertion of node:assert
and node:assert/strict (a solution that turns an assertion into a no-op makes its canary
pass); a new test file beside them gets a pass and a fail. `test` and `describe` come from
node:test with node's runner, from vitest with vitest, from @jest/globals with jest, and are
the interface's globals with mocha (`it`/`describe`, or `test`/`suite` for `ui: tdd`; another
interface gets no canaries); with tape they are tape's own tests, the group a test of nested
`t.test`s failing one per assertion method of tape's test object.
Names are made of the words of the file's own test names plus a random suffix, so a patch
that knows the task's test ids cannot know these. They run in the same run as the task's
tests; any canary reported otherwise than planted means the report cannot be trusted.
"""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.grading_copy import linked, suffix
from taskforge.languages.javascript.files import is_test_file
from taskforge.languages.javascript.runners.base import file_of
from taskforge.model import Finding, Outcome

# The test files canaries go in: JavaScript, and for vitest (which compiles them) TypeScript.
SCRIPTS = ((".js", ".mjs", ".cjs"), (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"))
_TEST_NAME = re.compile(r"""\b(?:test|it|describe)(?:\.\w+)?\(\s*(['"`])(.+?)\1""")


@dataclass(frozen=True)
class Canary:
    test_id: str
    expected: Outcome  # "passed" or "failed"


def _is_module(copy: Path, rel: str, source: str, runner: str) -> bool:
    """Whether the canaries' block imports (else it requires: CommonJS). vitest compiles
    every test file as a module, where `require` still works, and cannot itself be required
    (a CommonJS-style test file of a project with vitest's globals: every test of the file
    erred with the canaries required)."""
    if rel.endswith((".mjs", ".mts", ".ts", ".tsx")) or runner == "vitest":
        return True
    if rel.endswith((".cjs", ".cts")):
        return False
    if re.search(r"^\s*(?:import|export)\b", source, re.MULTILINE):
        return True
    if re.search(r"\brequire\(", source):
        return False
    try:
        package = json.loads((copy / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(package, dict) and package.get("type") == "module"


def name_words(source: str, rel: str) -> list[str]:
    words = {w.lower() for _q, name in _TEST_NAME.findall(source)
             for w in re.findall(r"[A-Za-z]{3,}", name)}
    return sorted(words) or [re.sub(r"\W+", "", Path(rel).name.split(".")[0]) or "case"]


# The assertions a failing canary calls, each on its own: a solution that turns one of them
# into a no-op (node:assert's functions are plain, writable properties, and `node:assert/strict`
# is `assert.strict`) makes that canary pass.
ASSERTIONS = ("strict.equal({a}, {c})", "strict.deepEqual([{a}], [{c}])", "strict.ok({a} === {c})",
              "strict.notEqual({a}, {a})", "strict.throws(() => {a})", "strict.match('{a}', /^{c}$/)",
              "strictEqual({a}, {c})", "deepStrictEqual([{a}], [{c}])", "equal({a}, {c})",
              "deepEqual({{ n: {a} }}, {{ n: {c} }})", "ok({a} === {c})", "throws(() => {a})")


# jest's and vitest's tests assert with `expect`: its matchers, each on its own, for the same
# reason (`expect.extend` replaces a built-in matcher as readily as it adds one: a solution
# that makes `toBe` pass made every test pass while node:assert's canaries still failed).
# `{E}` is the canary's `expect`.
EXPECTATIONS = ("{E}({a}).toBe({c})", "{E}({a}).toEqual({c})", "{E}({a}).toStrictEqual({c})",
                "{E}({a}).toBeLessThan({a})", "{E}({a}).toBeNull()", "{E}({a}).toBeUndefined()",
                "{E}([{a}]).toContain({c})", "{E}([{a}]).toHaveLength({c})",
                "{E}(() => {a}).toThrow()", "{E}({a}).toBeGreaterThan({a})",
                "{E}({a}).toBeGreaterThanOrEqual({c})", "{E}({c}).toBeLessThanOrEqual({a})",
                "{E}(0).toBeTruthy()", "{E}({a}).toBeFalsy()", "{E}(undefined).toBeDefined()",
                "{E}({a}).toBeNaN()", "{E}('{a}').toMatch(/^{c}$/)",
                "{E}({{ n: {a} }}).toMatchObject({{ n: {c} }})",
                "{E}({{ n: {a} }}).toHaveProperty('m')", "{E}({a}).toBeInstanceOf(Array)",
                "{E}({a}).toBeCloseTo({c})", "{E}({a}).not.toBe({a})")


# tape's assertions (methods of the test object, in every release from 4 on), each on its own
# in a failing canary: a solution that patches one of them (or `Test#_assert`) to pass makes
# its canary pass.
TAPE_ASSERTIONS = ("equal({a}, {c})", "strictEqual({a}, {c})", "is({a}, {c})",
                   "deepEqual([{a}], [{c}])", "same([{a}], [{c}])", "deepLooseEqual([{a}], [{c}])",
                   "looseEqual({a}, {c})", "notEqual({a}, {a})", "ok({a} === {c})",
                   "notOk({a} !== {c})", "throws(() => {a})", "error(new Error('{a}'))",
                   "fail('{a} is not {c}')")


def _tape_block(rel: str, name: Callable[[], str], rng: random.Random, module: bool, *,
                suite: bool) -> tuple[str, list[Canary]]:
    """Canaries in tape's style: `test(name, (t) => {...; t.end(); })` from the project's tape,
    the group a test of nested `t.test`s (ids `group > name`)."""
    test = f"test_{suffix(rng)}"
    a, b = rng.randrange(10, 10_000), rng.randrange(10, 10_000)
    good, bad = name(), name()
    lines = [f"import {test} from 'tape';" if module else f"const {test} = require('tape');",
             f"{test}({json.dumps(good)}, (t) => {{ t.equal({a} + {b}, {a + b}); t.end(); }});",
             f"{test}({json.dumps(bad)}, (t) => {{ "
             f"t.equal({b} * {a}, {a * b + rng.randrange(1, 97)}); t.end(); }});"]
    planted = [Canary(f"{rel}::{good}", "passed"), Canary(f"{rel}::{bad}", "failed")]
    if suite:
        group = name()
        lines.append(f"{test}({json.dumps(group)}, (t) => {{")
        for check in TAPE_ASSERTIONS:
            wrong = name()
            x = rng.randrange(10, 10_000)
            call = check.format(a=x, c=x + rng.randrange(1, 97))
            lines.append(f"  t.test({json.dumps(wrong)}, (st) => {{ st.{call}; st.end(); }});")
            planted.append(Canary(f"{rel}::{group} > {wrong}", "failed"))
        lines += ["  t.end();", "});"]
    return "\n".join(lines) + "\n", planted


def canary_name(words: list[str], rng: random.Random) -> str:
    """Two words of the file's own test names and a random word: what a canary (or an
    expectation copy) is called."""
    return f"{' '.join(rng.sample(words, min(2, len(words))))} {suffix(rng)}"


def _block(rel: str, words: list[str], rng: random.Random, module: bool, *,
           suite: bool, origin: str | tuple[str, str] = "node:test"
           ) -> tuple[str, list[Canary]]:
    def name() -> str:
        return canary_name(words, rng)

    if origin == "tape":
        return _tape_block(rel, name, rng, module, suite=suite)

    tag = suffix(rng)
    assert_ = f"assert_{tag}"
    head = [f"import {assert_} from 'node:assert';" if module
            else f"const {assert_} = require('node:assert');"]
    if isinstance(origin, tuple):  # mocha: the interface's globals
        test, describe = origin
    else:  # node's runner (node:test) or vitest
        test, describe = f"test_{tag}", f"describe_{tag}"
        head.insert(0, f"import {{ test as {test}, describe as {describe} }} from '{origin}';"
                    if module else
                    f"const {{ test: {test}, describe: {describe} }} = require('{origin}');")
    expect = None
    if origin in ("@jest/globals", "vitest"):
        expect = f"expect_{tag}"
        head[0] = head[0].replace(f"describe as {describe} }}",
                                  f"describe as {describe}, expect as {expect} }}").replace(
            f"describe: {describe} }}", f"describe: {describe}, expect: {expect} }}")
    a, b = rng.randrange(10, 10_000), rng.randrange(10, 10_000)
    good, bad = name(), name()
    lines = [*head,
             f"{test}({json.dumps(good)}, () => {{ {assert_}.strictEqual({a} + {b}, {a + b}); }});",
             f"{test}({json.dumps(bad)}, () => {{ "
             f"{assert_}.strictEqual({b} * {a}, {a * b + rng.randrange(1, 97)}); }});"]
    planted = [Canary(f"{rel}::{good}", "passed"), Canary(f"{rel}::{bad}", "failed")]
    if suite:
        group = name()
        lines.append(f"{describe}({json.dumps(group)}, () => {{")
        checks = [f"{assert_}.{c}" for c in ASSERTIONS]
        if expect is not None:
            checks += [e.replace("{E}", expect) for e in EXPECTATIONS]
        for check in checks:
            wrong = name()
            x = rng.randrange(10, 10_000)
            call = check.format(a=x, c=x + rng.randrange(1, 97))
            lines.append(f"  {test}({json.dumps(wrong)}, () => {{ {call}; }});")
            planted.append(Canary(f"{rel}::{group} > {wrong}", "failed"))
        lines.append("});")
    return "\n".join(lines) + "\n", planted


def test_interface(copy: Path, runner: str) -> str | tuple[str, str] | None:
    """Where a canary takes `test` and `describe` from: a module (node:test, vitest), mocha's
    interface globals (`it`/`describe`, `test`/`suite` for `ui: tdd`), or None when canaries
    cannot be planted (another interface, another runner)."""
    if runner == "node-test":
        return "node:test"
    if runner == "vitest":
        return "vitest"
    if runner == "jest":
        return "@jest/globals"  # jest's own module (a project may turn the globals off)
    if runner == "tape":
        return "tape"  # the project's own, as its test files require it
    if runner == "mocha":
        ui = "bdd"
        for name in (".mocharc.yml", ".mocharc.yaml", ".mocharc.json", ".mocharc.jsonc",
                     ".mocharc"):
            text = (copy / name).read_text(errors="replace") if (copy / name).is_file() else ""
            found = re.search(r"""["']?ui["']?\s*[:=]\s*["']?(\w+)""", text)
            if found:
                ui = found.group(1)
                break
        return {"bdd": ("it", "describe"), "tdd": ("test", "suite")}.get(ui)
    return None


def plant_canaries(copy: Path, expected_ids: list[str], runner: str = "node-test",
                   rng: random.Random | None = None) -> list[Canary]:
    """Append canaries to test files of `copy` that hold `expected_ids` and add a new test
    file beside them; return what was planted (nothing when no test file holds them, or the
    runner's interface is not one canaries are written for)."""
    rng = rng or secrets.SystemRandom()
    origin = test_interface(copy, runner)
    if origin is None:
        return []
    files = sorted({file_of(t) for t in expected_ids})
    files = [rel for rel in files if is_test_file(rel) and (copy / rel).is_file()
             and not linked(copy, rel) and rel.endswith(SCRIPTS[runner == "vitest"])]
    if not files:
        return []
    canaries: list[Canary] = []
    # Every file: node's runner gives each test file a process of its own, and what a
    # solution does in one process shows only in the canaries of that file.
    for rel in files:
        path = copy / rel
        source = path.read_text(encoding="utf-8", errors="replace")
        block, planted = _block(rel, name_words(source, rel), rng, _is_module(copy, rel, source, runner),
                                suite=True, origin=origin)
        separator = "" if source.endswith("\n") or not source else "\n"
        path.write_text(source + separator + "\n" + block, encoding="utf-8")
        canaries += planted
    beside = rng.choice(files)
    source = (copy / beside).read_text(encoding="utf-8", errors="replace")
    words = name_words(source, beside)
    extension = beside.rsplit(".", 1)[-1]
    rel = (Path(beside).parent / f"{rng.choice(words)}-{suffix(rng)}.test.{extension}").as_posix()
    block, planted = _block(rel, words, rng, _is_module(copy, beside, source, runner), suite=False,
                            origin=origin)
    (copy / rel).write_text(block, encoding="utf-8")
    return canaries + planted


def canary_findings(canaries: list[Canary], outcomes: dict[str, Outcome],
                    broken: set[str]) -> list[Finding]:
    """A canary reported otherwise than planted disqualifies; the canaries of a file that
    failed to load (`broken`: a wrong solution) are left out."""
    findings = []
    for canary in canaries:
        if file_of(canary.test_id) in broken:
            continue
        got = outcomes.get(canary.test_id)
        if got != canary.expected:
            how = f"reported {got}" if got and got != "error" else "not reported"
            findings.append(Finding(f"canary {canary.test_id} expected {canary.expected}, {how}",
                                    True))
    return findings

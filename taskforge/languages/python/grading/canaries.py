"""Canaries: tests whose true outcome the grader knows, planted in the grading copy.

Drawn afresh for every grading (the system's random source): a few of the test files that
hold FAIL_TO_PASS/PASS_TO_PASS tests get, appended, a test that must pass, one that must fail
(an assertion false at run time) and one that must error (its fixture raises); a file written
in unittest style also gets a TestCase whose assertion must fail; and a new test module
beside one of them gets a pass and a fail. Names are built from the words of the file's own
test names plus a random suffix, so a patch that knows the task's test ids cannot know these.
They run in the same pytest session as the task's tests; any canary reported other than as
planted means the report cannot be trusted.

Where the graded tests use hypothesis (a file imports it, and the environment has it), the new
module also gets a property test that must fail: it draws an integer and asserts it is zero,
which the first, simplest example is and no later one. Its `@given` is applied when it runs,
so it takes the settings in force then: a solution that loaded a profile of one example
during collection (every property test decorated after it draws only its simplest input,
which a wrong solution may pass) has it reported passed.
"""

from __future__ import annotations

import ast
import random
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.grading_copy import linked, suffix
from taskforge.languages.python.files import is_test_file
from taskforge.languages.python.testing.runner import files_of
from taskforge.model import Finding, Outcome

PLANTED_FILES = 2  # existing test files that get canaries appended
_USES_HYPOTHESIS = re.compile(rb"^[ \t]*(?:import|from)[ \t]+hypothesis\b", re.MULTILINE)


@dataclass(frozen=True)
class Canary:
    node_id: str
    expected: Outcome  # "passed", "failed" or "error"


def plant_canaries(copy: Path, expected_ids: list[str], rng: random.Random | None = None, *,
                   hypothesis: bool = False) -> list[Canary]:
    """Append canaries to test files of `copy` that hold `expected_ids`, and add one new test
    module beside them; return what was planted (nothing when no test file holds them).
    `hypothesis`: the environment has it (a property canary where those files use it)."""
    rng = rng or secrets.SystemRandom()
    # Never through a link: the grader writes outside the sandbox, and a link could lead out
    # of the grading copy.
    files = [rel for rel in files_of(expected_ids) if rel.endswith(".py") and is_test_file(rel)
             and (copy / rel).is_file() and not linked(copy, rel)]
    if not files:
        return []
    canaries: list[Canary] = []
    prefixes = {rel: name_prefix([t for t in expected_ids if t.startswith(rel + "::")])
                for rel in files}
    for rel in rng.sample(files, min(PLANTED_FILES, len(files))):
        path = copy / rel
        source = path.read_bytes()
        words = name_words(source, rel)
        block, planted = _block(rel, words, rng, prefixes[rel],
                                unittest_style=_uses_unittest(source))
        separator = b"" if source.endswith(b"\n") or not source else b"\n"
        path.write_bytes(source + separator + b"\n\n" + block.encode())
        canaries += planted
    beside = rng.choice(files)
    words = name_words((copy / beside).read_bytes(), beside)
    stem = f"{rng.choice(words)}_{suffix(rng)}"
    name = f"{stem}_test.py" if Path(beside).name.endswith("_test.py") else f"test_{stem}.py"
    rel = (Path(beside).parent / name).as_posix()
    block, planted = _block(rel, words, rng, prefixes[beside], unittest_style=False,
                            error=False)
    if hypothesis and any(_USES_HYPOTHESIS.search((copy / f).read_bytes()) for f in files):
        extra, canary = _property_block(rel, words, rng, prefixes[beside])
        block, planted = block + extra, [*planted, canary]
    (copy / rel).write_text(block)
    return canaries + planted


def canary_findings(canaries: list[Canary], outcomes: dict[str, Outcome],
                    raised: dict[str, str | None] | None) -> list[Finding]:
    """A canary reported otherwise than planted disqualifies. `raised`: what the observer
    saw per test (None without a channel): a canary it never saw was not run, whatever the
    JUnit XML (a missing test is reported as an error, which a must-error canary expects).
    Canaries of a test file that failed to import are left out: the task's own tests there
    fail with them, and the canaries of the new module still run."""
    broken = {test_id.removeprefix("<collect>::") for test_id in outcomes
              if test_id.startswith("<collect>::")}
    findings = []
    for canary in canaries:
        path = canary.node_id.split("::", 1)[0]
        if path.removesuffix(".py").replace("/", ".") in broken:
            continue  # its file failed to import (a wrong solution): it could not run
        got = outcomes.get(canary.node_id)
        if raised is not None and canary.node_id not in raised:
            got = None
        if got != canary.expected:
            how = f"reported {got}" if got else "not reported"
            findings.append(Finding(f"canary {canary.node_id} expected {canary.expected}, {how}",
                                    True))
    return findings


def name_words(source: bytes, rel: str) -> list[str]:
    """Words of the file's test names (`test_parse_empty` -> parse, empty), to name canaries
    like their neighbours."""
    names = re.findall(rb"def test_?(\w+)", source)
    words = {w.decode() for name in names for w in name.split(b"_") if len(w) > 2 and w.isalpha()}
    return sorted(words) or [Path(rel).stem.removeprefix("test_") or "case"]


def name_prefix(test_ids: list[str]) -> str:
    """How the file's test functions are named (pytest's `python_functions` may differ from
    `test`): `test_` unless none of them starts with it, then the first one's first word."""
    names = [t.rsplit("::", 1)[-1].split("[", 1)[0] for t in test_ids]
    if not names or any(n.startswith("test") for n in names):
        return "test_"
    first = names[0]
    return first[:first.index("_") + 1] if "_" in first.strip("_") else first + "_"


def _uses_unittest(source: bytes) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.ClassDef) and any(
        (isinstance(b, ast.Name) and b.id.endswith("TestCase"))
        or (isinstance(b, ast.Attribute) and b.attr.endswith("TestCase")) for b in node.bases)
        for node in ast.walk(tree))


def _property_block(rel: str, words: list[str], rng: random.Random,
                    prefix: str) -> tuple[str, Canary]:
    """A property test that fails unless hypothesis generates a single example: decorated
    inside the test, so with the settings in force when it runs."""
    alias, name = f"_hypothesis_{suffix(rng)}", \
        f"{prefix}{'_'.join(rng.sample(words, min(2, len(words))))}_{suffix(rng)}"
    lines = ["", "", f"import hypothesis as {alias}", f"import hypothesis.strategies as {alias}_st",
             "", "", f"def {name}():", f"    @{alias}.given({alias}_st.integers())",
             "    def draws(number):", "        assert number == 0", "", "    draws()", ""]
    return "\n".join(lines), Canary(f"{rel}::{name}", "failed")


def _block(rel: str, words: list[str], rng: random.Random, prefix: str, *,
           unittest_style: bool, error: bool = True) -> tuple[str, list[Canary]]:
    """Source of the canaries for one file, and the canaries. Test functions are named
    `prefix` + words + suffix; unittest methods always start with `test` (unittest's rule)."""
    def name() -> str:
        return f"{'_'.join(rng.sample(words, min(2, len(words))))}_{suffix(rng)}"

    a, b = rng.randrange(10, 10_000), rng.randrange(10, 10_000)
    good, bad = name(), name()
    lines = [f"def {prefix}{good}():",
             f"    assert {a} + {b} == {a + b}",
             "", "",
             f"def {prefix}{bad}():",
             f"    assert {b} * {a} == {a * b + rng.randrange(1, 97)}",
             ""]
    planted = [Canary(f"{rel}::{prefix}{good}", "passed"),
               Canary(f"{rel}::{prefix}{bad}", "failed")]
    if error:
        fixture, broken = name(), name()
        import_name = f"_pytest_{suffix(rng)}"
        lines = [f"import pytest as {import_name}", "", "", *lines, "",
                 f"@{import_name}.fixture", f"def {fixture}():",
                 f"    raise LookupError({rng.randrange(10, 10_000)})", "", "",
                 f"def {prefix}{broken}({fixture}):", f"    assert {fixture} is not None", ""]
        planted.append(Canary(f"{rel}::{prefix}{broken}", "error"))
    if unittest_style:
        cls = "Test" + "".join(w.capitalize() for w in rng.sample(words, min(2, len(words)))) \
            + suffix(rng).capitalize()
        method = name()
        module = f"_unittest_{suffix(rng)}"
        lines += ["", f"import unittest as {module}", "", "",
                  f"class {cls}({module}.TestCase):",
                  f"    def test_{method}(self):",
                  f"        self.assertEqual({a} - {b}, {a - b - rng.randrange(1, 97)})", ""]
        planted.append(Canary(f"{rel}::{cls}::test_{method}", "failed"))
    return "\n".join(lines), planted

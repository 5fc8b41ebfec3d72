"""Expectation copies for JavaScript and TypeScript test files: the Python grader's
counterpart (`taskforge/languages/python/grading/expectations.py`), made in place.

A stub that answers with whatever the calling test expects needs no frame object here: it
reads its caller's file, line and column from `new Error().stack` (source-mapped under vitest
and jest), reads that line of the test file and returns the literal the assertion compares its
result with (`tests/test_javascript_expectations.py` has one; before the copies it scored 1.0
under every check on jsdemo, tsdemo, a tape, a mocha and a jest project, and on
i18n-iso-countries' `toAlpha3`). An honest solution fails a test whose expected literal was
changed; that stub reads the changed literal and passes it.

So the grader runs the tests a second time, in a second clean copy of the solution put at the
first one's path, with the same selection (`run.py`), where up to three FAIL_TO_PASS tests that
qualify, drawn afresh for every grading, expect another value: the same test, in the same
place, under the same name, with only its literal changed. One reported passed there
disqualifies; a test passes where it passed in both runs (the changed ones: in the first), and
of two or more FAIL_TO_PASS tests one is left as it is, so a stub that cheats in one run of two
at random fails it in the other. Appended copies (session 66) had new names, sat at the end of
their file inside a `try` and blocks named again: what a stub can tell apart without knowing
any answer. Changed in place, a test differs from the task's only in the value it expects;
telling it apart means knowing that value, the answer itself.

A test qualifies where honest code is certain to fail it once changed:
- it is `test|it|specify(NAME, FUNCTION)` (a timeout may follow), at the file's top level or
  inside `describe|suite|context(NAME, FUNCTION)` blocks (any hooks and variables beside it
  run as they do for the task), its name registered once in the file in any form (else its
  id is `name [2]`, `_registered_names`). Not `test.skip`,
  `test.failing`, `test.each`, `it.only` or a node:test options object (`todo`, `skip`),
  whose outcome is not the body's. tape's: `test|tape(NAME, FUNCTION)` at the top level;
- its function takes no argument (node's runner: its test context `t` at most; a `done`
  callback may assert later; tape: its test object `t`, exactly), returns nothing before its
  end, and its last statement is the assertion:
  `assert.equal|strictEqual|deepEqual|deepStrictEqual(ACTUAL, LITERAL)` (either
  side; any object: `assert.strict`, node's `t.assert`, chai's `assert`), or
  `expect(ACTUAL).toBe|toEqual|toStrictEqual(LITERAL)` (chai's `.to.equal`, `.to.eql`,
  `.to.deep.equal`, `.to.be.equal`); under tape `t.equal|equals|isEqual|is|strictEqual|
  strictEquals|deepEqual|deepEquals|same(ACTUAL, LITERAL)` on its own `t`, then `t.end()`
  at most (no nested `t.test`, no other `t.end()`). LITERAL is a string or a decimal number,
  changed to another value of its kind that looks like one: a letter, digit or punctuation
  mark of the string replaced by another of its kind (six letters added to an empty one or
  one with an escape), a digit of the number replaced; or an array or object literal of
  those, booleans, `null` and nested ones (no spread, hole, computed, shorthand or repeated
  key), one of whose strings or numbers changes so; or a boolean, turned into the other.
  When the original passes, every statement before the assertion ran without throwing and
  ACTUAL equals LITERAL; the changed test, run after the same tests of its file, compares
  a value equal to LITERAL with another. Or the assertion is `assert.ok(X)` or `assert(X)`
  (a message may follow; tape's `t.ok(X)`), X a call, name, member or subscript, or `!` and
  one of those: turned into its opposite, `!` added or taken away (`assert.ok(!isLoud(s))`
  reads as a test would be written; `!(a > b)` would not). A boolean and a turned assertion
  are two-valued (`Copy.two_valued`): a wrong solution may well give the other value, so
  their pass is a finding only after a pass in the grading run. Not `null` or `undefined`
  alone, whose other value is anything;
- the runner runs a file's tests in the order registered: not where its arguments or a
  configuration of vitest's say `shuffle` or `sequence`, or jest's `randomize` (`_order_kept`);
- the file is one the runner runs: JavaScript under node 20's runner, mocha and tape; under
  jest and vitest TypeScript and JSX too.
What these rules miss is caught after the run: a changed test reported passed runs again on
the original code (the snapshot, with the changed test file, the run's selection in it:
`run_on_the_original`), and only one that does not pass there is a finding.

A changed test must also fail as honest code fails it: honest code passed it in the first run,
so what it computes equals the value the literal had, and in the copies' run its assertion
compares that value with the new one. The runner's report says what a failed assertion
compared (support/taskforge-compared.cjs: the `actual` and `expected` of node's assert and
chai errors as JSON writes them, under node's runner read from the test process's events;
tape's rows; jest's `matcherResult`; under vitest an `expect` failure read where chai throws
it, any other as vitest's text of both (an array's laid out over lines: the original code
decides there), kept in the test's `meta` by taskforge's setup file; a turned `assert.ok`
compares a falsy value with `true`);
a changed test that passed in the first run and failed otherwise in the
second (threw before, compared another value) disqualifies, unless the original code fails it
alike in the run above (`agrees_with_the_original`: an object equal to a literal). Without it
a stub that reads the answer in one run of two at random won one grading in four where the
task has one FAIL_TO_PASS test.

What stays unseen: a stub that knows the answers (a table of the visible tests' calls and
values: hidden tests are the answer to that, `task.tests_visible: false`); tests the copies
cannot reach (the expected value computed, an assertion not last, a helper asserting); an
assertion library whose errors carry no `actual`, where a stub that cheats in one run of two
at random still wins one grading in four if the task has one FAIL_TO_PASS test. A
two-valued copy's honest failure is no secret (the other value): a stub that reads the
assertion can fail it on purpose, so one reading in one run of two at random still wins
one grading in four where the task has one FAIL_TO_PASS test, and one answering by polarity
(`true` for `assert.ok(X)`, `false` for `assert.ok(!X)`) wins where every FAIL_TO_PASS test
asserts one way, as a constant `return true` does there.
"""

from __future__ import annotations

import ast
import json
import random
import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from tree_sitter import Node

from taskforge.languages.base import Runner
from taskforge.languages.grading_copy import (
    DECIMAL,
    Copy,
    Original,
    changed_characters,
    changed_digits,
    linked,
    original_with,
    write_changed,
)
from taskforge.languages.javascript.delete.syntax import DECLARATIONS, FUNCTION_VALUES, text_of
from taskforge.languages.javascript.files import SOURCE_SUFFIXES, is_test_file
from taskforge.languages.javascript.grading.canaries import test_interface
from taskforge.languages.javascript.runners.base import file_of
from taskforge.languages.javascript.runners.jest import CONFIGS as JEST_CONFIGS
from taskforge.languages.javascript.runners.vitest import CONFIGS as VITEST_CONFIGS
from taskforge.languages.javascript.testing import run_tests
from taskforge.sanitize.jssource import parse

COPIED = 3  # tests changed at a grading, drawn afresh each time
SCRIPTS = (".js", ".mjs", ".cjs")
# The test files a runner runs that copies are made in: node 20 runs JavaScript only.
SUFFIXES = {"node-test": SCRIPTS, "mocha": SCRIPTS, "tape": SCRIPTS,
            "jest": SOURCE_SUFFIXES, "vitest": SOURCE_SUFFIXES}
# Where a runner's configuration may be, and its words that reorder a file's tests.
CONFIG_FILES = {
    "vitest": (*VITEST_CONFIGS, "vitest.workspace.ts", "vitest.workspace.js",
               "vitest.workspace.mjs", "vitest.workspace.json", "vitest.projects.ts"),
    "jest": (*JEST_CONFIGS, "jest.config.ts", "jest.config.mts", "package.json")}
REORDERING = {"vitest": ("shuffle", "sequence"), "jest": ("randomize",)}
TESTS = {"test", "it", "specify"}
TAPE_TESTS = {"test", "tape"}
SUITES = {"describe", "suite", "context"}
ASSERTIONS = {"equal", "strictEqual", "deepEqual", "deepStrictEqual"}
# tape's strict equality assertions, methods of its test object (tape 4 and 5)
TAPE_ASSERTIONS = {"equal", "equals", "isEqual", "is", "strictEqual", "strictEquals",
                   "deepEqual", "deepEquals", "same"}
MATCHERS = {("toBe",), ("toEqual",), ("toStrictEqual",), ("to", "equal"), ("to", "eql"),
            ("to", "deep", "equal"), ("to", "be", "equal")}
_SAFE = 2 ** 53  # past this an offset may not change a double


@dataclass(frozen=True)
class _Test:
    test_id: str
    expected: Node | None  # the literal its last assertion compares with, where it qualifies


def plant_expectation_copies(copy: Path, fail_to_pass: list[str], runner: str,
                             rng: random.Random | None = None, *,
                             limit: int = COPIED) -> list[Copy]:
    """Change in place, in the test files of `copy`, the expected literal of up to `limit`
    of the `fail_to_pass` tests that qualify (the module's docstring); return them.
    `runner`: the environment's (`node-test`, `vitest`, ...)."""
    copies, changed = draw_expectation_copies(copy, fail_to_pass, runner, rng=rng, limit=limit)
    write_changed(copy, changed)
    return copies


def draw_expectation_copies(copy: Path, fail_to_pass: list[str], runner: str,
                            args: Sequence[str] = (), *, rng: random.Random | None = None,
                            limit: int = COPIED) -> tuple[list[Copy], dict[str, bytes]]:
    """`plant_expectation_copies` without writing: the copies, and each changed test file's
    new bytes by its path (so that a second copy of the workspace is made only for some).
    `args`: the runner's arguments from the test script (`jest --randomize`)."""
    if runner not in SUFFIXES or not _order_kept(copy, runner, args) \
            or (runner == "mocha" and test_interface(copy, runner) is None):
        return [], {}  # (mocha's qunit and exports interfaces register tests otherwise)
    rng = rng or secrets.SystemRandom()
    wanted = set(fail_to_pass)
    found: list[tuple[str, _Test]] = []
    for rel in sorted({file_of(t) for t in fail_to_pass}):
        path = copy / rel
        if not is_test_file(rel) or not rel.endswith(SUFFIXES[runner]) \
                or linked(copy, rel) or not path.is_file():
            continue
        source = path.read_bytes()
        try:
            source.decode("utf-8")
        except UnicodeDecodeError:
            continue
        tree = parse(rel, source)
        if tree.root_node.has_error:
            continue
        # A name registered twice in a file is `name [2]` for the second, in whatever form the
        # other is registered (`test.each(...)('name')`, `it.skip`, in a loop): left alone.
        names = _registered_names(tree.root_node)
        found += [(rel, t) for t in _tests(tree.root_node, rel, (), runner)
                  if t.expected is not None and t.test_id in wanted
                  and names.count(t.test_id.split("::", 1)[1].split(" > ")[-1]) == 1]
    # At least one FAIL_TO_PASS test left as it is where there are two or more: a test passes
    # where it passed in both runs, so a stub that cheats in one run of two at random fails
    # that test in the other (where every test is changed, it would win one grading in four).
    limit = min(limit, max(1, len(wanted) - 1))
    planted: list[Copy] = []
    edits: dict[str, list[tuple[int, int, bytes]]] = {}
    for rel, test in rng.sample(found, min(limit, len(found))):
        assert test.expected is not None
        start, end, new = _changed(test.expected, rng)
        edits.setdefault(rel, []).append((start, end, new))
        was = test.expected.text or b""  # bytes: the offsets are bytes, the text may not be
        offset = test.expected.start_byte
        now = was[:start - offset] + new + was[end - offset:]
        planted.append(Copy(test.test_id, was.decode("utf-8", "replace"),
                            now.decode("utf-8", "replace"),
                            two_valued=test.expected.type in ("true", "false")
                            or _turned(test.expected)))
    changed = {}
    for rel, changes in edits.items():
        source = (copy / rel).read_bytes()
        for start, end, new in sorted(changes, reverse=True):
            source = source[:start] + new + source[end:]
        changed[rel] = source
    return planted, changed


def _order_kept(copy: Path, runner: str, args: Sequence[str]) -> bool:
    """Whether the runner runs a file's tests in the order registered in this project: not
    where its arguments or a configuration file of vitest's say `shuffle` or `sequence` at
    all (`sequence.shuffle`, `sequence.concurrent`), or jest's `randomize`."""
    words = REORDERING.get(runner, ())
    texts = [*args, *((copy / name).read_text(encoding="utf-8", errors="replace")
                      for name in CONFIG_FILES.get(runner, ()) if (copy / name).is_file())]
    return not any(word in text for text in texts for word in words)


def _registered_names(root: Node) -> list[str]:
    """The name of every test and suite the file may register, in any form: each call
    anywhere whose callee starts at `test`, `it`, `specify`, `tape`, `describe`, `suite` or
    `context` (`test.each(table)('name', ...)`, `it.skip`, `describe.only`) and whose first
    argument is a string or a template with no substitution."""
    names = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "call_expression":
            continue
        arguments = node.child_by_field_name("arguments")
        args = [a for a in arguments.named_children if a.type != "comment"] \
            if arguments is not None else []
        if not args or not (args[0].type == "string" or (
                args[0].type == "template_string"
                and not any(c.type == "template_substitution" for c in args[0].named_children))):
            continue
        head = node.child_by_field_name("function")
        while head is not None and head.type in ("member_expression", "call_expression"):
            head = head.child_by_field_name(
                "object" if head.type == "member_expression" else "function")
        if head is not None and head.type == "identifier" \
                and text_of(head) in TESTS | TAPE_TESTS | SUITES:
            names.append(_plain(text_of(args[0])))
    return names


def run_on_the_original(copies: list[Copy], graded: Path, original: Path, runner: Runner,
                        scratch: Path, selected: list[str]) -> Original | None:
    """`selected` (the copies' run's selection) run on the original code (`original`, the
    snapshot) with `graded`'s versions of the test files `copies` changed, in those files (a
    test may see what the tests before it left, a counter, a mock's calls): what honest code
    does with the changed tests. A changed test that passes there too says nothing of the
    solution, whose code this run does not hold; one that fails there shows how honest code
    fails it (`agrees_with_the_original`). None where no changed file could be written (one
    reached through a link) or the run timed out."""
    tree = scratch / "original"
    files = original_with(original, {rel: (graded / rel).read_bytes()
                                     for rel in sorted({file_of(c.test_id) for c in copies})},
                          tree)
    if not files:
        return None
    run, report = run_tests(runner.env, tree, runner.sandbox, timeout=runner.timeout,
                            select=[t for t in selected if file_of(t) in files])
    return None if run.timed_out else Original(dict(run.outcomes), dict(report.compared))


def fails_as_honest_code_does(copy: Copy, compared: list | None) -> bool:
    """Whether the changed test's failed assertion (`compared`, as the runner's report gives
    it: support/taskforge-compared.cjs, vitest's setup file) set the value its literal had
    against the one it has now, as honest code does: it passed the test, so what it computes
    equals the value before (`Copy.was`); a turned truthiness assertion, that it failed as
    one (`_fails_truthiness`). False where that cannot be told so (no comparison recorded, a
    string with an escape, a value of another kind, an array under vitest): the original
    code decides."""
    if not compared or len(compared) != 2:
        return False
    if copy.two_valued and copy.was not in ("true", "false"):
        return _fails_truthiness(compared)
    was, now = _copied_value(copy.was), _copied_value(copy.now)
    if all(isinstance(side, list) and side[:1] == ["shown"] for side in compared):
        # vitest's text of both sides (strings as they are, numbers as JavaScript writes them)
        values: list[object] = [_shown_text(side) for side in compared]
        was, now = _as_vitest_shows(was), _as_vitest_shows(now)
    else:
        values = [_side_value(side) for side in compared]
    if any(v is _MISSING for v in (*values, was, now)):
        return False
    first, second = values
    return (_same(first, was) and _same(second, now)) or (_same(first, now) and _same(second, was))


_FALSY_SHOWN = ("false", "0", "-0", "NaN", "", "null", "undefined")


def _fails_truthiness(compared: list) -> bool:
    """Whether a failed `assert.ok(X)` (node's, tape's `t.ok`) compared a falsy value with
    `true`, as its error says: what honest code's failure of a turned one compares."""
    actual, expected = compared
    if not (isinstance(actual, list) and isinstance(expected, list)
            and len(actual) == 2 and len(expected) == 2):
        return False
    if actual[0] == "shown" and expected[0] == "shown":
        return _shown_text(expected) == "true" and _shown_text(actual) in _FALSY_SHOWN
    falsy = {"boolean": (False,), "number": (0, None), "string": ("",), "object": (None,)}
    value = _side_value(actual)  # (NaN is `null` in JSON)
    return _side_value(expected) is True and (actual[0] == "undefined" or any(
        _same(value, v) for v in falsy.get(actual[0], ())))


def agrees_with_the_original(solution: list | None, original: list | None) -> bool:
    """Whether two recorded failed assertions compared the same: each side of the same kind
    and the same value or text. Neither recorded (an assertion library whose errors carry no
    `actual`): nothing to tell them apart by, agreed."""
    if solution is None or original is None:
        return solution is None and original is None
    keys = [_side_key(s) for s in solution]
    return all(k is not _MISSING for k in keys) and keys == [_side_key(s) for s in original]


_MISSING = object()


# Escapes JavaScript and Python read alike in a quoted string.
_SAME_ESCAPES = re.compile(r"""\\(?:[ntr\\'"]|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})""")


def _literal_value(text: str) -> object:
    """The value of a literal the copies change (a string, its escapes among those both
    languages read alike; a decimal number, a negative one), _MISSING for any other."""
    if len(text) >= 2 and text[0] in "'\"`" and text[-1] == text[0]:
        if "\\" not in text:
            return text[1:-1]
        if text[0] != "`" and "\\" not in _SAME_ESCAPES.sub("", text):
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return _MISSING
        return _MISSING
    number = text.removeprefix("-")
    if DECIMAL.fullmatch(number):
        return -float(number) if text.startswith("-") else float(number)
    return _MISSING


def _copied_value(text: str) -> object:
    """The value of a copy's literal text (`Copy.was`, `Copy.now`): `_literal_value`'s, a
    boolean's, or an array's or object's (`_value_of`); _MISSING for any other."""
    value = _literal_value(text)
    if value is not _MISSING or not text.startswith(("[", "{", "t", "f")):
        return value
    tree = parse("value.js", b"(" + text.encode() + b");")
    statement = tree.root_node.named_children[0] if tree.root_node.named_children else None
    inner = statement.named_children[0] if statement is not None \
        and statement.type == "expression_statement" and statement.named_child_count == 1 \
        else None
    if tree.root_node.has_error or inner is None or inner.type != "parenthesized_expression" \
            or inner.named_child_count != 1:
        return _MISSING
    return _value_of(inner.named_children[0])


def _as_vitest_shows(value: object) -> object:
    """A literal's value as vitest's text of it where the other side is of its kind: a string
    as it is, a number as JavaScript writes it (`42`, `1.5`), a boolean's word; _MISSING
    where the two languages write it otherwise (exponents) or vitest's text is laid out
    over lines (an array, an object: the original code decides)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, float):
        return _MISSING
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = repr(value)
    return _MISSING if "e" in text else text


def _side_value(side: object) -> object:
    """A recorded side's value (a string, number, boolean, `null`, or an array or object of
    those as JSON holds them), _MISSING where none was recorded."""
    if not isinstance(side, list) or len(side) != 2 \
            or side[0] not in ("string", "number", "boolean", "object") \
            or not isinstance(side[1], str):
        return _MISSING
    try:
        return json.loads(side[1])
    except ValueError:
        return _MISSING


def _shown_text(side: object) -> object:
    """vitest's text of a side (`['shown', JSON text]`), _MISSING where none was kept."""
    try:
        text = json.loads(side[1])  # type: ignore[index]
    except (ValueError, TypeError, IndexError):
        return _MISSING
    return text if isinstance(text, str) else _MISSING


def _side_key(side: object) -> object:
    """What two sides are compared by: their kind, and their value where it has one (as
    JSON writes it, keys sorted; vitest: its text)."""
    if not isinstance(side, list) or len(side) != 2:
        return _MISSING
    if side[0] == "shown":
        return ("shown", _shown_text(side))
    value = _side_value(side)
    return (side[0], None if value is _MISSING else json.dumps(value, sort_keys=True))


def _same(value: object, literal: object) -> bool:
    """Equal as the literal's kind, all through: a string to a string, a number to a number
    (never a boolean), a boolean to a boolean, `null` to `null`, an array item by item, an
    object key by key."""
    if isinstance(literal, bool) or isinstance(value, bool):
        return value is literal
    if isinstance(literal, str) or literal is None:
        return type(value) is type(literal) and value == literal
    if isinstance(literal, int | float):
        return isinstance(value, int | float) and value == literal
    if isinstance(literal, list):
        return isinstance(value, list) and len(value) == len(literal) \
            and all(_same(v, item) for v, item in zip(value, literal, strict=True))
    if isinstance(literal, dict):
        return isinstance(value, dict) and value.keys() == literal.keys() \
            and all(_same(value[k], literal[k]) for k in literal)
    return False


def _tests(block: Node, rel: str, suites: tuple[str, ...], runner: str) -> Iterator[_Test]:
    """The tests registered in `block` (the file, or a suite's body), outermost first, each
    with its literal where it qualifies but for its name (`expected`)."""
    for statement in block.named_children:
        if statement.type == "comment":
            continue
        call = _registration(statement)
        if call is None:
            continue
        callee, name, function, extra = call
        tape = runner == "tape"
        path = (*suites, _plain(text_of(name)))
        if callee in SUITES and not tape and not extra and not _parameters(function):
            yield from _tests(function.child_by_field_name("body"), rel, path, runner)
        elif callee in (TAPE_TESTS if tape else TESTS):
            taken = not (tape and extra) and all(a.type == "number" for a in extra)
            yield _Test(f"{rel}::{' > '.join(path)}",
                        _qualifying_expected(function, runner) if taken else None)


def _plain(quoted: str) -> str:
    """A name's value: its string's text between the quotes (nothing in it is escaped)."""
    return quoted[1:-1]


def _registration(statement: Node) -> tuple[str, Node, Node, list[Node]] | None:
    """`callee(NAME, FUNCTION, ...rest)` as a statement, NAME a string with nothing escaped
    (its text is its value), callee a plain name: (callee, NAME, FUNCTION, rest)."""
    call = _expression(statement)
    if call is None or call.type != "call_expression":
        return None
    callee = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if callee is None or callee.type != "identifier" or arguments is None:
        return None
    args = [a for a in arguments.named_children if a.type != "comment"]
    if len(args) < 2 or args[0].type != "string" or args[1].type not in FUNCTION_VALUES:
        return None
    name = args[0]
    if any(c.type == "escape_sequence" for c in name.named_children) or "\n" in text_of(name):
        return None
    body = args[1].child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return None
    return text_of(callee), name, args[1], args[2:]


def _expression(statement: Node) -> Node | None:
    """An expression statement's expression (a comment inside the statement aside)."""
    if statement.type != "expression_statement":
        return None
    inner = [c for c in statement.named_children if c.type != "comment"]
    return inner[0] if len(inner) == 1 else None


def _parameters(function: Node) -> list[Node]:
    single = function.child_by_field_name("parameter")  # `t => {...}`
    if single is not None:
        return [single]
    parameters = function.child_by_field_name("parameters")
    return [p for p in parameters.named_children if p.type != "comment"] \
        if parameters is not None else []


def _qualifying_expected(function: Node, runner: str) -> Node | None:
    """The literal the test function's last statement asserts its result equals, where the
    function qualifies (the module's docstring); else None."""
    parameters = _parameters(function)
    named = _parameter_name(parameters[0]) if len(parameters) == 1 else None
    # none, but node's test context (`t`, or no parameter) and tape's test object (always)
    taken = {"node-test": not parameters or named is not None, "tape": named is not None}
    if not taken.get(runner, not parameters):
        return None
    if function.type == "generator_function":
        return None
    body = function.child_by_field_name("body")
    statements = [s for s in body.named_children if s.type != "comment"] if body else []
    if runner == "tape" and named is not None:
        ends = _tape_calls(function, named)
        if "test" in ends or ends.count("end") > 1:
            return None  # nested tests run after the body; an end elsewhere ends it early
        if ends.count("end") == 1:
            if not statements or not _calls(statements[-1], named, "end"):
                return None
            statements = statements[:-1]
    if not statements or _returns(body):
        return None
    call = _expression(statements[-1])
    if call is None or call.type != "call_expression":
        return None
    if runner == "tape":
        callee = call.child_by_field_name("function")
        target = callee.child_by_field_name("object") if callee is not None \
            and callee.type == "member_expression" else None
        if target is None or target.type != "identifier" or text_of(target) != named:
            return None
        return _expected(call, TAPE_ASSERTIONS)
    return _expected(call)


def _tape_calls(function: Node, name: str) -> list[str]:
    """The methods of tape's test object `name` the function calls that end it or nest
    tests in it (`t.end()`, `t.test(...)`), anywhere in it (a callback's too)."""
    found = []
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.type == "member_expression":
            target = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            if target is not None and prop is not None and target.type == "identifier" \
                    and text_of(target) == name and text_of(prop) in ("end", "test"):
                found.append(text_of(prop))
        stack.extend(node.named_children)
    return found


def _calls(statement: Node, name: str, method: str) -> bool:
    """Whether the statement is `name.method()` and nothing else."""
    call = _expression(statement)
    if call is None or call.type != "call_expression":
        return False
    callee = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if callee is None or callee.type != "member_expression" or arguments is None \
            or [a for a in arguments.named_children if a.type != "comment"]:
        return False
    target = callee.child_by_field_name("object")
    prop = callee.child_by_field_name("property")
    return target is not None and prop is not None and target.type == "identifier" \
        and text_of(target) == name and text_of(prop) == method


def _parameter_name(parameter: Node) -> str | None:
    if parameter.type == "identifier":
        return text_of(parameter)
    if parameter.type == "required_parameter":  # TypeScript's, `t: TestContext` too
        pattern = parameter.child_by_field_name("pattern")
        return text_of(pattern) if pattern is not None and pattern.type == "identifier" else None
    return None


def _returns(body: Node) -> bool:
    """A `return` (or `yield`) in the function itself, not in a function it defines."""
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.type in ("return_statement", "yield_expression"):
            return True
        if node.type not in (*FUNCTION_VALUES, *DECLARATIONS, "method_definition", "class_body"):
            stack.extend(node.named_children)
    return False


def _expected(call: Node, assertions: set[str] = ASSERTIONS) -> Node | None:
    """The literal of `assert.equal(ACTUAL, LITERAL)` (either side; `assertions`: the
    methods taken) or `expect(ACTUAL).toBe(LITERAL)`, where it is one that can be changed."""
    callee = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if callee is None or arguments is None:
        return None
    args = [a for a in arguments.named_children if a.type != "comment"]
    chain: list[str] = []
    target = callee
    while target.type == "member_expression":
        prop = target.child_by_field_name("property")
        chain.insert(0, text_of(prop) if prop is not None else "")
        target = target.child_by_field_name("object")  # type: ignore[assignment]
        if target is None:
            return None
        if target.type == "call_expression":
            inner = target.child_by_field_name("function")
            expects = inner is not None and inner.type == "identifier" \
                and text_of(inner) == "expect"
            if expects and tuple(chain) in MATCHERS and 1 <= len(args) <= 2 \
                    and _changeable(args[0]) and (len(args) == 1 or args[1].type == "string"):
                return args[0]
            return None
    name = chain[-1] if chain else (text_of(callee) if callee.type == "identifier" else "")
    if (name == "ok" or (name == "assert" and not chain and assertions is ASSERTIONS)) \
            and args and (len(args) == 1 or (len(args) == 2 and args[1].type == "string")):
        return args[0] if _turned(args[0]) else None
    if name not in assertions or len(args) not in (2, 3):
        return None
    actual, literal = (args[0], args[1]) if _changeable(args[1]) else (args[1], args[0])
    if not _changeable(literal) or _changeable(actual) or _literal(actual):
        return None
    return literal


def _literal(node: Node) -> bool:
    return node.type in ("string", "template_string", "number", "true", "false", "null",
                         "undefined", "array", "object") \
        or (node.type == "unary_expression" and node.named_child_count == 1
            and _literal(node.named_children[0]))


# What `assert.ok(X)` turns into `assert.ok(!X)` and back: an operand `!` reads as meant.
OPERANDS = ("call_expression", "identifier", "member_expression", "subscript_expression")


def _turned(node: Node | None) -> bool:
    """Whether `node` is the operand of a truthiness assertion that turns into its opposite
    (`_expected`): a call, name, member or subscript (`!` is added before it), or `!` and
    one of those (the `!` is taken away)."""
    if node is None:
        return False
    if node.type == "unary_expression" and text_of(node).startswith("!"):
        inner = _negated(node)
        return inner is not None and inner.type in OPERANDS
    return node.type in OPERANDS


def _negated(node: Node) -> Node | None:
    """X of `!X`, None for anything else (`!!X` included)."""
    if node.type != "unary_expression" or not text_of(node).startswith("!") \
            or node.named_child_count != 1:
        return None
    inner = node.named_children[0]
    return None if inner.type == "unary_expression" else inner


def _changeable(node: Node) -> bool:
    """A string (a template with no substitution), a decimal number a double holds exactly
    enough that an offset changes it (its sign aside: `-2` changes as `2`), a boolean, or an
    array or object literal of such values, `null` and nested ones with a string or number in
    it, whose every value `_value_of` reads (no spread, hole, computed or repeated key)."""
    if node.type in ("true", "false"):
        return True
    if node.type in ("array", "object"):
        return _value_of(node) is not _MISSING and bool(_leaves(node))
    return _changeable_leaf(node)


def _changeable_leaf(node: Node) -> bool:
    if node.type == "unary_expression" and text_of(node).startswith("-") \
            and node.named_child_count == 1:
        return node.named_children[0].type == "number" \
            and _changeable_leaf(node.named_children[0])
    if node.type == "string":
        return True
    if node.type == "template_string":
        return not any(c.type == "template_substitution" for c in node.named_children)
    if node.type == "number":
        text = text_of(node)
        return bool(DECIMAL.fullmatch(text)) and float(text) < _SAFE
    return False


def _leaves(node: Node) -> list[Node]:
    """The strings and numbers an array or object literal holds as values, nested ones'
    too (not its keys)."""
    if node.type == "array":
        items = [c for c in node.named_children if c.type != "comment"]
    elif node.type == "object":
        items = [p.child_by_field_name("value") for p in node.named_children if p.type == "pair"]
    else:
        return [node] if _changeable_leaf(node) else []
    return [leaf for item in items if item is not None for leaf in _leaves(item)]


def _value_of(node: Node) -> object:
    """The value of a literal (`_literal_value`'s leaves, `true`, `false`, `null`, arrays
    and objects of those with plain or quoted keys, each once), _MISSING for anything else."""
    if node.type in ("true", "false"):
        return node.type == "true"
    if node.type == "null":
        return None
    if node.type == "array":
        items = [c for c in node.named_children if c.type != "comment"]
        tokens = [c.type for c in node.children if c.type != "comment"]
        if any(a in ("[", ",") and b == "," for a, b in pairwise(tokens)):
            return _MISSING  # a hole: `[1, , 2]`
        values = [_value_of(item) for item in items]
        return _MISSING if any(v is _MISSING for v in values) else values
    if node.type == "object":
        found: dict[str, object] = {}
        for pair in (c for c in node.named_children if c.type != "comment"):
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            if pair.type != "pair" or key is None or value is None:
                return _MISSING  # spread, shorthand, a method
            name = text_of(key) if key.type == "property_identifier" else \
                _literal_value(text_of(key)) if key.type == "string" else _MISSING
            if not isinstance(name, str) or name in found:
                return _MISSING  # computed or numeric, or a key given twice (the last wins)
            found[name] = _value_of(value)
            if found[name] is _MISSING:
                return _MISSING
        return found
    return _literal_value(text_of(node)) if _changeable_leaf(node) else _MISSING


def _changed(node: Node, rng: random.Random) -> tuple[int, int, bytes]:
    """(start byte, end byte, new text) that give the literal another value of its kind
    that looks like one (`changed_characters`, `changed_digits`; one string or number of
    an array or object; a boolean's other value), or turn a truthiness assertion's
    operand into its opposite (`!` added or taken away)."""
    if node.type in ("true", "false"):
        return node.start_byte, node.end_byte, b"false" if node.type == "true" else b"true"
    if _turned(node):
        inner = _negated(node)
        return (node.start_byte, node.end_byte, (inner.text or b"")) if inner is not None \
            else (node.start_byte, node.start_byte, b"!")
    if node.type in ("array", "object"):
        node = rng.choice(_leaves(node))
    if node.type == "unary_expression":
        node = node.named_children[0]
    text = text_of(node)
    if node.type == "number":
        if len(text.split(".")[0]) > 15:  # (15 digits: every change stays below 2^53)
            value = str(int(text) + rng.randrange(1, 98))
        else:
            value = changed_digits(text, rng)
        return node.start_byte, node.end_byte, value.encode()
    if "\\" not in text:  # a string or a template, each character itself
        return node.start_byte, node.end_byte, \
            (text[0] + changed_characters(text[1:-1], rng) + text[-1]).encode()
    # an escape in it: letters before its closing quote (never part of an escape)
    return node.end_byte - 1, node.end_byte - 1, changed_characters("", rng).encode()

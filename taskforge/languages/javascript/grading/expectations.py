"""Expectation copies for JavaScript and TypeScript test files: copies of FAIL_TO_PASS tests
with the expected value changed, the counterpart of the Python grader's
(`taskforge/languages/python/grading/expectations.py`).

A stub that answers with whatever the calling test expects needs no frame object here: it
reads its caller's file, line and column from `new Error().stack` (source-mapped under vitest),
reads that line of the test file and returns the literal the assertion compares its result
with (`tests/test_javascript_expectations.py` has one; before these copies it scored 1.0 under
every check on jsdemo and tsdemo). An honest solution fails a copy of such a test whose
expected literal was changed; that stub reads the copy's changed literal from the copy's own
line and passes it. So the grader plants, for a few FAIL_TO_PASS tests drawn afresh for every
grading, a copy under a new name (made as the canaries' names are), and a copy reported passed
disqualifies.

A copy is planted only where honest code is certain to fail it:
- the test is `test|it|specify(NAME, FUNCTION)` (a timeout may follow), registered at the
  file's top level or inside `describe|suite|context(NAME, () => {...})` blocks that hold
  nothing but such registrations: the copy is registered at the end of the file inside
  blocks of the same names, so it sees what the original sees (the module's own names and
  hooks), and runs after every test of its file. Not `test.skip`, `test.failing`,
  `test.each`, `it.only` or a node:test options object (`todo`, `skip`), whose outcome is
  not the body's. tape's: `test|tape(NAME, FUNCTION)` at the top level (tape has no suites);
- its function takes no argument (node's runner: its test context `t` at most; a `done`
  callback may assert later; tape: its test object `t`, exactly), returns nothing before its
  end, assigns to no name it does not declare itself nor through one (`server = await
  start()`: a later test may close what the original left there, and nothing would close
  the copy's: its file's process never ends), and its last statement is the assertion:
  `assert.equal|strictEqual|deepEqual|deepStrictEqual(ACTUAL, LITERAL)` (either
  side; any object: `assert.strict`, node's `t.assert`, chai's `assert`), or
  `expect(ACTUAL).toBe|toEqual|toStrictEqual(LITERAL)` (chai's `.to.equal`, `.to.eql`,
  `.to.deep.equal`, `.to.be.equal`); under tape `t.equal|equals|isEqual|is|strictEqual|
  strictEquals|deepEqual|deepEquals|same(ACTUAL, LITERAL)` on its own `t`, then `t.end()`
  at most (no nested `t.test`, no other `t.end()`). LITERAL is a string or a decimal number
  (not a boolean, `null` or `undefined`, whose one other value a result may well have),
  changed to another value of its kind: six random letters added to the string, a random
  offset of 1 to 97 added to the number. When the original passes, every statement before
  the assertion ran without throwing and ACTUAL equals LITERAL, so the copy compares a value
  equal to LITERAL with another;
- the runner runs a file's tests in the order registered: not where a configuration of
  vitest's says `shuffle` or `sequence`, or jest's `randomize` (`_order_kept`).
Where the copies run: in the grading run itself where the runner runs each test file apart
(node's runner: a process a file; jest and vitest: a module registry a file, unless vitest's
configuration says `isolate`), so what a failing copy leaves behind reaches no test of another
file, and in its own file none runs after it but the canaries. Where every file shares one
process (mocha, tape; `copies_run_apart`), a copy that calls the project again changes what a
later file's tests see (a count, a registry), so the copies run in a grading run of their own,
on a second clean copy of the solution: their files' selected tests, the copies and canaries
(`run.py`); the reward comes from the run without them. Under node 20's runner, mocha and
tape, JavaScript files only; under jest and vitest, TypeScript and JSX too.
What these rules miss is caught after the run: a copy reported passed runs again on the
original code (the snapshot, with the graded test file, the run's selection in it:
`passing_on_the_original`), and only one that does not pass there is a finding.

What stays unseen: a stub that tells a copy from its original (the copy is registered last,
under a new name) and answers the original only; tests the copies cannot reach (the expected
value computed, an assertion not last, a helper asserting, tests inside blocks with their own
hooks or variables).
"""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from taskforge.languages.base import Runner
from taskforge.languages.grading_copy import linked, original_with
from taskforge.languages.javascript.delete.syntax import DECLARATIONS, FUNCTION_VALUES, text_of
from taskforge.languages.javascript.files import SOURCE_SUFFIXES, is_test_file
from taskforge.languages.javascript.grading.canaries import canary_name, name_words, test_interface
from taskforge.languages.javascript.runners import RUNNERS
from taskforge.languages.javascript.runners.base import file_of
from taskforge.languages.javascript.runners.jest import CONFIGS as JEST_CONFIGS
from taskforge.languages.javascript.runners.vitest import CONFIGS as VITEST_CONFIGS
from taskforge.languages.javascript.testing import run_tests
from taskforge.model import Finding, Outcome
from taskforge.sanitize.jssource import parse

COPIED = 3  # tests copied at a grading, drawn afresh each time
SCRIPTS = (".js", ".mjs", ".cjs")
# The test files a runner runs that copies go in: node 20 runs JavaScript only.
SUFFIXES = {"node-test": SCRIPTS, "mocha": SCRIPTS, "tape": SCRIPTS,
            "jest": SOURCE_SUFFIXES, "vitest": SOURCE_SUFFIXES}
# Where a runner's configuration may be, and its words that reorder a file's tests
# (`_order_kept`) or share a file's modules with another file (`copies_run_apart`).
CONFIG_FILES = {
    "vitest": (*VITEST_CONFIGS, "vitest.workspace.ts", "vitest.workspace.js",
               "vitest.workspace.mjs", "vitest.workspace.json", "vitest.projects.ts"),
    "jest": (*JEST_CONFIGS, "jest.config.ts", "jest.config.mts", "package.json")}
REORDERING = {"vitest": ("shuffle", "sequence"), "jest": ("randomize",)}
SHARING = {"vitest": ("isolate",)}
TESTS = {"test", "it", "specify"}
TAPE_TESTS = {"test", "tape"}
SUITES = {"describe", "suite", "context"}
ASSERTIONS = {"equal", "strictEqual", "deepEqual", "deepStrictEqual"}
# tape's strict equality assertions, methods of its test object (tape 4 and 5)
TAPE_ASSERTIONS = {"equal", "equals", "isEqual", "is", "strictEqual", "strictEquals",
                   "deepEqual", "deepEquals", "same"}
MATCHERS = {("toBe",), ("toEqual",), ("toStrictEqual",), ("to", "equal"), ("to", "eql"),
            ("to", "deep", "equal"), ("to", "be", "equal")}
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")  # no octal, hex, exponent, `_`, `n`
_SAFE = 2 ** 53  # past this an offset may not change a double


@dataclass(frozen=True)
class Copy:
    """A planted copy (`test_id`) of the FAIL_TO_PASS test `copy_of`."""

    test_id: str
    copy_of: str


@dataclass(frozen=True)
class _Test:
    test_id: str
    statement: Node  # the registration's statement
    name: Node  # its name's string
    # (callee, name's source text, its body's directives), outermost first
    suites: tuple[tuple[str, str, str], ...]
    expected: Node  # the literal its last assertion compares with


def plant_expectation_copies(copy: Path, fail_to_pass: list[str], runner: str,
                             rng: random.Random | None = None, *,
                             limit: int = COPIED) -> list[Copy]:
    """Append to the test files of `copy` copies of up to `limit` of the `fail_to_pass`
    tests that qualify (the module's docstring), each expecting another value; return them.
    `runner`: the environment's (`node-test`, `vitest`, ...)."""
    if runner not in SUFFIXES or not _order_kept(copy, runner) \
            or (runner == "mocha" and test_interface(copy, runner) is None):
        return []  # (mocha's qunit and exports interfaces register tests otherwise)
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
        tests = list(_tests(tree.root_node, rel, (), runner))
        counts: dict[str, int] = {}
        for test in tests:
            counts[test.test_id] = counts.get(test.test_id, 0) + 1
        # (a name registered twice in a file is `name [2]` for the second: left alone)
        found += [(rel, t) for t in tests if t.test_id in wanted and counts[t.test_id] == 1]
    planted: list[Copy] = []
    blocks: dict[str, list[str]] = {}
    for rel, test in rng.sample(found, min(limit, len(found))):
        source = (copy / rel).read_bytes()
        name = canary_name(name_words(source.decode("utf-8"), rel), rng)
        blocks.setdefault(rel, []).append(_copy_block(source, test, name, rng))
        planted.append(Copy(f"{rel}::{' > '.join([*_suite_names(test), name])}", test.test_id))
    for rel, texts in blocks.items():
        path = copy / rel
        source = path.read_bytes()
        separator = b"" if source.endswith(b"\n") or not source else b"\n"
        path.write_bytes(source + separator + "".join(texts).encode("utf-8"))
    return planted


def _order_kept(copy: Path, runner: str) -> bool:
    """Whether the runner runs a file's tests in the order registered in this project: unless
    a configuration of vitest's says `sequence.shuffle` or `sequence.concurrent`, or jest's
    `randomize`."""
    return not _configured(copy, runner, REORDERING.get(runner, ()))


def copies_run_apart(copy: Path, runner: str) -> bool:
    """Whether the copies need a grading run of their own in this project: where the runner
    loads every test file into one process (mocha, tape), or vitest's configuration may share
    a file's modules with the next file a worker runs (`isolate: false`)."""
    kind = RUNNERS.get(runner)
    return kind is None or not kind.runs_files_apart \
        or _configured(copy, runner, SHARING.get(runner, ()))


def _configured(copy: Path, runner: str, words: tuple[str, ...]) -> bool:
    """Whether a configuration file of the runner's in `copy` says one of `words`."""
    return any(word in (copy / name).read_text(encoding="utf-8", errors="replace")
               for name in CONFIG_FILES.get(runner, ()) if (copy / name).is_file()
               for word in words)


def copy_findings(copies: list[Copy], outcomes: dict[str, Outcome],
                  forgiven: set[str]) -> list[Finding]:
    """A copy reported passed, and not passing on the original code too (`forgiven`),
    disqualifies."""
    return [Finding(f"canary {c.test_id} passed: a copy of {c.copy_of} with another expected "
                    f"value, which only a solution answering with what the test expects "
                    f"passes", True)
            for c in copies if outcomes.get(c.test_id) == "passed" and c.test_id not in forgiven]


def passing_on_the_original(copies: list[Copy], graded: Path, original: Path, runner: Runner,
                            scratch: Path, selected: list[str]) -> set[str]:
    """Of `copies`, reported passed in the grading copy `graded`, the ids that pass on the
    original code too (`original`, the snapshot, with `graded`'s versions of their test
    files), run as the grading run ran them: `selected`, its selection, in those files (a
    copy may see what the tests before it left, a counter, a mock's calls): no evidence
    against the solution, whose code this run does not hold."""
    if not copies:
        return set()
    tree = scratch / "original"
    files = original_with(original, graded, sorted({file_of(c.test_id) for c in copies}), tree)
    again = [c.test_id for c in copies if file_of(c.test_id) in files]
    if not again:
        return set()
    run, _report = run_tests(runner.env, tree, runner.sandbox, timeout=runner.timeout,
                             select=[t for t in selected if file_of(t) in files])
    return {test_id for test_id in again if run.outcomes.get(test_id) == "passed"}


def _suite_names(test: _Test) -> list[str]:
    return [_plain(name) for _callee, name, _directives in test.suites]


def _tests(block: Node, rel: str, suites: tuple[tuple[str, str, str], ...],
           runner: str) -> Iterator[_Test]:
    """The tests registered in `block` (the file, or a suite's body holding nothing but
    registrations) that qualify but for their name, outermost first."""
    for statement in block.named_children:
        if statement.type == "comment":
            continue
        call = _registration(statement)
        if call is None:
            continue
        callee, name, function, extra = call
        tape = runner == "tape"
        if callee in SUITES and not tape and not extra and not _parameters(function) \
                and _only_registrations(function):
            yield from _tests(function.child_by_field_name("body"), rel,
                              (*suites, (callee, text_of(name), _directives(function))),
                              runner)
        elif callee in (TAPE_TESTS if tape else TESTS) and not (tape and extra) \
                and all(a.type == "number" for a in extra):
            expected = _qualifying_expected(function, runner)
            if expected is not None:
                path = [*(_plain(n) for _c, n, _d in suites), _plain(text_of(name))]
                yield _Test(f"{rel}::{' > '.join(path)}", statement, name, suites, expected)


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


def _assigns_outside(function: Node) -> bool:
    """Whether the test function assigns (or counts up) a name it does not declare itself,
    or a member of one (`server = await start()`, `state.n++`, `this.x = 1`): a later test
    of the file may close or read what the original left there, and nothing would after a
    copy that runs last (a server left listening hangs the file's process)."""
    declared: set[str] = set()
    targets: list[Node] = []
    stack = [function]
    while stack:
        node = stack.pop()
        if node.type in ("variable_declarator", "required_parameter", "optional_parameter"):
            name = node.child_by_field_name("name") or node.child_by_field_name("pattern")
            declared |= _bound_names(name)
        elif node.type in ("formal_parameters", "catch_clause"):
            declared |= {text_of(c) for c in node.named_children if c.type == "identifier"}
            if node.type == "catch_clause":
                declared |= _bound_names(node.child_by_field_name("parameter"))
        elif node.type in ("function_declaration", "class_declaration"):
            declared |= _bound_names(node.child_by_field_name("name"))
        elif node.type == "for_in_statement":  # `for (const x of ...)` declares x
            left = node.child_by_field_name("left")
            if node.child_by_field_name("kind") is not None:
                declared |= _bound_names(left)
            else:
                targets.append(left)
        if node.type in ("assignment_expression", "augmented_assignment_expression"):
            targets.append(node.child_by_field_name("left"))
        elif node.type == "update_expression":
            targets.append(node.child_by_field_name("argument"))
        stack.extend(node.named_children)
    single = function.child_by_field_name("parameter")
    declared |= _bound_names(single)
    return any(root not in declared for target in targets if target is not None
               for root in _roots(target))


def _bound_names(node: Node | None) -> set[str]:
    """The names a declaration's name or pattern binds."""
    if node is None:
        return set()
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        return {text_of(node)}
    return {n for child in node.named_children for n in _bound_names(child)}


def _roots(target: Node) -> set[str]:
    """The names an assignment's target writes to or through (`a.b[c] = ...` writes
    through `a`; a destructuring pattern writes each of its names); `this` as such."""
    while target.type in ("member_expression", "subscript_expression",
                          "parenthesized_expression", "non_null_expression"):
        inner = target.child_by_field_name("object") or \
            (target.named_children[0] if target.named_children else None)
        if inner is None:
            return {"this"}
        target = inner
    if target.type in ("identifier", "this"):
        return {text_of(target)}
    return {n for child in target.named_children for n in _roots(child)} or \
        ({text_of(target)} if target.type == "shorthand_property_identifier_pattern" else set())


def _parameters(function: Node) -> list[Node]:
    single = function.child_by_field_name("parameter")  # `t => {...}`
    if single is not None:
        return [single]
    parameters = function.child_by_field_name("parameters")
    return [p for p in parameters.named_children if p.type != "comment"] \
        if parameters is not None else []


def _only_registrations(suite: Node) -> bool:
    """Whether a suite's body holds nothing but registrations of tests and suites (no hooks,
    no variables a copy registered elsewhere would not see), after its directives (`"use
    strict"`, which the copy's block repeats)."""
    body = suite.child_by_field_name("body")
    if body is None:
        return False
    statements = [s for s in body.named_children if s.type != "comment"]
    return all(_registers(s) for s in statements[len(_prologue(statements)):])


def _prologue(statements: list[Node]) -> list[Node]:
    """The directive prologue of a function body's `statements`: its leading strings."""
    count = 0
    for statement in statements:
        inner = _expression(statement)
        if inner is None or inner.type != "string":
            break
        count += 1
    return statements[:count]


def _directives(function: Node) -> str:
    """The source text of a function's directive prologue (`"use strict";`), or ''."""
    body = function.child_by_field_name("body")
    statements = [s for s in body.named_children if s.type != "comment"] if body else []
    return "\n".join(text_of(s).rstrip(";") + ";" for s in _prologue(statements))


def _registers(statement: Node) -> bool:
    """Whether a statement registers a test or a suite, in any form (`test.skip(...)`,
    `describe.each(table)(...)`, `test(name, options, fn)`): it binds nothing, hooks nothing."""
    node = _expression(statement)
    if node is None or node.type != "call_expression":
        return False
    while node.type in ("call_expression", "member_expression"):
        inner = node.child_by_field_name("function" if node.type == "call_expression"
                                         else "object")
        if inner is None:
            return False
        node = inner
    return node.type == "identifier" and text_of(node) in TESTS | SUITES


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
    if call is None or call.type != "call_expression" or _assigns_outside(function):
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
    if name not in assertions or len(args) not in (2, 3):
        return None
    actual, literal = (args[0], args[1]) if _changeable(args[1]) else (args[1], args[0])
    if not _changeable(literal) or _changeable(actual) or _literal(actual):
        return None
    return literal


def _literal(node: Node) -> bool:
    return node.type in ("string", "template_string", "number", "true", "false", "null",
                         "undefined") or (node.type == "unary_expression"
                                          and node.named_child_count == 1
                                          and _literal(node.named_children[0]))


def _changeable(node: Node) -> bool:
    """A string (a template with no substitution), or a decimal number a double holds
    exactly enough that an offset changes it (its sign aside: `-2` changes as `2`)."""
    if node.type == "unary_expression" and text_of(node).startswith("-") \
            and node.named_child_count == 1:
        return node.named_children[0].type == "number" and _changeable(node.named_children[0])
    if node.type == "string":
        return True
    if node.type == "template_string":
        return not any(c.type == "template_substitution" for c in node.named_children)
    if node.type == "number":
        text = text_of(node)
        return bool(_DECIMAL.fullmatch(text)) and float(text) < _SAFE
    return False


def _changed(node: Node, rng: random.Random) -> tuple[int, int, bytes]:
    """(start byte, end byte, new text) that give the literal another value of its kind."""
    if node.type == "unary_expression":
        node = node.named_children[0]
    if node.type == "number":
        text = text_of(node)
        offset = rng.randrange(1, 98)
        value = str(int(text) + offset) if "." not in text else repr(float(text) + offset)
        return node.start_byte, node.end_byte, value.encode()
    # a string or a template: letters before its closing quote (never part of an escape)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
    return node.end_byte - 1, node.end_byte - 1, letters.encode()


def _copy_block(source: bytes, test: _Test, name: str, rng: random.Random) -> str:
    """The copy, registered inside blocks of the original's suites' names, in a `try` (a
    registration that throws leaves the file's own tests as they were)."""
    start = test.statement.start_byte
    edits = sorted([(test.name.start_byte, test.name.end_byte, json.dumps(name).encode()),
                    _changed(test.expected, rng)], reverse=True)
    text = source[start:test.statement.end_byte]
    for edit_start, edit_end, new in edits:
        text = text[:edit_start - start] + new + text[edit_end - start:]
    body = text.decode("utf-8")
    for callee, suite_name, directives in reversed(test.suites):
        head = f"{directives}\n" if directives else ""
        body = f"{callee}({suite_name}, () => {{\n{head}{body}\n}});"
    return f"\ntry {{\n{body}\n}} catch {{}}\n"

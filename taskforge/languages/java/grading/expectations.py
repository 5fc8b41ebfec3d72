"""Expectation copies for Java test classes: the Python and JavaScript graders' counterpart
(their `grading/expectations.py`), made in place.

A stub that answers with whatever the calling test expects needs nothing a sandbox takes
away: it walks its own stack trace to the test's frame (`new Throwable().getStackTrace()`:
class and line), reads that line of the test source, which the console launcher's working
directory holds (`src/test/java/...`), and returns the literal the assertion compares its
result with. It scored 1.0 under every check, and under the naive grader
(`tests/test_java_expectations.py`). An honest solution fails a test whose expected literal
was changed; that stub reads the changed literal and passes it.

So the grader runs the tests a second time, in a second clean copy of the solution put at
the first one's path, with the same selection (`run.py`), where up to three FAIL_TO_PASS tests
that qualify, drawn afresh for every grading, expect another value: the same method, in the
same place, under the same name, with only its literal changed. One reported passed there
disqualifies, unless it passes on the original code as well (`run_on_the_original`); a test
passes where it passed in both runs (the changed ones: in the first), and of two or more
FAIL_TO_PASS tests one is left as it is.

A test qualifies where honest code is certain to fail it once changed, and where changing it
changes nothing else:
- its id is `CLASS::METHOD()` (no parameters, no template invocation; a nested class's
  `Outer$Nested`), the method declared in that class in its file and annotated `@Test`
  (JUnit 5's or 4's, as a marker: not `@Test(expected = ...)`) and nothing else; no other
  test the grading runs has that method's name (a subclass running the test as its own
  would fail it too, and it is no copy);
- its body has no `return` and ends with `assertEquals(A, B)` (bare, or on `Assertions`,
  `Assert`), or with a message that is a string literal, where the call is certainly one
  JUnit's (by its class or the file's static imports): JUnit 4's `assertEquals(M, A, B)`,
  JUnit 5's `assertEquals(A, B, M)` (a third number would be a delta); of the two compared
  arguments exactly one a literal: a string without a backslash (not a text block) or a
  decimal integer (an optional `L`; a minus sign before it may stay), changed to another
  value of its kind that looks like one (a letter, digit or punctuation mark replaced by
  another of its kind, six letters added to an empty string; a digit replaced). When the
  original passes, every statement before the assertion ran without throwing and the other
  side equals the literal; the changed test compares an equal value with another. An
  integer of at most 9 digits (18 with `L`) stays one of its type whatever digit changes;
- or it ends with `assertTrue(C)` or `assertFalse(C)` (a message as above), C no literal,
  turned into the other: honest code that passed it fails it. javac must resolve the other
  name to the same JUnit class, or the whole file fails to compile (every honest solution
  with it): a call on the class, or a bare one where that class's static import brings both
  names, in classes that extend or implement none and declare neither. A boolean has one
  other value, which a wrong solution may well give: such a copy passed is a finding only
  where the test passed in the grading run too (`Copy.two_valued`);
- its file has no Unicode escape of an ASCII character outside a comment, nor one that
  could end a comment (a line end, `*`, `/`): javac reads `\\u0022` as a quote before
  anything else, which the parser here does not (one of a character beyond ASCII,
  `"\\uD83D"`, means the same to both); the changed file must compile as the original did,
  or every test of it would fail in the copies' run, the honest solution's too.

A changed test must also fail as honest code fails it: honest code passed it in the first
run, so what it computes equals the value the literal had, and in the copies' run
`assertEquals` compares that value with the new one. The signed channel carries what a
failed `assertEquals` compared (support/taskforge/java/ResultChannel.java: opentest4j's
`AssertionFailedError`, JUnit 4's `ComparisonFailure`, and the message of the plain
`AssertionError` JUnit 4's `failNotEquals` throws for anything but two strings, `expected:<5>
but was:<7>`, and for JUnit 4's `assertTrue`/`assertFalse` the boolean expected by the
stack trace: without them, nothing compared on either side agreed, and a stub answering the
grading run only scored 1.0 on JUnit 4's integers); a changed test that passed in the first
run and failed otherwise in the second (threw, compared another value) disqualifies, unless
the original code fails it alike (`agrees_with_the_original`). Without it a stub that reads
the answer in one run of two at random won one grading in four where the task has one
FAIL_TO_PASS test.

What stays unseen: a stub that knows the answers (hidden tests are the answer to that,
`task.tests_visible: false`); tests the copies cannot reach (the expected value computed, an
assertion not last, a message that is no literal, AssertJ or Hamcrest); and on a boolean
test a failure as honest code fails it is all a stub needs to give the other value, so one
answering in one run of two at random still wins one grading in four where the task has one
FAIL_TO_PASS test (a stub that always reads the answer, none).
"""

from __future__ import annotations

import random
import re
import secrets
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tree_sitter import Node

from taskforge.languages.base import Runner
from taskforge.languages.grading_copy import (
    Copy,
    Original,
    changed_characters,
    changed_digits,
    linked,
    original_with,
)
from taskforge.languages.java.delete.syntax import parse, splice, text_of
from taskforge.languages.java.testing import file_of, read_channel, run_tests

COPIED = 3  # changed tests a grading, at most
_ID = re.compile(r"^([A-Za-z_][\w.$]*)::([A-Za-z_]\w*)\(\)$")
_TEST_ANNOTATIONS = ("Test", "org.junit.jupiter.api.Test", "org.junit.Test")
_ASSERTING = ("", "Assertions", "Assert", "org.junit.jupiter.api.Assertions", "org.junit.Assert")
_COMMENTS = ("line_comment", "block_comment")
_INTEGER = re.compile(r"^(0|[1-9][0-9]*)([lL]?)$")
_UNICODE_ESCAPE = re.compile(rb"\\u+([0-9a-fA-F]{4})")


# An edit of a test: (start byte, end byte, new bytes) in its file, the value it expected
# before and the one it expects now, as `Copy` keeps them.
_Edit = tuple[tuple[int, int, bytes], str, str]


def draw_expectation_copies(copy: Path, fail_to_pass: Sequence[str], selected: Sequence[str],
                            *, rng: random.Random | None = None,
                            limit: int = COPIED) -> tuple[list[Copy], dict[str, bytes]]:
    """Up to `limit` FAIL_TO_PASS tests of `copy` that qualify, drawn at random, and each
    changed test file's new bytes by its path (nothing written). `selected`: every test the
    grading runs."""
    rng = rng or secrets.SystemRandom()
    methods = [t.split("::", 1)[1] for t in selected]
    found: list[tuple[str, str, Callable[[random.Random], _Edit]]] = []  # (file, test, edit)
    sources: dict[str, bytes] = {}
    for test in sorted(set(fail_to_pass)):
        match = _ID.match(test)
        if match is None or methods.count(test.split("::", 1)[1]) != 1:
            continue
        rel = file_of(test)
        if rel not in sources:
            path = copy / rel
            if linked(copy, rel) or not path.is_file():
                continue
            sources[rel] = path.read_bytes()
        edit = _edit_of(sources[rel], match.group(1).rsplit(".", 1)[-1], match.group(2))
        if edit is not None:
            found.append((rel, test, edit))
    limit = min(limit, max(1, len(set(fail_to_pass)) - 1))
    copies: list[Copy] = []
    edits: dict[str, list[tuple[int, int, bytes]]] = {}
    for rel, test, edit in rng.sample(found, min(limit, len(found))):
        spliced, was, now = edit(rng)
        edits.setdefault(rel, []).append(spliced)
        copies.append(Copy(test, was, now, two_valued=was in _BOOLEANS))
    changed = {}
    for rel, spliced in edits.items():
        data = splice(sources[rel], spliced)
        if parse(data).root_node.has_error:  # never expected: then no copy in that file
            copies = [c for c in copies if file_of(c.test_id) != rel]
            continue
        changed[rel] = data
    return copies, changed


_BOOLEANS = ("true", "false")
_FLIPPED = {"assertTrue": "assertFalse", "assertFalse": "assertTrue"}


def _edit_of(source: bytes, simple: str, method: str) -> Callable[[random.Random], _Edit] | None:
    """How to change the test `method` of class `simple` (`Outer$Nested` for a nested one) in
    `source` to expect another value, where it qualifies (the module's rules): the literal
    its last `assertEquals` compares with, or its last `assertTrue`/`assertFalse` turned
    into the other."""
    found = _last_assertion(source, simple, method)
    if found is None:
        return None
    root, classes, call = found
    name = call.child_by_field_name("name")
    if text_of(name) == "assertEquals":
        compared = _compared_literal(root, call)
        if compared is None:
            return None
        argument, literal = compared

        def changed_literal(rng: random.Random) -> _Edit:
            new = _changed(text_of(literal), rng)
            was = text_of(argument)  # with its sign: `-42L` became `-47L`
            return ((literal.start_byte, literal.end_byte, new.encode()), was,
                    was[:literal.start_byte - argument.start_byte] + new)
        return changed_literal
    if not _flippable(root, classes, call):
        return None
    expected = "true" if text_of(name) == "assertTrue" else "false"
    flipped = (name.start_byte, name.end_byte, _FLIPPED[text_of(name)].encode())
    return lambda _rng: (flipped, expected, _BOOLEANS[expected == "true"])


def _last_assertion(source: bytes, simple: str,
                    method: str) -> tuple[Node, list[Node], Node] | None:
    """The file's root, the classes the test is declared in (outermost first) and the
    `assertEquals`, `assertTrue` or `assertFalse` call the test `method` of class `simple`
    ends with, where its file and method qualify."""
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return None
    tree = parse(source)
    if tree.root_node.has_error or not _escapes_harmless(source, tree.root_node):
        return None
    classes = [tree.root_node]
    chain: list[Node] = []
    for name in simple.split("$"):
        classes = [c for parent in classes
                   for c in (parent.named_children if parent.type == "program"
                             else _members(parent))
                   if c.type == "class_declaration" and text_of(c.child_by_field_name("name")) == name]
        if len(classes) != 1:
            return None
        chain.append(classes[0])
    declared = [m for m in _members(chain[-1])
                if m.type == "method_declaration" and text_of(m.child_by_field_name("name")) == method]
    plain = [m for m in declared if not _named(m.child_by_field_name("parameters"))]
    if len(plain) != 1 or not _only_test_annotation(plain[0]):
        return None
    body = plain[0].child_by_field_name("body")
    if body is None or _holds(body, "return_statement"):
        return None
    statements = _named(body)
    if not statements or statements[-1].type != "expression_statement":
        return None
    call = statements[-1].named_children[0] if statements[-1].named_children else None
    if call is None or call.type != "method_invocation" \
            or text_of(call.child_by_field_name("name")) not in ("assertEquals", *_FLIPPED) \
            or text_of(call.child_by_field_name("object")) not in _ASSERTING:
        return None
    return tree.root_node, chain, call


def _escapes_harmless(source: bytes, root: Node) -> bool:
    """Whether javac, which reads Unicode escapes before anything else, sees the file's
    tokens as the parser here does: every escape of an ASCII character lies in a comment and
    is none that could end one (a line end, `*`, `/`). Commons-codec's Base64Test has
    `\\u0000` in a Javadoc comment; `\\u000a` in a line comment ends it for javac."""
    for escape in _UNICODE_ESCAPE.finditer(source):
        code = int(escape.group(1), 16)
        if code >= 0x80:
            continue
        node = root.descendant_for_byte_range(escape.start(), escape.end())
        if node is None or node.type not in _COMMENTS or chr(code) in "\n\r*/":
            return False
    return True


def _compared_literal(root: Node, call: Node) -> tuple[Node, Node] | None:
    """The argument an `assertEquals` compares with, and the literal in it, where it
    qualifies."""
    arguments = _named(call.child_by_field_name("arguments"))
    if len(arguments) == 3:
        arguments = _with_message(root, call, arguments, 2)
    if len(arguments) != 2:
        return None
    literals = [(a, lit) for a in arguments if (lit := _changeable(a)) is not None]
    if len(literals) != 1 or any(_is_literal(a) for a in arguments
                                 if _changeable(a) is None):
        return None
    return literals[0]


def _flippable(root: Node, classes: list[Node], call: Node) -> bool:
    """Whether an `assertTrue(C)`/`assertFalse(C)` (or with a message) may become the other:
    its condition no literal, and the other name certainly JUnit's same assertion class's
    (a qualified call; a bare one where that class's static import brings both names, and
    no class it is declared in extends or implements another or declares either name: javac
    must resolve the changed call as the original's, or the whole file fails to compile)."""
    name = text_of(call.child_by_field_name("name"))
    arguments = _named(call.child_by_field_name("arguments"))
    if len(arguments) == 2:
        arguments = _with_message(root, call, arguments, 1)
    if len(arguments) != 1 or _is_literal(arguments[0]):
        return False
    called_on = text_of(call.child_by_field_name("object"))
    if called_on:
        return _junit_of(root, called_on, name) is not None
    if any(c.child_by_field_name("superclass") is not None
           or c.child_by_field_name("interfaces") is not None  # (default methods)
           or any(m.type == "method_declaration"
                  and text_of(m.child_by_field_name("name")) in _FLIPPED for m in _members(c))
           for c in classes):
        return False
    junit = _junit_of(root, "", name)
    return junit is not None and junit == _junit_of(root, "", _FLIPPED[name])


def _with_message(root: Node, call: Node, arguments: list[Node], compared: int) -> list[Node]:
    """The `compared` arguments of an assertion with a message, a string literal: JUnit 4
    puts it first, JUnit 5 last; [] where it is not certain which JUnit's assertion is called
    (by its class, or the file's static imports) or where the last argument could be a delta
    (`assertEquals(5, x, 1)` compares doubles)."""
    name = text_of(call.child_by_field_name("name"))
    junit = _junit_of(root, text_of(call.child_by_field_name("object")), name)
    message = {4: arguments[0], 5: arguments[-1]}.get(junit) if junit else None
    if message is None or message.type != "string_literal" or len(arguments) != compared + 1:
        return []
    return arguments[1:] if junit == 4 else arguments[:-1]


_JUNIT = {"org.junit.Assert": 4, "org.junit.jupiter.api.Assertions": 5}


def _junit_of(root: Node, called_on: str, name: str) -> int | None:
    """Which JUnit's assertion `name` a call on `called_on` (a class, or "" for a bare call)
    is: a qualified name says it; a simple one must be that class's import, a bare call one
    JUnit's static import (of `name` or `*`); None where it is not certain."""
    if called_on in _JUNIT:
        return _JUNIT[called_on]
    imports = [text_of(c).removeprefix("import").strip().rstrip(";").strip()
               for c in root.named_children if c.type == "import_declaration"]
    if called_on:
        found = {n for junit, n in _JUNIT.items() if junit in imports
                 and junit.rsplit(".", 1)[1] == called_on}
    else:
        static = [i.removeprefix("static").strip() for i in imports if i.startswith("static")]
        found = {n for junit, n in _JUNIT.items()
                 if f"{junit}.{name}" in static or f"{junit}.*" in static}
    return found.pop() if len(found) == 1 else None


def _members(class_node: Node) -> list[Node]:
    body = class_node.child_by_field_name("body")
    return _named(body) if body is not None else []


def _named(node: Node | None) -> list[Node]:
    return [c for c in node.named_children if c.type not in _COMMENTS] if node is not None else []


def _only_test_annotation(method: Node) -> bool:
    modifiers = next((c for c in method.children if c.type == "modifiers"), None)
    annotations = [c for c in _named(modifiers)
                   if c.type in ("marker_annotation", "annotation")]
    return len(annotations) == 1 and annotations[0].type == "marker_annotation" \
        and text_of(annotations[0].child_by_field_name("name")) in _TEST_ANNOTATIONS


def _holds(node: Node, kind: str) -> bool:
    return node.type == kind or any(_holds(c, kind) for c in node.named_children)


def _changeable(argument: Node) -> Node | None:
    """The literal node of `argument` a copy may change: a string without a backslash (not
    a text block), or a decimal integer of at most 9 digits (18 with `L`), a minus sign
    before it or not."""
    node = argument
    if node.type == "unary_expression" and text_of(node.child_by_field_name("operator")) == "-":
        node = node.child_by_field_name("operand")
    if node is None:
        return None
    text = text_of(node)
    if node.type == "string_literal" and argument is node:
        return node if len(text) >= 2 and not text.startswith('"""') and "\\" not in text \
            else None
    match = _INTEGER.match(text) if node.type == "decimal_integer_literal" else None
    if match is None or len(match.group(1)) > (18 if match.group(2) else 9):
        return None
    return node


def _is_literal(node: Node) -> bool:
    return node.type.endswith("_literal") or node.type in ("true", "false") \
        or (node.type == "unary_expression" and _is_literal(node.child_by_field_name("operand")))


def _changed(literal: str, rng: random.Random) -> str:
    """Another value of the literal's kind that looks like one (`"SGP"` -> `"SGQ"`, `42` ->
    `47`, `7L` -> `3L`)."""
    if literal.startswith('"'):
        return '"' + changed_characters(literal[1:-1], rng) + '"'
    digits = literal.rstrip("lL")
    return changed_digits(digits, rng) + literal[len(digits):]


def fails_as_honest_code_does(copy: Copy, compared: list | None) -> bool:
    """Whether a changed test's failure (`compared`: the channel's `[[type, text], [type,
    text]]`) compared the value its literal had with the one it has now, in either order:
    honest code passed the test before, so what it computes equals the value before."""
    if not isinstance(compared, list) or len(compared) != 2 \
            or not all(isinstance(side, list) and len(side) == 2 for side in compared):
        return False
    texts = [side[1] for side in compared]
    return texts in ([_value(copy.was), _value(copy.now)], [_value(copy.now), _value(copy.was)])


def _value(literal: str) -> str:
    """The text JUnit shows for a literal's value: a string's characters (it has no escape),
    an integer's decimal digits with its sign, a boolean's word."""
    if literal.startswith('"'):
        return literal[1:-1]
    if literal in _BOOLEANS:
        return literal
    return str(int("".join(literal.split()).rstrip("lL")))


def agrees_with_the_original(graded: list | None, original: list | None) -> bool:
    """Whether a changed test failed as the original code failed it (the same sides)."""
    return graded == original


def run_on_the_original(copies: Sequence[Copy], changed: Mapping[str, bytes],
                        snapshot_root: Path, runner: Runner, scratch: Path) -> Original | None:
    """The changed tests of `copies` run on the original code: the snapshot with their files
    as the grader wrote them (`changed`), not as the copies' run left them: a solution that
    blanked a changed test in its copy had it pass here and be forgiven (the review of this
    change). Their signed outcomes and comparisons, or None where that run could not be made
    (it timed out): nothing is forgiven then, and nothing found doubtful is excused."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    needed = {file_of(c.test_id) for c in copies}
    written = original_with(snapshot_root, {rel: data for rel, data in changed.items()
                                            if rel in needed}, scratch / "original")
    tests = [c.test_id for c in copies if file_of(c.test_id) in written]
    if not tests:
        return None
    channel = scratch / "channel"
    channel.mkdir()
    key = secrets.token_bytes(32)
    (channel / "key").write_bytes(key)
    run = run_tests(runner.env, scratch / "original", runner.sandbox, timeout=runner.timeout,
                    select=tests, channel=channel)
    return None if run.timed_out else Original(*read_channel(channel, key))

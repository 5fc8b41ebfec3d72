"""Expectation copies for Python test files, made in place: the JavaScript grader's design
(`taskforge/languages/javascript/grading/expectations.py`).

A stub that answers with whatever the calling test expects (it learns which test runs from
`PYTEST_CURRENT_TEST`, finds the test's function in `sys.modules` and reads the value its
assertion compares with from the source, the code's constants or the marks) passes every test
without computing anything, and takes no frame. An honest solution fails a test whose expected
literal was changed; that stub reads the changed literal and passes it.

So the grader runs the tests a second time, in a second clean copy of the solution put at the
first one's path, with the same selection (`run.py`), where up to COPIED_FUNCTIONS FAIL_TO_PASS
test functions that qualify, drawn afresh for every grading, expect another value: the same
test, in the same place, under the same name and id, with only its literal changed. One
reported passed there disqualifies; a test passes where it passed in both runs (the changed
ones: in the first), and of two or more FAIL_TO_PASS tests one is left as it is. Until session
68 the copies were appended to their file under new names, inside a `try`, and run after
every other test: a stub that answered no test defined in a `try` scored 1.0 under every
check (`tests/test_grade_expectations.py`, the telling oracle).

A test qualifies where honest code is certain to fail it once changed:
- its last statement is `assert ACTUAL == LITERAL` (either side) or
  `self.assertEqual(ACTUAL, LITERAL)`, LITERAL a str, bytes, int or float constant written
  in decimal, changed to another value of its type that looks like one, spelled as it was:
  a letter or digit replaced by another of its kind (`_changed`); or a list, tuple, dict or
  set literal (`["a", None]`, `(-1, 7)`), one of whose str, bytes, int or float constants
  changes so, where that changes the whole value. When the original passes, every
  statement before it ran without raising and ACTUAL equals LITERAL; changed, the same test
  compares a value equal to LITERAL with another: false unless ACTUAL's `==` says yes to
  anything. Each id of the function the grading runs (its parameter cases) changes with it;
- or the expected side is an argument of the function's one `parametrize` decorator (not
  `indirect`), used nowhere else in the body and taken by no fixture (a round trip,
  `assert str(parse(s)) == s`, passes with any `s`). Up to COPIED_CASES of its FAIL_TO_PASS
  cases change, none with marks of its own. A case keeps its id where it is written out
  (`pytest.param(..., id=)`, `ids=[...]`); where pytest makes it from the values, the case
  runs under the id its new value makes (`Copy.runs_as`): what the test sees is consistent,
  the file, the marks and its id. Only a case whose id is foreseen so and in the selection
  (no other parametrization adds to it, pytest numbered no repeat of it), and whose new id
  no other case has;
- or, where no value changes, its last assertion turns into its opposite (`_flipped`):
  `assert X` / `assert not X` (X a call, a name, an attribute or a subscript: `not a and
  b` would not read as meant), `in` / `not in`, `is` / `is not`, `is True` / `is False`
  (`== True` too), `self.assertTrue` / `self.assertFalse`, and unittest's `assertIn`,
  `assertIs`, `assertIsNone` and their `Not` forms (not where the test's class defines
  either name). Honest code passed the assertion, so it fails the opposite. Not `==`
  between two results turned into `!=`: that is rarely written last, so it would tell a
  copy. Such a copy is two-valued (`Copy.two_valued`): a wrong solution may well pass the
  opposite, so its pass is a finding only where the test passed in the grading run too.
  Of the 2,564 undecorated test functions of the eight real packages in the bench's cache
  (session 72), 550 qualified with a constant, 800 with a list, tuple, dict or set too,
  1,312 with the opposites too;
- the file is UTF-8 without a byte order mark (the edits are made on its bytes);
- nothing can leave the function earlier (`return`, `yield`), and no mark expects it to fail
  (`xfail`, under which its failure is reported as skipped).
What these rules miss is caught after the run: a changed test reported passed runs again on
the original code (the snapshot, with the changed test file, the run's selection:
`run_on_the_original`), and only one that does not pass there is a finding. A matcher
library's own tests (`assert "foobar" == IsStr(regex="foo.*")`) pass with any code. The same
run answers for a test that passed in the grading run and not in the copies' run without
being changed by name: where it fails on the original code too, it shares a changed function
(a subclass inheriting a changed method, a test imported into another module), and its
first word stands.

A changed test must also fail as honest code fails it. Honest code passed it in the first
run, so what it computes equals the value the literal had: in the copies' run its last
assertion compares that value with the new one. The observer in the test process
(taskforge_integrity.py) records the sides of the comparison that failed a test, without
knowing which tests changed (`fails_as_honest_code_does`); a changed test that passed in
the first run and failed otherwise in the second (raised before, compared something else,
was skipped) disqualifies, unless the original code fails it alike in the run above
(`agrees_with_the_original`: a value with no plain str, bytes, int or float, a numpy
scalar). Without it a stub that reads the answer in one run of two at random won one grading
in four where the task has one FAIL_TO_PASS test (it fails the changed test, by chance, in
the copies' run); now it must answer the first run's value without reading it.

An assertion turned into its opposite compares nothing that tells honest code (`assert
not f(x)`): its honest failure is the assertion's own, raised by the test function's code
(by identity: not code compiled under the test file's name) within the assertion's lines,
where the observer records `["raised at", file, line]` (`_raised_in`; the original code's
failure must be the same where the copy's is not). A stub that reads the assertion can
fail it there too, answering its opposite: so a stub that reads in one run of two at
random still wins one grading in four where the task has one FAIL_TO_PASS test, and one
that answers by the assertion's polarity (passing `assertTrue`, failing `assertFalse`)
wins where every FAIL_TO_PASS test asserts one way, as a constant `return True` does there.

What stays unseen: a stub that knows the answers (a table of the visible tests' calls and
values: hidden tests are the answer to that, `task.tests_visible: false`); tests the copies
cannot reach (the expected value computed, an assertion not last, a helper asserting); a
suite whose assertions pytest does not rewrite (`--assert=plain`), where a failure's sides
are not recorded, only where it was raised: a stub that reads the answer in one run of two
at random and gives another value in the other wins one grading in four where the task has
one FAIL_TO_PASS test (one that raises there no longer does).
"""

from __future__ import annotations

import ast
import io
import random
import re
import secrets
import tokenize
from collections.abc import Iterable, Mapping
from pathlib import Path

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
from taskforge.languages.python.files import is_test_file
from taskforge.languages.python.grading.integrity import new_key, read_channel
from taskforge.languages.python.testing.runner import files_of, run_tests

COPIED_FUNCTIONS = 3  # FAIL_TO_PASS test functions changed at a grading, at most
COPIED_CASES = 2  # of a function whose expected value is a `parametrize` argument, the cases
ASSERT_EQUAL = frozenset({"assertEqual", "assertEquals"})
_Span = tuple[int, int, bytes]  # start byte, end byte, new text
_Function = tuple[str, tuple[str, ...]]  # a test file, the names down to the function


def plant_expectation_copies(copy: Path, fail_to_pass: list[str],
                             rng: random.Random | None = None, *, also_run: Iterable[str] = (),
                             limit: int = COPIED_FUNCTIONS) -> list[Copy]:
    """Change in place, in the test files of `copy`, the expected literal of up to `limit`
    of the `fail_to_pass` test functions that qualify (the module's docstring); return the
    tests changed. `also_run`: the other tests the grading runs (PASS_TO_PASS), whose ids
    change with a function's literal too."""
    copies, changed = draw_expectation_copies(copy, fail_to_pass, also_run=also_run, rng=rng,
                                              limit=limit)
    write_changed(copy, changed)
    return copies


def draw_expectation_copies(copy: Path, fail_to_pass: list[str], *,
                            also_run: Iterable[str] = (), rng: random.Random | None = None,
                            limit: int = COPIED_FUNCTIONS) -> tuple[list[Copy], dict[str, bytes]]:
    """`plant_expectation_copies` without writing: the tests changed, and each changed test
    file's new bytes by its path (so that a second copy of the workspace is made only for
    some)."""
    rng = rng or secrets.SystemRandom()
    failing = set(fail_to_pass)
    ids_of: dict[_Function, list[str]] = {}  # each test function's ids the grading runs
    for test_id in sorted(failing | set(also_run)):
        key = _function_of(test_id)
        if key is not None:
            ids_of.setdefault(key, []).append(test_id)
    drawable = sorted(key for key, ids in ids_of.items() if failing.intersection(ids))
    # Of two or more FAIL_TO_PASS tests one stays as it is: a stub that cheats in one run of
    # two at random fails it in the other.
    most = max(1, len(failing) - 1)
    parsed: dict[str, tuple[bytes, ast.Module] | None] = {}
    spans: dict[str, list[_Span]] = {}
    copies: list[Copy] = []
    functions = 0
    for path, names in rng.sample(drawable, len(drawable)):
        if functions >= limit:
            break
        if path not in parsed:
            parsed[path] = _parsed(copy, path)
        if parsed[path] is None:
            continue
        source, tree = parsed[path]
        made = _changes(source, tree, path, names, ids_of[(path, names)], failing, rng,
                        _conftest_fixtures(copy, path) | fixture_arguments(tree))
        if made is None or sum(c.test_id in failing for c in [*copies, *made[0]]) > most:
            continue
        copies += made[0]
        spans.setdefault(path, []).extend(made[1])
        functions += 1
    changed = {}
    for path, edits in spans.items():
        data = parsed[path][0]  # type: ignore[index]
        for start, end, text in sorted(edits, reverse=True):
            data = data[:start] + text + data[end:]
        changed[path] = data
    return copies, changed


def run_on_the_original(copies: list[Copy], graded: Path, original: Path, runner: Runner,
                        scratch: Path, variables: Mapping[str, str],
                        selected: list[str]) -> Original | None:
    """`selected` (the copies' run's selection, the changed cases under the ids they run
    as) run on the original code (`original`, the snapshot) with `graded`'s versions of the
    test files `copies` changed, as the copies' run ran them (`variables`: its plugins; the
    same selection: a test may see what the tests before it left, a counter, a mock's
    calls), the observer recording what each failing comparison compared; None where it
    could not run (a changed file reached through a link, its timeout). What honest code
    does with the changed tests: a changed test that passes there too says nothing of the
    solution (a matcher equal to anything); a test not changed by name that fails there
    shares a changed function (a subclass inheriting a changed method), so its failure in
    the copies' run is no word against the solution; and a changed test fails there as
    honest code fails it."""
    tree = scratch / "original"
    files = original_with(original, {rel: (graded / rel).read_bytes()
                                     for rel in files_of([c.test_id for c in copies])}, tree)
    if not files:
        return None
    audit = scratch / "original-audit"
    audit.mkdir()
    for listed in ("solution.txt", "protected.txt"):  # (the observer reads both: none here)
        (audit / listed).write_text("")
    key = new_key(audit)
    # (not the canaries' own test module, which the original tree does not hold)
    present = [t for t in selected if (tree / t.split("::", 1)[0]).is_file()]
    run = run_tests(runner.env, tree, runner.sandbox, timeout=runner.timeout, select=present,
                    extra_env={**variables, "TASKFORGE_INTEGRITY": str(audit)},
                    writable=(audit,))
    if run.timed_out:
        return None
    # (the original code is trusted: what its channel holds is read as far as it goes)
    return Original(dict(run.outcomes), read_channel(audit, key).compared)


def fails_as_honest_code_does(copy: Copy, compared: list | None) -> bool:
    """Whether the changed test's failing comparison (`compared`, as the observer recorded
    it) set the value its literal had against the one it has now, as honest code does: it
    passed the test, so what it computes equals the value before (`Copy.was`). False where
    that cannot be told from the plain values (no comparison, a value without one): the
    original code decides (`agrees_with_the_original`)."""
    if copy.two_valued:
        return _raised_in(copy, compared)
    values = [_plain_value(side) for side in compared or ()]
    try:
        was, now = ast.literal_eval(copy.was), ast.literal_eval(copy.now)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    if len(values) != 2 or any(v is _MISSING for v in values):
        return False
    first, second = values
    return (_equal(first, was) and _equal(second, now)) or \
        (_equal(first, now) and _equal(second, was))


def agrees_with_the_original(solution: list | None, original: list | None) -> bool:
    """Whether two recorded failing comparisons (`fails_as_honest_code_does`) compared the
    same: side by side, equal plain values, else the same repr. Neither compared anything
    (the project's assertions are not rewritten, `--assert=plain`): nothing to tell them
    apart by, agreed."""
    if solution is None or original is None:
        return solution is None and original is None
    if RAISED_AT in (solution[:1], original[:1]):
        return solution == original
    if len(solution) != 2 or len(original) != 2:
        return False
    for mine, theirs in zip(solution, original, strict=True):
        plain = _plain_value(mine), _plain_value(theirs)
        if all(v is not _MISSING for v in plain):
            if not _equal(*plain):
                return False
        elif not _shown(mine) or _shown(mine) != _shown(theirs):
            return False
    return True


_MISSING = object()
RAISED_AT = ["raised at"]  # the observer's record of an assertion's own failure


def _raised_in(copy: Copy, compared: list | None) -> bool:
    """Whether the observer recorded the copy's failure as raised by the test function's
    own code within the changed assertion's lines: honest code that passed an assertion
    fails its opposite right there. (A stub that read the assertion can fail it there too;
    a two-valued copy's limit, the module's docstring.)"""
    if copy.lines is None or not isinstance(compared, list) or len(compared) != 3 \
            or compared[:1] != RAISED_AT or not isinstance(compared[2], int):
        return False
    return compared[1] == copy.test_id.split("::", 1)[0] \
        and copy.lines[0] <= compared[2] <= copy.lines[1]


def _plain_value(side: object) -> object:
    """The plain value of one recorded side (`[plain repr, repr]`), _MISSING where none."""
    if not isinstance(side, list) or len(side) != 2 or not isinstance(side[0], str):
        return _MISSING
    try:
        value = ast.literal_eval(side[0])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING
    return value if _plain_all_through(value) else _MISSING


def _plain_all_through(value: object, inside: bool = False) -> bool:
    """A str, bytes, int or float, or a list, tuple, dict or set of them, of None and of
    those (what the observer's `_plain_container` reads)."""
    if isinstance(value, str | bytes | int | float) or (inside and value is None):
        return True
    if isinstance(value, dict):
        return all(_plain_all_through(v, True) for pair in value.items() for v in pair)
    return isinstance(value, list | tuple | set) \
        and all(_plain_all_through(v, True) for v in value)


def _shown(side: object) -> str | None:
    return side[1] if isinstance(side, list) and len(side) == 2 \
        and isinstance(side[1], str) else None


def _equal(value: object, literal: object) -> bool:
    """`==` as the test's assertion reads it, never across str and bytes."""
    return isinstance(value, bytes) == isinstance(literal, bytes) and value == literal


def _function_of(test_id: str) -> _Function | None:
    """The test file and the names down to the function of a node id (`tests/t.py::C::f[x]`
    -> `("tests/t.py", ("C", "f"))`); None for what is not a function of a test file."""
    path, _, rest = test_id.partition("::")
    head = rest.partition("[")[0]  # (a parameter id may hold `::`)
    if not head or not path.endswith(".py") or not is_test_file(path):
        return None
    return path, tuple(head.split("::"))


def _changes(source: bytes, tree: ast.Module, path: str, names: tuple[str, ...],
             ids: list[str], failing: set[str], rng: random.Random,
             fixture_arguments: frozenset[str]) -> tuple[list[Copy], list[_Span]] | None:
    """The tests of the function `names` that change and the edits that change them; None
    where it does not qualify (the module's docstring). `ids`: its ids in the grading's
    selection; `fixture_arguments`: the arguments fixtures the module sees take."""
    found = _function(tree, names)
    if found is None:
        return None
    function, owners = found
    if _leaves_early(function) or any("xfail" in ast.unparse(d) for d in function.decorator_list):
        return None
    starts = _line_starts(source)
    made = _value_changes(source, starts, function, path, names, ids, failing, rng,
                          fixture_arguments)
    if made is not None:
        return made
    flip = _flipped(source, starts, function.body[-1], _defined_in(owners))
    if flip is None:
        return None
    span, was, now = flip
    last = function.body[-1]
    lines = (last.lineno, last.end_lineno or last.lineno)
    return [Copy(test_id, was, now, two_valued=True, lines=lines) for test_id in ids], [span]


def _value_changes(source: bytes, starts: list[int],
                   function: ast.FunctionDef | ast.AsyncFunctionDef, path: str,
                   names: tuple[str, ...], ids: list[str], failing: set[str],
                   rng: random.Random, fixture_arguments: frozenset[str]
                   ) -> tuple[list[Copy], list[_Span]] | None:
    """`_changes` where the last assertion's expected value changes: a literal, or a
    `parametrize` argument's cases."""
    expected = _expected(function)
    if expected is not None and _literal(expected):
        span = _changed_span(source, starts, expected, rng)
        if span is None:
            return None
        was = source[span[0]:span[1]].decode("utf-8", "replace")
        return [Copy(test_id, was, span[2].decode()) for test_id in ids], [span]
    if not isinstance(expected, ast.Name) or expected.id in fixture_arguments \
            or not _only_expected(function, expected.id):
        return None
    cases = _named_cases(function, expected.id)
    if cases is None:
        return None
    stem = "::".join((path, *names))
    argnames, cases = cases
    position = argnames.index(expected.id)
    ids_made = [case_id if case_id is not None else _made_id(values, argnames, n)
                for n, (case_id, values, _marked) in enumerate(cases)]
    # ids a renamed case may not take: pytest would number both, and a test not changed
    # would run under another id
    taken = set(ids) | {f"{stem}[{made}]" for made in ids_made if made is not None}
    usable = []
    for n, ((case_id, values, marked), made) in enumerate(zip(cases, ids_made, strict=True)):
        test_id = f"{stem}[{made}]"
        # Its id foreseen and in the selection: no other parametrization adds to it (a
        # class's, a fixture's) and pytest numbered no repeat of it.
        if marked or values is None or made is None or test_id not in failing:
            continue
        span = _changed_span(source, starts, values[position], rng)
        if span is None:
            continue
        if case_id is not None:  # its id written out: the same id
            usable.append((test_id, None, span))
            continue
        now = ast.literal_eval(span[2].decode())
        renamed = _made_id([*values[:position], ast.Constant(now), *values[position + 1:]],
                           argnames, n)
        if renamed == made:  # (a list's id is its argument's name and its index: the same)
            usable.append((test_id, None, span))
        elif renamed is not None and f"{stem}[{renamed}]" not in taken:
            usable.append((test_id, f"{stem}[{renamed}]", span))
    if not usable:
        return None
    chosen = rng.sample(usable, min(COPIED_CASES, len(usable)))
    return [Copy(test_id, source[span[0]:span[1]].decode("utf-8", "replace"), span[2].decode(),
                 runs_as) for test_id, runs_as, span in chosen], [span for *_, span in chosen]


def _named_cases(function: ast.FunctionDef | ast.AsyncFunctionDef, argument: str) \
        -> tuple[list[str], list[tuple[str | None, list[ast.expr] | None, bool]]] | None:
    """The argument names of the function's one `parametrize` decorator naming `argument`,
    and its cases, in order: each case's written id (None where pytest makes it
    from the values), its values (None where not written out) and whether it has marks of
    its own. None unless that decorator is the function's one, direct (not `indirect`),
    its cases a list written out and its ids, if given, a list."""
    calls = [d for d in function.decorator_list if isinstance(d, ast.Call)
             and isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize"]
    if len(calls) != 1 or len(calls[0].args) != 2 \
            or any(k.arg == "indirect" for k in calls[0].keywords):
        return None
    argnames, argvalues = calls[0].args
    if isinstance(argnames, ast.Constant) and isinstance(argnames.value, str):
        names = [n.strip() for n in argnames.value.split(",") if n.strip()]
    elif isinstance(argnames, ast.List | ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in argnames.elts):
        names = [e.value for e in argnames.elts]
    else:
        return None
    if argument not in names or not isinstance(argvalues, ast.List | ast.Tuple):
        return None
    listed = next((k.value for k in calls[0].keywords if k.arg == "ids"), None)
    written: list[ast.expr | None] = [None] * len(argvalues.elts)
    if listed is not None:
        if not isinstance(listed, ast.List | ast.Tuple) or len(listed.elts) != len(written):
            return None  # (a function making the ids)
        written = list(listed.elts)
    cases = []
    for case, given in zip(argvalues.elts, written, strict=True):
        marked = False
        if isinstance(case, ast.Call) and ast.unparse(case.func).endswith("param"):
            keywords = {k.arg: k.value for k in case.keywords}
            given = keywords.get("id", given)
            marked = "marks" in keywords or None in keywords
            values: list[ast.expr] | None = list(case.args)
        else:
            values = [case] if len(names) == 1 else \
                list(case.elts) if isinstance(case, ast.Tuple | ast.List) else None
        if given is not None and not (isinstance(given, ast.Constant) and (
                given.value is None or _plain(given.value))):
            return None  # an id pytest would escape, or one made as the module runs
        case_id = given.value if isinstance(given, ast.Constant) else None
        cases.append((case_id, values if values is not None and len(values) == len(names)
                      else None, marked))
    return names, cases


def _made_id(values: list[ast.expr] | None, names: list[str], index: int) -> str | None:
    """The id pytest makes from the values of the case at `index` of a `parametrize` naming
    `names`: a literal it writes as it is (printable ASCII strings and bytes without a
    backslash, numbers, booleans, None) as itself, a literal container by its argument's
    name and the case's index (`args0`); None where it cannot be foreseen (a name, a call)."""
    if values is None:
        return None
    parts = []
    for value, name in zip(values, names, strict=True):
        try:
            constant = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(constant, str | bytes):
            if not _plain(constant):
                return None
            parts.append(constant.decode() if isinstance(constant, bytes) else constant)
        elif constant is None or isinstance(constant, int | float):
            parts.append(str(constant))
        elif isinstance(constant, list | tuple | dict | set):
            parts.append(f"{name}{index}")
        else:
            return None
    return "-".join(parts)


def _plain(text: object) -> bool:
    """Printable ASCII without a backslash: what pytest puts in an id as it is."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    return isinstance(text, str) and text.isascii() and text.isprintable() and "\\" not in text


def _changed_span(source: bytes, starts: list[int], node: ast.expr,
                  rng: random.Random) -> _Span | None:
    """The edit that gives the literal `node` another value of its type, spelled as it is
    (its quotes and prefix kept: a literal in other quotes than its file's is a tell): a
    constant changed (`_changed`), or in a list, tuple, dict or set (`_literal`) one of
    its str, bytes, int or float constants, where that changes the whole value (a set's
    `{1, 1, 2}` may not); the span is the whole literal's. None where it has none."""
    span = _bytes_of(starts, node)
    if span is None or not _literal(node):
        return None
    start, end = span
    if isinstance(node, ast.Constant):
        changed = _changed(source[start:end].decode("utf-8"), node.value, rng)
        return (start, end, changed.encode()) if changed is not None else None
    leaves = [leaf for leaf in ast.walk(node) if isinstance(leaf, ast.Constant)
              and type(leaf.value) in (str, bytes, int, float)]  # (not a bool: `_changed`)
    was = ast.literal_eval(node)
    for leaf in rng.sample(leaves, len(leaves)):
        inner = _changed_span(source, starts, leaf, rng)
        if inner is None:
            continue
        text = source[start:inner[0]] + inner[2] + source[inner[1]:end]
        try:
            now = ast.literal_eval(text.decode("utf-8"))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if type(now) is type(was) and now != was:
            return start, end, text
    return None


def _bytes_of(starts: list[int], node: ast.expr) -> tuple[int, int] | None:
    """The byte span of `node` in its file (ast's columns are UTF-8 bytes of their line)."""
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    return (starts[node.lineno - 1] + node.col_offset,
            starts[node.end_lineno - 1] + node.end_col_offset)


def _line_starts(source: bytes) -> list[int]:
    """The byte offset of each line, as ast numbers them (`\\n`, `\\r\\n` and `\\r` end one)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _only_expected(function: ast.FunctionDef | ast.AsyncFunctionDef, argument: str) -> bool:
    """Whether the body names `argument` once (in the last assertion), names no `locals` or
    `vars`, and holds no string spelling it (`request.getfixturevalue("expected")`)."""
    nodes = [node for statement in function.body for node in ast.walk(statement)]
    return sum(isinstance(n, ast.Name) and n.id == argument for n in nodes) == 1 and not any(
        (isinstance(n, ast.Name) and n.id in ("locals", "vars"))
        or (isinstance(n, ast.Constant) and n.value == argument) for n in nodes)


def fixture_arguments(tree: ast.Module) -> frozenset[str]:
    """The arguments of the module's fixtures (any function a `fixture` decorates): a
    `parametrize` argument one of them takes reaches the test through it too."""
    return frozenset(
        arg.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any("fixture" in ast.unparse(d) for d in node.decorator_list)
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs))


def _conftest_fixtures(copy: Path, rel: str) -> frozenset[str]:
    """The fixture arguments of the conftest files in the directories from `rel`'s up to the
    copy's root (those pytest loads for it)."""
    found: set[str] = set()
    for directory in Path(rel).parents:
        conftest = (directory / "conftest.py").as_posix()
        parsed = _parsed(copy, conftest)
        if parsed is not None:
            found |= fixture_arguments(parsed[1])
    return frozenset(found)


def _parsed(copy: Path, rel: str) -> tuple[bytes, ast.Module] | None:
    path = copy / rel
    if not path.is_file() or linked(copy, rel):
        return None  # never through a link: the grader writes outside the sandbox
    source = path.read_bytes()
    try:
        # Offsets are UTF-8 bytes of the file as it is: a file declaring another encoding
        # (`# coding: shift_jis`) or starting with a byte order mark gets none.
        if source.startswith(b"\xef\xbb\xbf") \
                or tokenize.detect_encoding(io.BytesIO(source).readline)[0] != "utf-8":
            return None
        return source, ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _function(tree: ast.Module, names: tuple[str, ...]) \
        -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.ClassDef]] | None:
    """The test function `names` defined in the module's body (through its classes' bodies),
    and those classes, outermost first; None where it is defined otherwise (inherited,
    made)."""
    body: list[ast.stmt] = tree.body
    owners: list[ast.ClassDef] = []
    for owner in names[:-1]:
        classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == owner]
        if len(classes) != 1:
            return None
        owners.append(classes[0])
        body = classes[0].body
    functions = [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                 and n.name == names[-1]]
    return (functions[0], owners) if len(functions) == 1 else None


def _expected(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """What the function's last statement asserts its result equals: the one literal side
    (an `ast.Constant`), else the one name (a `parametrize` argument, `_drawn_cases` checks)
    where the other side is neither."""
    last = function.body[-1]
    sides: list[ast.expr] = []
    if isinstance(last, ast.Assert) and isinstance(last.test, ast.Compare) \
            and len(last.test.ops) == 1 and isinstance(last.test.ops[0], ast.Eq):
        sides = [last.test.left, last.test.comparators[0]]
    elif isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
            and isinstance(last.value.func, ast.Attribute) \
            and last.value.func.attr in ASSERT_EQUAL and len(last.value.args) == 2:
        sides = list(last.value.args)
    constants = [s for s in sides if _literal(s)]
    if len(constants) == 1:
        return constants[0]
    names = [s for s in sides if isinstance(s, ast.Name)]
    return names[0] if len(names) == 1 and not constants else None


def _literal(node: ast.expr) -> bool:
    """A constant, or a literal `ast.literal_eval` reads (a list, tuple, dict or set of
    them, a negative number); not a name, a call, `set()`."""
    if isinstance(node, ast.Constant):
        return True
    if not isinstance(node, ast.List | ast.Tuple | ast.Dict | ast.Set | ast.UnaryOp):
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


_STRING = re.compile(r"""([rRbBuU]{0,2})('\'\'|\"\"\"|'|")(.*)\2""", re.DOTALL)


def _changed(text: str, value: object, rng: random.Random) -> str | None:
    """`text`, the source of a literal of `value`, changed to another value of its type
    that looks like one (`changed_characters`, `changed_digits`), spelled as it was (its
    quotes and prefix kept); None for any other literal (a bool, whose one other value is
    what a result may well be; `1_000`, `0x10`, `1e3`)."""
    changed: str | None = None
    string_literal = _STRING.fullmatch(text) if isinstance(value, str | bytes) else None
    prefix, quotes, body = string_literal.groups() if string_literal else ("", "", "\\")
    if "\\" not in body and quotes not in body:  # one literal, each character itself
        changed = prefix + quotes + changed_characters(body, rng) + quotes
    elif isinstance(value, str | bytes) and text[-1:] in ("'", '"'):
        # escapes, or literals side by side ("a" "b"): letters before the closing quotes
        quotes = 3 if text.endswith(text[-1] * 3) and len(text) >= 6 else 1
        changed = text[:-quotes] + changed_characters("", rng) + text[-quotes:]
    elif isinstance(value, int | float) and not isinstance(value, bool) \
            and DECIMAL.fullmatch(text):
        changed = changed_digits(text, rng)
    if changed is None:
        return None
    try:  # the value it spells now: of the same type, another
        now = ast.literal_eval(changed)
    except (SyntaxError, ValueError):
        return None
    return changed if type(now) is type(value) and now != value else None


def _own_nodes(function: ast.AST):
    """The nodes of `function`'s body, not those of functions or classes defined in it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                          | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))


def _leaves_early(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A `return` or `yield` before the end: the changed assertion might not run."""
    return any(isinstance(node, ast.Return | ast.Yield | ast.YieldFrom)
               for node in _own_nodes(function))


# The assertions a copy turns into their opposite (`_flipped`): unittest's methods, and the
# operators of a comparison, each way.
_OPPOSITE_METHODS = {"assertTrue": "assertFalse", "assertIn": "assertNotIn",
                     "assertIs": "assertIsNot", "assertIsNone": "assertIsNotNone"}
_OPPOSITE_METHODS |= {b: a for a, b in _OPPOSITE_METHODS.items()}
_OPPOSITE_OPERATORS = {ast.In: b"not in", ast.NotIn: b"in", ast.Is: b"is not", ast.IsNot: b"is"}
# What `assert X` may assert for `assert not X` to read as written (`not a and b` would not)
_NEGATABLE = (ast.Call, ast.Name, ast.Attribute, ast.Subscript)
_OPERATOR = re.compile(rb"([\s)]*)(not\s+in|in|is\s+not|is)([\s(]*)")
_NOT = re.compile(rb"not(?:\s+|(?=\())")


def _flipped(source: bytes, starts: list[int], last: ast.stmt,
             defined: frozenset[str]) -> tuple[_Span, str, str] | None:
    """The edit that turns the test's last assertion into its opposite, written as such
    assertions are (`assert X` / `assert not X`, `in` / `not in`, `is` / `is not`, `is True`
    / `is False`, `== True` / `== False`, `self.assertTrue` / `self.assertFalse`, and unittest's
    `assertIn`, `assertIs`, `assertIsNone` and their `Not` forms), and the two forms' texts;
    None for any other statement, or a method the test's classes in the file define.
    Honest code passed the assertion, so it fails the opposite: a two-valued copy (`Copy`)."""
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        function = last.value.func
        if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)
                and function.value.id == "self" and function.attr in _OPPOSITE_METHODS):
            return None
        other = _OPPOSITE_METHODS[function.attr]
        span = _bytes_of(starts, function)
        if span is None or {function.attr, other} & defined \
                or source[span[1] - len(function.attr):span[1]] != function.attr.encode():
            return None
        return (span[1] - len(function.attr), span[1], other.encode()), function.attr, other
    if not isinstance(last, ast.Assert):
        return None
    test = last.test
    span = _bytes_of(starts, test)
    if span is None:
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
            and isinstance(test.operand, _NEGATABLE):
        written = _NOT.match(source, span[0])
        return ((span[0], written.end(), b""), "assert not", "assert") if written else None
    if isinstance(test, _NEGATABLE):
        return (span[0], span[0], b"not "), "assert", "assert not"
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    sides = [test.left, test.comparators[0]]
    booleans = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, bool)]
    if len(booleans) == 1 and isinstance(test.ops[0], ast.Is | ast.Eq):  # `is False`, not `is not True`
        where = _bytes_of(starts, booleans[0])
        was = str(booleans[0].value)
        if where is None or source[where[0]:where[1]] != was.encode():
            return None
        now = str(not booleans[0].value)
        return (*where, now.encode()), was, now
    opposite = _OPPOSITE_OPERATORS.get(type(test.ops[0]))
    left, right = _bytes_of(starts, test.left), _bytes_of(starts, test.comparators[0])
    if opposite is None or left is None or right is None:
        return None
    written = _OPERATOR.fullmatch(source, left[1], right[0])
    if written is None:
        return None
    start, end = written.span(2)
    return (start, end, opposite), source[start:end].decode(), opposite.decode()


def _defined_in(classes: list[ast.ClassDef]) -> frozenset[str]:
    """The names `classes` define in their bodies (functions, plain assignments)."""
    defined: set[str] = set()
    for node in (n for cls in classes for n in cls.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(defined)

"""Expectation canaries: copies of FAIL_TO_PASS tests with the expected value changed.

A stub that answers with whatever the calling test expects (it learns which test runs from
`PYTEST_CURRENT_TEST`, finds the test's function in `sys.modules` and reads the value its
assertion compares with from the source, the code's constants or the marks) passes every test
without computing anything, and no frame needs to be taken for it. An honest solution fails a
copy of such a test whose expected literal was changed; that stub reads the changed literal
from the copy and passes it. So the grader plants, for a few FAIL_TO_PASS test functions
drawn afresh for every grading, a copy under a new name (built like the canaries' names), and
a copy reported passed disqualifies.

A copy is planted only where honest code is certain to fail it:
- the test's last statement is `assert ACTUAL == LITERAL` (either side) or
  `self.assertEqual(ACTUAL, LITERAL)`, LITERAL a str, bytes, int, finite float or bool
  constant, changed to another value of its type (a suffix of six random letters, a random
  offset). When the original passes, every statement before it ran without raising and
  ACTUAL equals LITERAL, so the copy's assertion, which runs too, compares a value equal to
  LITERAL with another: false unless ACTUAL's `==` says yes to anything. Where the original
  fails, ACTUAL would have to equal the random value;
- or the expected side is a `parametrize` argument (`assert f(x) == expected`): the copy then
  has cases of its own, up to COPIED_CASES of the original's whose expected value is written
  as such a literal, that value changed, each under a random id (`pytest.param(..., id=)`),
  in the one `parametrize` decorator of the function (not `indirect`), the argument used
  nowhere else in the body and taken by no fixture (a round trip, `assert str(parse(s)) ==
  s`, passes with any `s`). A stub reading the marks or the source of the copy reads the
  changed values;
- nothing can leave the function earlier (`return`, `yield`), it declares no `global` or
  `nonlocal` name (a later test may close what it keeps there), and no mark expects it to
  fail (`xfail`, under which the copy's failure is reported as skipped);
- a method's copy is defined at the module's level and set on its class: only where nothing
  evaluated then (decorators, defaults, annotations) names something other than the module's
  own names or builtins, and its body uses no `super()`, `__class__` or private name, which
  mean the class's inside it.
These rules leave out what honest code might pass; what they miss is caught after the run: a
copy reported passed is run again on the original code (the snapshot, with the same test
file), and only one that does not pass there is a finding (`passing_on_the_original`). A
matcher library's own tests (`assert "foobar" == IsStr(regex="foo.*")`) pass their copies
with any code; a stub's answer read from the test passes them only where it is graded.

The changed assertion is the test's last statement, so failing it skips nothing the test does;
and the copies run after every other test (`run_tests(last=...)`), so what a failing copy
leaves behind reaches no test of the task. A copy's definition sits in a `try`: where it
raises, the copy is not defined, not run, and reported as not passed, which is no finding.

What stays unseen: a stub that tells the copy from the original (the copy sits at the end of
the file, after the original, in a `try`) and answers only the original.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import math
import random
import re
import secrets
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taskforge.languages.base import Runner
from taskforge.languages.grading_copy import linked, original_with, suffix
from taskforge.languages.python.files import is_test_file
from taskforge.languages.python.grading.canaries import Canary, name_prefix, name_words
from taskforge.languages.python.testing.runner import files_of, run_tests

COPIED_FUNCTIONS = 3  # FAIL_TO_PASS test functions copied, at most
COPIED_CASES = 2  # of a parametrized one, the cases selected, at most
ASSERT_EQUAL = frozenset({"assertEqual", "assertEquals"})


def plant_expectation_copies(copy: Path, fail_to_pass: list[str],
                             rng: random.Random | None = None, *,
                             limit: int = COPIED_FUNCTIONS) -> list[Canary]:
    """Append to the test files of `copy` copies of up to `limit` of the `fail_to_pass` test
    functions with their expected value changed; return them (`Canary.copy_of` set), nothing
    where no test qualifies."""
    rng = rng or secrets.SystemRandom()
    cases: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for test_id in sorted(set(fail_to_pass)):
        path, _, rest = test_id.partition("::")
        if rest and path.endswith(".py") and is_test_file(path):
            *classes, last = rest.split("::")
            function, bracket, params = last.partition("[")
            cases.setdefault((path, (*classes, function)), []).append(bracket + params)
    parsed: dict[str, tuple[bytes, ast.Module] | None] = {}
    blocks: dict[str, list[str]] = {}
    planted: list[Canary] = []
    for path, names in rng.sample(sorted(cases), len(cases)):
        if sum(map(len, blocks.values())) >= limit:
            break
        if path not in parsed:
            parsed[path] = _parsed(copy, path)
        if parsed[path] is None:
            continue
        source, tree = parsed[path]
        vocabulary = name_words(source, path)
        name = f"{name_prefix(['::'.join((path, *names))])}" \
            f"{'_'.join(rng.sample(vocabulary, min(2, len(vocabulary))))}_{suffix(rng)}"
        made = copy_block(source, tree, names, name, rng, _conftest_fixtures(copy, path))
        if made is None:
            continue
        blocks.setdefault(path, []).append(made.source)
        original = "::".join((path, *names))
        new = "::".join((path, *names[:-1], name))
        if made.cases is not None:  # cases of its own, drawn from all of the original's
            planted += [Canary(new + case, "failed", copy_of=original) for case in made.cases]
            continue
        chosen = rng.sample(cases[(path, names)], min(COPIED_CASES, len(cases[(path, names)])))
        planted += [Canary(new + params, "failed", copy_of=original + params)
                    for params in sorted(chosen)]
    for path, added in blocks.items():
        source = (copy / path).read_bytes()
        separator = b"" if source.endswith(b"\n") or not source else b"\n"
        combined = source + separator + "".join(added).encode()
        try:
            ast.parse(combined)
        except (SyntaxError, ValueError):  # the file as a whole would not import: none here
            planted = [c for c in planted if c.node_id.split("::", 1)[0] != path]
            continue
        (copy / path).write_bytes(combined)
    return planted


@dataclass(frozen=True)
class Copy:
    source: str  # appended to the module
    # The copy's parameter ids (`[k3x9ab]`) where it draws its own cases (the expected value
    # a `parametrize` argument); None where it has the original's parameters.
    cases: tuple[str, ...] | None = None


def passing_on_the_original(copies: list[Canary], graded: Path, original: Path,
                            runner: Runner, scratch: Path,
                            variables: Mapping[str, str], selected: list[str]) -> set[str]:
    """Of `copies`, reported passed in the grading copy `graded`, the node ids that pass on
    the original code too (`original`, the snapshot, with `graded`'s versions of their test
    files), run as the grading run was (`variables`: its plugins; `selected`: its selection,
    the copies last: a copy may see what the tests before it left, a counter, a mock's
    calls): no evidence against the solution, whose code this run does not hold."""
    if not copies:
        return set()
    tree = scratch / "original"
    files = original_with(original, graded, files_of([c.node_id for c in copies]), tree)
    again = [c.node_id for c in copies if c.node_id.split("::", 1)[0] in files]
    if not again:
        return set()
    # (not the canaries' own test files, which the original tree does not hold)
    present = {t for t in selected if (tree / t.split("::", 1)[0]).is_file()}
    run = run_tests(runner.env, tree, runner.sandbox, timeout=runner.timeout,
                    select=sorted({*present, *again}), extra_env=variables, last=again)
    return {test_id for test_id in again if run.outcomes.get(test_id) == "passed"}


def copy_block(source: bytes, tree: ast.Module, names: tuple[str, ...], name: str,
               rng: random.Random, conftest_fixtures: frozenset[str] = frozenset()) \
        -> Copy | None:
    """The source that defines, at the end of the module, a copy of the test `names` (its
    classes, then the function) named `name`, the value its last assertion expects changed;
    None where the test does not qualify (the module's docstring). `conftest_fixtures`: the
    arguments of the fixtures of the conftest files the module sees."""
    found = _function(tree, names)
    if found is None:
        return None
    function, in_class = found
    if _leaves_early(function) or any("xfail" in ast.unparse(d) for d in function.decorator_list):
        return None
    if in_class and not _movable(function, _module_names(tree)):
        return None
    if _decorated_by_the_module(function, tree):
        return None
    if not in_class and any(isinstance(n, ast.Constant) and isinstance(n.value, str | bytes)
                            and n.end_lineno != n.lineno for n in ast.walk(function)):
        return None  # indented under `try`, its text would change (and a parameter's id)
    first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    segment = source.splitlines(keepends=True)[first - 1:function.end_lineno]
    definition = re.search(rb"\bdef\s+" + re.escape(function.name.encode()) + rb"\b",
                           segment[function.lineno - first])
    if definition is None:
        return None
    # (line, column, end line, end column, new text), lines of the file, columns of UTF-8
    # bytes as ast gives them.
    edits = [(function.lineno, definition.start(), function.lineno, definition.end(),
              b"def " + name.encode())]
    cases: tuple[str, ...] | None = None
    expected = _expected(function)
    if isinstance(expected, ast.Constant):
        changed = _changed(expected.value, rng)
        if changed is None:
            return None
        edits.append((expected.lineno, expected.col_offset, expected.end_lineno,
                      expected.end_col_offset, repr(changed).encode()))
    elif isinstance(expected, ast.Name):
        drawn = _drawn_cases(source, function, expected.id, rng,
                             conftest_fixtures | fixture_arguments(tree))
        if drawn is None:
            return None
        decorator, text, cases = drawn
        edits.append((decorator.lineno, decorator.col_offset, decorator.end_lineno,
                      decorator.end_col_offset, text.encode()))
    else:
        return None
    # From the last edit up: each leaves the places of those before it as they were.
    for line, column, end_line, end_column, text in sorted(edits, reverse=True):
        start, stop = line - first, end_line - first
        segment[start:stop + 1] = [segment[start][:column] + text + segment[stop][end_column:]]
    text = b"".join(segment).decode("utf-8", "replace")
    if not text.endswith("\n"):
        text += "\n"
    if in_class:
        # Defined under its own name, set on its class, and gone from the module before
        # pytest collects it; named as a method of its class would be.
        indent = re.match(r"[ \t]*", text).group(0)
        owner = ".".join(names[:-1])
        body = (f"{text}{indent}{owner}.{name} = {name}\n{indent}del {name}\n"
                f"{indent}{owner}.{name}.__qualname__ = {f'{owner}.{name}'!r}\n")
    else:
        body = "".join("    " + line for line in text.splitlines(keepends=True))
    block = f"\n\ntry:\n{body}except BaseException:\n    pass\n"
    try:
        ast.parse(block)
    except (SyntaxError, ValueError):
        return None
    return Copy(block, cases)


def _drawn_cases(source: bytes, function: ast.FunctionDef | ast.AsyncFunctionDef,
                 argument: str, rng: random.Random, fixture_arguments: frozenset[str]) \
        -> tuple[ast.Call, str, tuple[str, ...]] | None:
    """Where the expected value is `argument`, a `parametrize` argument: the function's one
    `parametrize` decorator, its source with up to COPIED_CASES of its cases whose expected
    value is a literal, that value changed, each named by an id of its own; and those ids.
    None unless the function has exactly that one decorator naming it, direct (no `indirect`),
    its cases written out, and the argument is the expected value alone: used nowhere else in
    the body (a round trip, `assert str(parse(s)) == s`, would pass with any value), and no
    fixture takes it (`fixture_arguments`)."""
    calls = [d for d in function.decorator_list if isinstance(d, ast.Call)
             and isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize"]
    if len(calls) != 1 or len(calls[0].args) < 2 or not _only_expected(function, argument) \
            or argument in fixture_arguments:
        return None
    call = calls[0]
    argnames, argvalues = call.args[0], call.args[1]
    if isinstance(argnames, ast.Constant) and isinstance(argnames.value, str):
        names = [n.strip() for n in argnames.value.split(",") if n.strip()]
    elif isinstance(argnames, ast.List | ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in argnames.elts):
        names = [e.value for e in argnames.elts]
    else:
        return None
    if argument not in names or any(k.arg == "indirect" for k in call.keywords) \
            or len(call.args) > 2 or not isinstance(argvalues, ast.List | ast.Tuple):
        return None
    text = source.decode("utf-8", "replace")
    segment = functools.partial(ast.get_source_segment, text)
    position = names.index(argument)
    usable = []
    for case in argvalues.elts:
        values = [case] if len(names) == 1 else \
            case.elts if isinstance(case, ast.Tuple | ast.List) and len(case.elts) == len(names) \
            else None
        if values is None or not isinstance(values[position], ast.Constant):
            continue
        changed = _changed(values[position].value, rng)
        if changed is not None:
            usable.append([*map(segment, values[:position]), repr(changed),
                           *map(segment, values[position + 1:])])
    if not usable or any(None in values for values in usable):
        return None
    chosen = rng.sample(usable, min(COPIED_CASES, len(usable)))
    ids = tuple(suffix(rng) for _ in chosen)
    called = segment(call.func)
    if not called.endswith("mark.parametrize"):
        return None
    # `pytest.mark.parametrize` -> `pytest.param`; a bare `mark` (`from pytest import mark`)
    # names no module to take `param` from.
    param = called.removesuffix("mark.parametrize") + "param" \
        if called != "mark.parametrize" else '__import__("pytest").param'
    cases = ", ".join(f"{param}({', '.join(values)}, id={case_id!r})"
                      for values, case_id in zip(chosen, ids, strict=True))
    keywords = "".join(f", {segment(k)}" for k in call.keywords if k.arg != "ids")
    return call, f"{called}({segment(argnames)}, [{cases}]{keywords})", \
        tuple(f"[{case_id}]" for case_id in ids)


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


def _decorated_by_the_module(function: ast.FunctionDef | ast.AsyncFunctionDef,
                             tree: ast.Module) -> bool:
    """Whether a decorator of the function is the test module's own (defined there, not
    imported): it runs again for the copy, and may record each function it decorates, which
    a test of the task may count."""
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef
                                                   | ast.ClassDef)} | {
        t.id for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)
        for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    for decorator in function.decorator_list:
        root = decorator.func if isinstance(decorator, ast.Call) else decorator
        while isinstance(root, ast.Attribute | ast.Call):
            root = root.value if isinstance(root, ast.Attribute) else root.func
        if isinstance(root, ast.Name) and root.id in own:
            return True
    return False


def _parsed(copy: Path, rel: str) -> tuple[bytes, ast.Module] | None:
    path = copy / rel
    if not path.is_file() or linked(copy, rel):
        return None  # never through a link: the grader writes outside the sandbox
    source = path.read_bytes()
    try:
        # Offsets and the appended copies are UTF-8: a file declaring another encoding
        # (`# coding: shift_jis`) gets none.
        if tokenize.detect_encoding(io.BytesIO(source).readline)[0] not in ("utf-8", "utf-8-sig"):
            return None
        return source, ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _function(tree: ast.Module, names: tuple[str, ...]) \
        -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool] | None:
    """The test function `names` defined in the module's body (through its classes' bodies),
    and whether it is a method; None where it is defined otherwise (inherited, made)."""
    body: list[ast.stmt] = tree.body
    for owner in names[:-1]:
        classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == owner]
        if len(classes) != 1:
            return None
        body = classes[0].body
    functions = [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                 and n.name == names[-1]]
    return (functions[0], len(names) > 1) if len(functions) == 1 else None


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
    constants = [s for s in sides if isinstance(s, ast.Constant)]
    if len(constants) == 1:
        return constants[0]
    names = [s for s in sides if isinstance(s, ast.Name)]
    return names[0] if len(names) == 1 and not constants else None


def _changed(value: object, rng: random.Random) -> object | None:
    """Another value of the literal's type, never equal to it and not one a result is
    likely to take instead (random); None for any other type, and for a bool."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    if isinstance(value, bool):
        # Its one other value is what a test's result may be when state changed: the copy
        # runs after every other test (a registry's `register(x) == True`, a flag).
        return None
    if isinstance(value, int):
        return value + rng.randrange(1013, 999_983)
    if isinstance(value, float):
        changed = value + max(1.0, abs(value)) * (1.5 + rng.random())
        return changed if math.isfinite(value) and math.isfinite(changed) \
            and changed != value else None
    if isinstance(value, str):
        return value + "".join(rng.choice(letters) for _ in range(6))
    if isinstance(value, bytes):
        return value + "".join(rng.choice(letters) for _ in range(6)).encode()
    return None


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
    """A `return` or `yield` before the end; or a `global` or `nonlocal` name, which a later
    test may close or read (a server the original left there): nothing would after a copy
    that runs last, and a thread it left running keeps the session from ending."""
    return any(isinstance(node, ast.Return | ast.Yield | ast.YieldFrom | ast.Global
                          | ast.Nonlocal)
               for node in _own_nodes(function))


def _movable(function: ast.FunctionDef | ast.AsyncFunctionDef, module_names: set[str]) -> bool:
    """Whether the method means the same defined at the module's level."""
    evaluated = [*function.decorator_list, *function.args.defaults,
                 *(d for d in function.args.kw_defaults if d is not None),
                 *(a.annotation for a in (*function.args.posonlyargs, *function.args.args,
                                          *function.args.kwonlyargs) if a.annotation),
                 *([function.returns] if function.returns else [])]
    known = module_names | set(dir(builtins))
    for expression in evaluated:
        if any(isinstance(n, ast.Name) and n.id not in known for n in ast.walk(expression)):
            return False
    for node in _own_nodes(function):
        name = node.id if isinstance(node, ast.Name) else \
            node.attr if isinstance(node, ast.Attribute) else None
        if name in ("super", "__class__") or (
                name and name.startswith("__") and not name.endswith("__")):
            return False
    return True


def _module_names(tree: ast.Module) -> set[str]:
    """The names the module binds at its own level (not inside its functions or classes)."""
    names: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names

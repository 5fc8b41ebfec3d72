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
  constant. When the original passes, every statement before it ran without raising and
  ACTUAL equals LITERAL, so the copy's assertion, which runs too, compares a value equal to
  LITERAL with another value of its type: false unless ACTUAL's `==` says yes to anything;
- nothing can leave the function earlier (`return`, `yield`), and no mark expects it to fail
  (`xfail`, under which the copy's failure is reported as skipped);
- a method's copy is defined at the module's level and set on its class: only where nothing
  evaluated then (decorators, defaults, annotations) names something other than the module's
  own names or builtins, and its body uses no `super()`, `__class__` or private name, which
  mean the class's inside it.
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
import math
import random
import re
import secrets
from pathlib import Path

from taskforge.languages.python.files import is_test_file
from taskforge.languages.python.grading.canaries import (
    Canary,
    linked,
    name_prefix,
    name_words,
    suffix,
)

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
        block = copy_block(source, tree, names, name, rng)
        if block is None:
            continue
        blocks.setdefault(path, []).append(block)
        original = "::".join((path, *names))
        new = "::".join((path, *names[:-1], name))
        chosen = rng.sample(cases[(path, names)], min(COPIED_CASES, len(cases[(path, names)])))
        planted += [Canary(new + params, "failed", copy_of=original + params)
                    for params in sorted(chosen)]
    for path, added in blocks.items():
        source = (copy / path).read_bytes()
        separator = b"" if source.endswith(b"\n") or not source else b"\n"
        (copy / path).write_bytes(source + separator + "".join(added).encode())
    return planted


def copy_block(source: bytes, tree: ast.Module, names: tuple[str, ...], name: str,
               rng: random.Random) -> str | None:
    """The source that defines, at the end of the module, a copy of the test `names` (its
    classes, then the function) named `name`, its last assertion's literal changed; None
    where the test does not qualify (the module's docstring)."""
    found = _function(tree, names)
    if found is None:
        return None
    function, in_class = found
    literal = _expected_literal(function)
    changed = _changed(literal.value, rng) if literal is not None else None
    if literal is None or changed is None or _leaves_early(function) \
            or any("xfail" in ast.unparse(d) for d in function.decorator_list):
        return None
    if in_class and not _movable(function, _module_names(tree)):
        return None
    lines = source.splitlines(keepends=True)
    first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    segment = lines[first - 1:function.end_lineno]
    # Offsets are of UTF-8 bytes; the literal comes after the name, so it is replaced first.
    at = literal.lineno - first
    last = literal.end_lineno - first
    head, tail = segment[at][:literal.col_offset], segment[last][literal.end_col_offset:]
    segment[at:last + 1] = [head + repr(changed).encode() + tail]
    at = function.lineno - first
    private = f"_{name.lstrip('_')}_copy"
    renamed, count = re.subn(rb"\bdef\s+" + re.escape(function.name.encode()) + rb"\b",
                             b"def " + (private if in_class else name).encode(),
                             segment[at], count=1)
    if not count:
        return None
    segment[at] = renamed
    text = b"".join(segment).decode("utf-8", "replace")
    if not text.endswith("\n"):
        text += "\n"
    if in_class:
        indent = re.match(r"[ \t]*", text).group(0)
        owner = ".".join(names[:-1])
        body = f"{text}{indent}{owner}.{name} = {private}\n{indent}del {private}\n"
    else:
        body = "".join("    " + line for line in text.splitlines(keepends=True))
    block = f"\n\ntry:\n{body}except BaseException:\n    pass\n"
    try:
        ast.parse(block)
    except (SyntaxError, ValueError):
        return None
    return block


def _parsed(copy: Path, rel: str) -> tuple[bytes, ast.Module] | None:
    path = copy / rel
    if not path.is_file() or linked(copy, rel):
        return None  # never through a link: the grader writes outside the sandbox
    source = path.read_bytes()
    try:
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


def _expected_literal(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Constant | None:
    """The literal the function's last statement asserts its result equals, if it is one."""
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
    return constants[0] if len(constants) == 1 else None


def _changed(value: object, rng: random.Random) -> object | None:
    """Another value of the literal's type, never equal to it; None for any other type."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    if isinstance(value, bool):
        return not value
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
    return any(isinstance(node, ast.Return | ast.Yield | ast.YieldFrom)
               for statement in function.body for node in _own_nodes(statement))


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

"""The `stub-function` strategy, codemod style: source before, expected source after.

Each case writes one real module into a project on disk, finds candidates with a Baseline
built by hand (every line covered by one stable test unless a case says otherwise), applies
the candidate and compares the whole file text.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from conftest import make_project
from ray import cloudpickle

from taskforge.languages.python.delete import PythonProject
from taskforge.languages.python.delete.stub_function import StubFunction
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline, Candidate, Deletion

MODULE = "pkg/mod.py"
TEST_ID = "tests/test_mod.py::test_mod"
DEFAULT_SELECT = SelectOptions()
DEFAULT_OPTIONS = TaskOptions()


def make_baseline(source: str, coverage: dict[int, tuple[str, ...]] | None = None,
                  stable: tuple[str, ...] | None = None,
                  flaky: tuple[str, ...] = ()) -> Baseline:
    """A Baseline for MODULE: `coverage` maps line -> test ids (default: TEST_ID runs every line)."""
    if coverage is None:
        coverage = {line: (TEST_ID,) for line in range(1, source.count("\n") + 2)}
    tests = tuple(sorted({t for ids in coverage.values() for t in ids} | set(flaky)))
    index = {t: i for i, t in enumerate(tests)}
    return Baseline(
        key="fake", tests=tests,
        stable=tuple(t for t in tests if t not in flaky) if stable is None else stable,
        flaky=flaky, failing=(), run_seconds=(0.1, 0.1),
        coverage={MODULE: {line: tuple(sorted(index[t] for t in ids))
                           for line, ids in coverage.items()}})


def project_with(tmp_path: Path, source: str) -> PythonProject:
    root = make_project(tmp_path, {"pkg/__init__.py": "", MODULE: source})
    return PythonProject(root, (".",))


def find(tmp_path: Path, before: str, select: SelectOptions = DEFAULT_SELECT,
         baseline: Baseline | None = None) -> dict[str, Candidate]:
    source = dedent(before)
    project = project_with(tmp_path, source)
    found = StubFunction().candidates(project, baseline or make_baseline(source), select)
    return {c.symbol: c for c in found}


def apply(tmp_path: Path, before: str, symbol: str, options: TaskOptions = DEFAULT_OPTIONS,
          select: SelectOptions = DEFAULT_SELECT) -> Deletion:
    source = dedent(before)
    project = project_with(tmp_path, source)
    found = {c.symbol: c for c in StubFunction().candidates(project, make_baseline(source), select)}
    assert symbol in found, f"{symbol} is not a candidate; candidates: {sorted(found)}"
    return StubFunction().apply(project, found[symbol], options)


def stub(tmp_path: Path, before: str, symbol: str, options: TaskOptions = DEFAULT_OPTIONS,
         select: SelectOptions = DEFAULT_SELECT) -> str:
    deletion = apply(tmp_path, before, symbol, options, select)
    assert list(deletion.new_texts) == [MODULE]
    return deletion.new_texts[MODULE]


def test_plain_function(tmp_path: Path) -> None:
    before = """\
        import math


        def area(radius):
            squared = radius * radius
            scaled = math.pi * squared
            return scaled


        UNIT = "m2"
    """
    after = """\
        import math


        def area(radius):
            raise NotImplementedError


        UNIT = "m2"
    """
    deletion = apply(tmp_path, before, "pkg.mod.area")
    assert deletion.new_texts[MODULE] == dedent(after)
    (deleted,) = deletion.deleted
    assert (deleted.path, deleted.symbol, deleted.kind) == (MODULE, "pkg.mod.area", "function")
    assert (deleted.start_line, deleted.end_line) == (4, 7)
    assert deletion.statement_facts["signature"] == "def area(radius):"


def test_candidate_records_position_and_covering_tests(tmp_path: Path) -> None:
    found = find(tmp_path, """\
        def area(radius):
            squared = radius * radius
            scaled = 3.14 * squared
            return scaled
    """)
    assert list(found) == ["pkg.mod.area"]
    c = found["pkg.mod.area"]
    assert (c.strategy, c.path, c.kind) == ("stub-function", MODULE, "function")
    assert (c.start_line, c.end_line, c.body_lines) == (1, 4, 3)
    assert c.covering_tests == (TEST_ID,)
    assert c.import_time is False


def test_method_in_class(tmp_path: Path) -> None:
    before = """\
        class Shape:
            sides = 0

            def perimeter(self, length):
                total = 0
                for _ in range(self.sides):
                    total += length
                return total

            def name(self):
                return "shape"
    """
    after = """\
        class Shape:
            sides = 0

            def perimeter(self, length):
                raise NotImplementedError

            def name(self):
                return "shape"
    """
    deletion = apply(tmp_path, before, "pkg.mod.Shape.perimeter")
    assert deletion.new_texts[MODULE] == dedent(after)
    assert deletion.deleted[0].kind == "method"
    assert deletion.statement_facts["signature"] == "def perimeter(self, length):"


DOCUMENTED = """\
    def greet(name):
        \"\"\"Say hello to `name`.

        Blank names are greeted as "stranger".
        \"\"\"
        who = name.strip() or "stranger"
        text = f"hello, {who}"
        return text
"""


def test_docstring_kept(tmp_path: Path) -> None:
    after = """\
        def greet(name):
            \"\"\"Say hello to `name`.

            Blank names are greeted as "stranger".
            \"\"\"
            raise NotImplementedError
    """
    deletion = apply(tmp_path, DOCUMENTED, "pkg.mod.greet")
    assert deletion.new_texts[MODULE] == dedent(after)
    assert deletion.statement_facts["docstring"].startswith("Say hello to `name`.")


def test_docstring_dropped(tmp_path: Path) -> None:
    after = """\
        def greet(name):
            raise NotImplementedError
    """
    deletion = apply(tmp_path, DOCUMENTED, "pkg.mod.greet", TaskOptions(keep_docstrings=False))
    assert deletion.new_texts[MODULE] == dedent(after)
    assert deletion.statement_facts["docstring"] is None


def test_decorators_and_annotations_preserved_byte_for_byte(tmp_path: Path) -> None:
    header = (
        "import functools\n"
        "from typing import Any\n"
        "\n"
        "\n"
        "@functools.lru_cache(maxsize=None)   # memoized\n"
        "@  functools.wraps(print)\n"
        "def tally(values: 'list[int]',   *, start: int=0,\n"
        "          **extra: dict[str, Any]) -> dict[str,   int]:  # header comment\n"
    )
    body = (
        "    total = start\n"
        "    for v in values:\n"
        "        total += v\n"
        "    return {'total': total}\n"
    )
    after = stub(tmp_path, header + body, "pkg.mod.tally")
    assert after == header + "    raise NotImplementedError\n"
    deletion = apply(tmp_path / "again", header + body, "pkg.mod.tally")
    signature = deletion.statement_facts["signature"]
    assert "@functools.lru_cache(maxsize=None)" in signature
    assert "-> dict[str,   int]:" in signature
    assert "total" not in signature


def test_async_function(tmp_path: Path) -> None:
    before = """\
        import asyncio


        async def double_later(value: int) -> int:
            await asyncio.sleep(0)
            doubled = value * 2
            return doubled
    """
    after = """\
        import asyncio


        async def double_later(value: int) -> int:
            raise NotImplementedError
    """
    assert stub(tmp_path, before, "pkg.mod.double_later") == dedent(after)


def test_one_line_body_is_not_a_candidate_by_default(tmp_path: Path) -> None:
    found = find(tmp_path, """\
        def identity(x): return x


        def shout(text):
            upper = text.upper()
            marked = upper + "!"
            return marked
    """)
    assert list(found) == ["pkg.mod.shout"]


def test_trivial_bodies_are_not_candidates(tmp_path: Path) -> None:
    # min_body_lines=0: only triviality can exclude these.
    found = find(tmp_path, """\
        def only_pass(x):
            pass


        def only_ellipsis(x):
            ...


        def only_raise(x):
            raise NotImplementedError


        def raise_with_message(x):
            \"\"\"Documented, but not written yet.\"\"\"
            raise NotImplementedError("later")


        def mixed_trivia(x):
            pass
            ...
            raise NotImplementedError()


        def real(x):
            y = x + 1
            return y
    """, select=SelectOptions(min_body_lines=0))
    assert list(found) == ["pkg.mod.real"]


def test_overload_and_abstractmethod_are_not_candidates(tmp_path: Path) -> None:
    found = find(tmp_path, """\
        import abc
        import typing
        from abc import abstractmethod
        from typing import overload


        @overload
        def parse(x: int) -> int:
            y = int(x)
            y += 0
            return y


        @typing.overload
        def parse(x: str) -> int:
            y = int(x)
            y += 0
            return y


        def parse(x):
            y = int(x)
            y += 0
            return y


        class Base(abc.ABC):
            @abstractmethod
            def run(self):
                steps = []
                steps.append("run")
                return steps

            @abc.abstractmethod
            def stop(self):
                steps = []
                steps.append("stop")
                return steps

            def describe(self):
                kind = type(self).__name__
                text = f"a {kind}"
                return text
    """)
    assert sorted(found) == ["pkg.mod.Base.describe", "pkg.mod.parse"]
    assert found["pkg.mod.parse"].start_line == 21  # the implementation, not an overload


def test_nested_functions_are_part_of_their_enclosing_function(tmp_path: Path) -> None:
    before = """\
        def make_counter(start):
            count = start

            def step(by=1):
                nonlocal count
                count += by
                return count

            return step
    """
    assert list(find(tmp_path, before)) == ["pkg.mod.make_counter"]
    after = """\
        def make_counter(start):
            raise NotImplementedError
    """
    assert stub(tmp_path / "stub", before, "pkg.mod.make_counter") == dedent(after)


def test_trailing_comments_removed_and_everything_else_unchanged(tmp_path: Path) -> None:
    prefix = (
        "#!/usr/bin/env python\n"
        "# -*- coding: utf-8 -*-\n"
        '"""Module docstring:   odd   spacing kept."""\n'
        "import os, sys  # two imports on one line\n"
        "\n"
        "CONSTANT = {'a':1,   'b' : 2}\n"
        "\n"
        "\n"
        "def before_it(  a,b ):\n"
        "    return a+b\n"
        "\n"
        "\n"
        "def target(path):   # keep this header comment\n"
    )
    body = (
        "    # a leading comment inside the body\n"
        "    name = os.path.basename(path)\n"
        "    stem, _ = os.path.splitext(name)  # trailing comment on a statement\n"
        "    return stem.lower()\n"
        "    # a comment at the end of the body\n"
        "        # and an over-indented one\n"
    )
    suffix = (
        "\n"
        "\n"
        "# a module-level comment after the function\n"
        "def after_it():\n"
        "    return sys.platform\n"
        "\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    print(target(sys.argv[1]))\n"
    )
    after = stub(tmp_path, prefix + body + suffix, "pkg.mod.target")
    assert after == prefix + "    raise NotImplementedError\n" + suffix


IDEMPOTENCE_CASES = {
    "function": ("""\
        def total(values):
            result = 0
            for v in values:
                result += v
            return result
    """, "pkg.mod.total", TaskOptions()),
    "method-docstring-kept": ("""\
        class Box:
            def volume(self, w, h, d):
                \"\"\"w * h * d.\"\"\"
                area = w * h
                vol = area * d
                return vol
    """, "pkg.mod.Box.volume", TaskOptions()),
    "decorated-docstring-dropped": ("""\
        import functools


        @functools.cache
        def fib(n: int) -> int:
            \"\"\"The n-th Fibonacci number.\"\"\"
            if n < 2:
                return n
            return fib(n - 1) + fib(n - 2)
            # trailing comment
    """, "pkg.mod.fib", TaskOptions(keep_docstrings=False)),
}


@pytest.mark.parametrize("case", sorted(IDEMPOTENCE_CASES))
def test_stubbing_twice_gives_the_same_text(tmp_path: Path, case: str) -> None:
    before, symbol, options = IDEMPOTENCE_CASES[case]
    source = dedent(before)
    project = project_with(tmp_path / "first", source)
    (candidate,) = [c for c in StubFunction().candidates(project, make_baseline(source),
                                                         SelectOptions()) if c.symbol == symbol]
    once = StubFunction().apply(project, candidate, options).new_texts[MODULE]
    assert once != source
    stubbed_project = project_with(tmp_path / "second", once)
    twice = StubFunction().apply(stubbed_project, candidate, options).new_texts[MODULE]
    assert twice == once
    # A stubbed function is trivial: it is never offered again.
    assert symbol not in find(tmp_path / "third", once, select=SelectOptions(min_body_lines=0))


COVERAGE_SOURCE = """\
def well_tested(x):
    a = x + 1
    b = a * 2
    return b


def tested_once(x):
    a = x - 1
    b = a * 3
    return b


def untested(x):
    a = x * x
    b = a + 7
    return b
"""
STABLE_A = "tests/test_mod.py::test_a"
STABLE_B = "tests/test_mod.py::test_b"
FLAKY = "tests/test_mod.py::test_flaky"


def coverage_baseline() -> Baseline:
    lines = COVERAGE_SOURCE.splitlines()
    assert lines[0].startswith("def well_tested") and lines[6].startswith("def tested_once")
    assert lines[12].startswith("def untested")
    coverage = {}
    for line in (1, 2, 3, 4):
        coverage[line] = (STABLE_A, STABLE_B)
    for line in (7, 8, 9, 10):
        coverage[line] = (STABLE_A, FLAKY)  # the flaky test must not count
    coverage[13] = (STABLE_A,)  # the def line runs at import; the body never does
    return make_baseline(COVERAGE_SOURCE, coverage=coverage, flaky=(FLAKY,))


def test_uncovered_functions_are_excluded(tmp_path: Path) -> None:
    found = find(tmp_path, COVERAGE_SOURCE, baseline=coverage_baseline())
    assert sorted(found) == ["pkg.mod.tested_once", "pkg.mod.well_tested"]
    assert found["pkg.mod.well_tested"].covering_tests == (STABLE_A, STABLE_B)
    assert found["pkg.mod.tested_once"].covering_tests == (STABLE_A,)


def test_min_covering_tests_counts_stable_tests_only(tmp_path: Path) -> None:
    found = find(tmp_path, COVERAGE_SOURCE, select=SelectOptions(min_covering_tests=2),
                 baseline=coverage_baseline())
    assert list(found) == ["pkg.mod.well_tested"]
    assert find(tmp_path / "three", COVERAGE_SOURCE, select=SelectOptions(min_covering_tests=3),
                baseline=coverage_baseline()) == {}


def test_a_project_shipped_to_another_process_applies_with_its_own_positions(
        tmp_path: Path) -> None:
    """The Ray executor ships the project to its workers by pickle. The positions candidate
    discovery keeps belong to this process's parsed trees; the copy parses anew and must not
    use them (the regression: a KeyError in every Ray worker's deletion)."""
    source = dedent("""\
        import math


        def area(radius):
            squared = radius * radius
            scaled = math.pi * squared
            return scaled
        """)
    project = project_with(tmp_path, source)
    (candidate,) = StubFunction().candidates(project, make_baseline(source), DEFAULT_SELECT)
    assert MODULE in project._positions  # kept by discovery, for `apply` here
    here = StubFunction().apply(project, candidate, DEFAULT_OPTIONS)
    shipped = cloudpickle.loads(cloudpickle.dumps(project))  # as Ray pickles it
    assert StubFunction().apply(shipped, candidate, DEFAULT_OPTIONS).new_texts == here.new_texts

"""The deleting strategies other than `stub-function`, codemod style: source before, expected
source after, on real files of a purpose-built project.

Candidates are found with a Baseline built by hand: by default one stable test ran every
line of every source file (at run time, not import time); a case that needs line-level
coverage says which lines ran.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from conftest import make_project, write_recipe

from taskforge.errors import Rejected, UserError
from taskforge.languages.python.delete import PythonProject, get_strategy
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline, Candidate, Deletion
from taskforge.recipe import load_recipe
from taskforge.statement import problem_statement, quotes_body

TEST_ID = "tests/test_mod.py::test_mod"
OTHER_TEST = "tests/test_other.py::test_other"
MODULE = "pkg/mod.py"
ANY_SIZE = SelectOptions(min_body_lines=1)
DEFAULT_OPTIONS = TaskOptions()


def project_of(tmp_path: Path, files: dict[str, str]) -> PythonProject:
    root = make_project(tmp_path, {"pkg/__init__.py": "", **files})
    return PythonProject(root, (".",))


def covered(project: PythonProject, lines: dict[str, dict[int, tuple[str, ...]]] | None = None,
            tests: tuple[str, ...] = (TEST_ID, OTHER_TEST)) -> Baseline:
    """TEST_ID ran every line of every source file, unless `lines` says path -> line -> tests."""
    if lines is None:
        lines = {p: {n: (TEST_ID,) for n in range(1, project.text(p).count("\n") + 2)}
                 for p in project.source_files}
    index = {t: i for i, t in enumerate(tests)}
    return Baseline(key="fake", tests=tests, stable=tests, flaky=(), failing=(),
                    run_seconds=(0.1,),
                    coverage={p: {n: tuple(index[t] for t in ids) for n, ids in by_line.items()}
                              for p, by_line in lines.items()})


def found(strategy: str, project: PythonProject, select: SelectOptions = ANY_SIZE,
          baseline: Baseline | None = None) -> dict[str, Candidate]:
    return {c.symbol: c for c in get_strategy(strategy).candidates(
        project, baseline or covered(project), select)}


def apply(strategy: str, project: PythonProject, symbol: str,
          options: TaskOptions = DEFAULT_OPTIONS, body: str = "raise") -> Deletion:
    candidates = found(strategy, project)
    assert symbol in candidates, f"{symbol} is not a candidate; candidates: {sorted(candidates)}"
    return get_strategy(strategy).apply(project, candidates[symbol], options, body=body)


def after(strategy: str, tmp_path: Path, before: str, symbol: str,
          options: TaskOptions = DEFAULT_OPTIONS, files: dict[str, str] | None = None,
          body: str = "raise") -> str:
    project = project_of(tmp_path, {MODULE: before, **(files or {})})
    deletion = apply(strategy, project, symbol, options, body)
    assert list(deletion.new_texts) == [MODULE]
    return deletion.new_texts[MODULE]


def twice(strategy: str, tmp_path: Path, before: str, symbol: str,
          options: TaskOptions = DEFAULT_OPTIONS, files: dict[str, str] | None = None) -> str:
    """Apply the candidate, then apply it again to its own result; both texts must agree."""
    once = after(strategy, tmp_path / "first", before, symbol, options, files)
    project = project_of(tmp_path / "second", {MODULE: once, **(files or {})})
    candidate = found(strategy, project_of(tmp_path / "third", {MODULE: before, **(files or {})}))[symbol]
    again = get_strategy(strategy).apply(project, candidate, options).new_texts[MODULE]
    assert again == once
    return once


# ---------------------------------------------------------------- remove-function

HELPERS = """\
    import re

    _WORD = re.compile(r"\\w+")


    # Split on anything that is not a word character.
    def _split(text):
        \"\"\"The words of text.\"\"\"
        found = _WORD.findall(text)
        return [w.lower() for w in found]


    def count_words(text):
        words = _split(text)
        return len(words)
"""


def test_remove_function_removes_the_whole_definition(tmp_path: Path) -> None:
    expected = """\
        import re

        _WORD = re.compile(r"\\w+")


        def count_words(text):
            words = _split(text)
            return len(words)
    """
    assert after("remove-function", tmp_path, HELPERS, "pkg.mod._split") == dedent(expected)


def test_remove_function_candidate_reruns_every_stable_test_and_checks_collection(
        tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: HELPERS})
    candidate = found("remove-function", project)["pkg.mod._split"]
    # A definition removed changes the module's namespace: any test may notice, and the
    # collect-only check must run.
    assert candidate.import_time and candidate.targets == ()
    assert candidate.covering_tests == (TEST_ID, OTHER_TEST)
    assert (candidate.start_line, candidate.end_line, candidate.kind) == (7, 10, "function")


def test_remove_function_trivial_solution_puts_back_a_trivial_definition(tmp_path: Path) -> None:
    text = after("remove-function", tmp_path, HELPERS, "pkg.mod._split", body="return-none")
    assert "def _split(text):\n    return None\n" in text and "findall" not in text


@pytest.mark.parametrize("case", ["reexported", "all", "import-time", "test-patches"])
def test_remove_function_keeps_names_importers_need_as_bare_stubs(tmp_path: Path,
                                                                  case: str) -> None:
    source = """\
        def area(width: int, height: int = 1) -> int:
            \"\"\"The area.\"\"\"
            product = width * height
            return product
    """
    files = {
        "reexported": {"pkg/__init__.py": "from pkg.mod import area\n"},
        "all": {},
        "import-time": {},
        "test-patches": {"tests/test_mod.py": "def test_it(monkeypatch):\n"
                                              "    monkeypatch.setattr('pkg.mod.area', len)\n"},
    }[case]
    if case == "all":
        source = '__all__ = ["area"]\n\n\n' + dedent(source)
    if case == "import-time":
        source = dedent(source) + "\n\nUNIT = area(1)\n"
    text = after("remove-function", tmp_path, source, "pkg.mod.area", files=files)
    assert "def area(*args, **kwargs):\n    raise NotImplementedError\n" in text
    assert "product" not in text and "The area." not in text
    with pytest.raises(Rejected) as why:
        apply("remove-function", project_of(tmp_path / "reject", {MODULE: source, **files}),
              "pkg.mod.area", TaskOptions(broken_imports="reject"))
    assert why.value.reason == "breaks-imports"


def test_remove_function_statement_gives_the_signature_and_docs_without_the_body(
        tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: HELPERS})
    deletion = apply("remove-function", project, "pkg.mod._split")
    statement = problem_statement(deletion.statement_facts, [TEST_ID])
    assert "def _split(text):" in statement and "The words of text." in statement
    assert "findall" not in statement
    deleted = [ln for ln in HELPERS.splitlines() if ln.strip()]
    assert quotes_body(statement, deleted, allowed=deletion.statement_facts["quotable"]) is None


def test_remove_function_skips_overloads_methods_and_nested_functions(tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: """\
        from typing import overload


        @overload
        def parse(x: int) -> int: ...
        @overload
        def parse(x: str) -> int: ...
        def parse(x):
            value = int(x)
            return value


        class Box:
            def size(self):
                total = 1
                return total


        def outer(n):
            def inner(k):
                doubled = k * 2
                return doubled
            return inner(n)
    """})
    assert sorted(found("remove-function", project)) == ["pkg.mod.outer"]


def test_remove_function_applied_twice(tmp_path: Path) -> None:
    once = after("remove-function", tmp_path / "a", HELPERS, "pkg.mod._split")
    candidate = found("remove-function", project_of(tmp_path / "b", {MODULE: HELPERS}))["pkg.mod._split"]
    with pytest.raises(Rejected) as why:  # nothing left to remove
        get_strategy("remove-function").apply(project_of(tmp_path / "c", {MODULE: once}),
                                              candidate, TaskOptions())
    assert why.value.reason == "not-found"
    # A bare stub (the name is re-exported) is stubbed again to the same text.
    twice("remove-function", tmp_path / "stub", HELPERS, "pkg.mod._split",
          files={"tests/test_mod.py": "from pkg.mod import _split\n"})


# ---------------------------------------------------------------- stub-class

SHAPES = """\
    import abc
    from typing import overload


    class Shape(abc.ABC):
        \"\"\"A shape.\"\"\"

        sides = 0

        def __init__(self, size):
            \"\"\"Remember the size.\"\"\"
            self._size = size
            self.scale = 1

        @property
        def size(self):
            value = self._size * self.scale
            return value

        @size.setter
        def size(self, value):
            self._size = value
            self.scale = 1

        @overload
        def grow(self, by: int) -> None: ...
        def grow(self, by):
            self._size += by
            return self

        @staticmethod
        def unit():
            made = Shape(1)
            return made

        @abc.abstractmethod
        def area(self):
            \"\"\"Subclasses say.\"\"\"
"""


def test_stub_class_stubs_every_method_and_keeps_the_rest(tmp_path: Path) -> None:
    expected = """\
        import abc
        from typing import overload


        class Shape(abc.ABC):
            \"\"\"A shape.\"\"\"

            sides = 0

            def __init__(self, size):
                \"\"\"Remember the size.\"\"\"
                raise NotImplementedError

            @property
            def size(self):
                raise NotImplementedError

            @size.setter
            def size(self, value):
                raise NotImplementedError

            @overload
            def grow(self, by: int) -> None: ...
            def grow(self, by):
                raise NotImplementedError

            @staticmethod
            def unit():
                raise NotImplementedError

            @abc.abstractmethod
            def area(self):
                \"\"\"Subclasses say.\"\"\"
    """
    assert twice("stub-class", tmp_path, SHAPES, "pkg.mod.Shape") == dedent(expected)


def test_stub_class_is_screened_through_all_its_methods(tmp_path: Path) -> None:
    candidate = found("stub-class", project_of(tmp_path, {MODULE: SHAPES}))["pkg.mod.Shape"]
    # Each target is one code object: (path, first line with decorators, name).
    assert candidate.targets == ((MODULE, 10, "__init__"), (MODULE, 15, "size"),
                                 (MODULE, 20, "size"), (MODULE, 27, "grow"),
                                 (MODULE, 31, "unit"))
    assert not candidate.import_time and candidate.covering_tests == (TEST_ID,)


def test_stub_class_drops_docstrings_when_asked(tmp_path: Path) -> None:
    text = after("stub-class", tmp_path, SHAPES, "pkg.mod.Shape", TaskOptions(keep_docstrings=False))
    assert "A shape." not in text and "Remember the size." not in text
    assert text.startswith("import abc\nfrom typing import overload\n\n\nclass Shape(abc.ABC):\n"
                           "    sides = 0\n")


def test_stub_class_needs_two_methods(tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: """\
        class One:
            def only(self):
                value = 1
                return value


        class Two(One):
            def first(self):
                value = super().only()
                return value

            def second(self):
                return [self.first()]
    """})
    assert list(found("stub-class", project)) == ["pkg.mod.Two"]


# ---------------------------------------------------------------- remove-method

ACCOUNTS = """\
    class Account:
        def __init__(self, balance):
            self._balance = balance

        @property
        def balance(self):
            \"\"\"The balance.\"\"\"
            return self._balance

        @balance.setter
        def balance(self, value):
            if value < 0:
                raise ValueError(value)
            self._balance = value

        def deposit(self, amount):
            self.balance = self.balance + amount
            return self.balance


    class Savings(Account):
        rate = 2

        def deposit(self, amount):
            bonus = amount * self.rate // 100
            return super().deposit(amount + bonus)
"""


def test_remove_method_takes_a_property_with_its_setter(tmp_path: Path) -> None:
    expected = """\
        class Account:
            def __init__(self, balance):
                self._balance = balance

            def deposit(self, amount):
                self.balance = self.balance + amount
                return self.balance
    """
    text = after("remove-method", tmp_path, ACCOUNTS, "pkg.mod.Account.balance")
    assert text.startswith(dedent(expected))
    deletion = apply("remove-method", project_of(tmp_path / "d", {MODULE: ACCOUNTS}),
                     "pkg.mod.Account.balance")
    assert [(d.symbol, d.start_line) for d in deletion.deleted] == [
        ("pkg.mod.Account.balance", 6), ("pkg.mod.Account.balance", 11)]


def test_remove_method_called_through_super(tmp_path: Path) -> None:
    # Savings.deposit calls super().deposit: removing the base's method is a task the
    # subclass's tests prove.
    text = after("remove-method", tmp_path, ACCOUNTS, "pkg.mod.Account.deposit")
    assert "self.balance = self.balance + amount" not in text
    assert "return super().deposit(amount + bonus)" in text


def test_remove_method_leaves_a_valid_class_and_offers_several(tmp_path: Path) -> None:
    source = """\
        class Pair:
            def left(self):
                value = self.items[0]
                return value

            def right(self):
                value = self.items[1]
                return value
    """
    candidates = found("remove-method", project_of(tmp_path, {MODULE: source}))
    assert sorted(candidates) == ["pkg.mod.Pair.left", "pkg.mod.Pair.right",
                                  "pkg.mod.Pair.{left,right}"]
    assert candidates["pkg.mod.Pair.{left,right}"].kind == "methods"
    assert after("remove-method", tmp_path / "all", source, "pkg.mod.Pair.{left,right}") == \
        "class Pair:\n    pass\n"
    capped = found("remove-method", project_of(tmp_path / "cap", {MODULE: source}),
                   SelectOptions(min_body_lines=1, max_symbols=1))
    assert "pkg.mod.Pair.{left,right}" not in capped


def test_remove_method_skips_methods_the_class_body_uses(tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: """\
        class Runner:
            def run(self):
                steps = ["run"]
                return steps

            __call__ = run

            def stop(self):
                steps = ["stop"]
                return steps
    """})
    assert sorted(found("remove-method", project)) == ["pkg.mod.Runner.stop"]


def test_remove_method_applied_twice_finds_nothing(tmp_path: Path) -> None:
    once = after("remove-method", tmp_path / "a", ACCOUNTS, "pkg.mod.Savings.deposit")
    candidate = found("remove-method", project_of(tmp_path / "b", {MODULE: ACCOUNTS}))[
        "pkg.mod.Savings.deposit"]
    with pytest.raises(Rejected, match="not-found"):
        get_strategy("remove-method").apply(project_of(tmp_path / "c", {MODULE: once}),
                                            candidate, TaskOptions())


# ---------------------------------------------------------------- feature-cluster

CLUSTER = """\
    def _clean(word):
        stripped = word.strip()
        return _lower(stripped)


    def _lower(word):
        lowered = word.lower()
        return lowered


    def _shared(words):
        return sorted(words)


    def _tested_directly(words):
        return list(words)


    def normalize(words):
        \"\"\"Cleaned, sorted words.\"\"\"
        cleaned = [_clean(w) for w in words]
        ordered = _shared(cleaned)
        return _tested_directly(ordered)


    def other(words):
        return _shared(words)
"""


def test_feature_cluster_takes_the_helpers_only_the_entry_reaches(tmp_path: Path) -> None:
    files = {"tests/test_mod.py": "from pkg.mod import _tested_directly\n"}
    expected = """\
        def _shared(words):
            return sorted(words)


        def _tested_directly(words):
            return list(words)


        def normalize(words):
            \"\"\"Cleaned, sorted words.\"\"\"
            raise NotImplementedError


        def other(words):
            return _shared(words)
    """
    assert twice("feature-cluster", tmp_path, CLUSTER, "pkg.mod.normalize",
                 files=files) == dedent(expected)
    deletion = apply("feature-cluster", project_of(tmp_path / "f", {MODULE: CLUSTER, **files}),
                     "pkg.mod.normalize")
    assert [d.symbol for d in deletion.deleted] == ["pkg.mod.normalize", "pkg.mod._clean",
                                                    "pkg.mod._lower"]
    assert deletion.statement_facts["call_depth"] == 2
    assert deletion.statement_facts["helpers"] == 2
    statement = problem_statement(deletion.statement_facts, [TEST_ID])
    assert "_clean" not in statement and "2 private helpers" in statement


def test_feature_cluster_of_a_method_follows_self_calls(tmp_path: Path) -> None:
    source = """\
        class Report:
            def render(self):
                head = self._header()
                return head + self._body()

            def _header(self):
                return "# " + self.title

            def _body(self):
                lines = [str(row) for row in self.rows]
                return "\\n".join(lines)

            def _unused(self):
                return None

            def summary(self):
                return self._header()
    """
    expected = """\
        class Report:
            def render(self):
                raise NotImplementedError

            def _header(self):
                return "# " + self.title

            def _unused(self):
                return None

            def summary(self):
                return self._header()
    """
    assert after("feature-cluster", tmp_path, source, "pkg.mod.Report.render") == dedent(expected)


def test_feature_cluster_needs_a_private_helper(tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: """\
        def _helper(x):
            return x + 1


        TABLE = {"inc": _helper}


        def public(x):
            y = _helper(x)
            return y * 2


        def alone(x):
            y = x + 1
            return y * 2
    """})
    # _helper is used at import time: it is not the entry's alone, so there is no cluster.
    assert found("feature-cluster", project) == {}


def test_feature_cluster_candidate_size_and_select_range(tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: CLUSTER})
    candidate = found("feature-cluster", project)["pkg.mod.normalize"]
    assert candidate.kind == "cluster" and candidate.import_time
    # The entry's body, then the whole helpers: _clean, _lower and (no test names it here)
    # _tested_directly; _shared is also used by `other`.
    assert candidate.body_lines == 3 + 3 + 3 + 2
    assert "pkg.mod.normalize" in found(
        "feature-cluster", project, SelectOptions(min_body_lines=1, min_symbols=4, max_lines=11))
    for select in (SelectOptions(min_body_lines=1, min_symbols=5),
                   SelectOptions(min_body_lines=1, max_lines=10)):
        assert "pkg.mod.normalize" not in found("feature-cluster", project, select)


# ---------------------------------------------------------------- remove-branch

MODES = """\
    def render(value, mode="plain"):
        \"\"\"Render value in one of the modes.\"\"\"
        if mode == "plain":
            text = str(value)
            return text
        elif mode in ("upper", "loud"):
            text = str(value).upper()
            return text
        if value is None:
            return ""
        if __name__ == "__main__":
            print(value)
        raise ValueError(mode)


    def describe(shape):
        match shape:
            case {"kind": "circle", "r": r}:
                area = 3 * r * r
                return f"circle {area}"
            case _:
                return "unknown"
"""


def test_remove_branch_finds_option_branches_only(tmp_path: Path) -> None:
    candidates = found("remove-branch", project_of(tmp_path, {MODULE: MODES}))
    assert sorted(candidates) == [
        'pkg.mod.describe[case {"kind": "circle", "r": r}]',
        'pkg.mod.render[if mode == "plain"]',
        'pkg.mod.render[if mode in ("upper", "loud")]']
    elif_branch = candidates['pkg.mod.render[if mode in ("upper", "loud")]']
    assert (elif_branch.start_line, elif_branch.end_line, elif_branch.body_lines) == (6, 8, 2)
    assert elif_branch.kind == "branch" and elif_branch.targets == ()


def test_remove_branch_stubs_the_branch_body(tmp_path: Path) -> None:
    expected = """\
        def render(value, mode="plain"):
            \"\"\"Render value in one of the modes.\"\"\"
            if mode == "plain":
                text = str(value)
                return text
            elif mode in ("upper", "loud"):
                raise NotImplementedError
            if value is None:
    """
    text = twice("remove-branch", tmp_path, MODES, 'pkg.mod.render[if mode in ("upper", "loud")]')
    assert text.startswith(dedent(expected))
    case = after("remove-branch", tmp_path / "case", MODES,
                 'pkg.mod.describe[case {"kind": "circle", "r": r}]')
    assert 'case {"kind": "circle", "r": r}:\n            raise NotImplementedError\n' \
           '        case _:\n' in case


def test_remove_branch_uses_line_coverage_of_the_branch(tmp_path: Path) -> None:
    project = project_of(tmp_path, {MODULE: MODES})
    # TEST_ID ran the function and the "plain" branch; only OTHER_TEST ran the upper branch.
    lines = {MODULE: {**{n: (TEST_ID,) for n in (1, 2, 3, 4, 5, 6)},
                      7: (OTHER_TEST,), 8: (OTHER_TEST,)}}
    candidates = found("remove-branch", project, baseline=covered(project, lines))
    assert candidates['pkg.mod.render[if mode in ("upper", "loud")]'].covering_tests == \
        (OTHER_TEST,)
    assert candidates['pkg.mod.render[if mode == "plain"]'].covering_tests == (TEST_ID,)
    assert 'pkg.mod.describe[case {"kind": "circle", "r": r}]' not in candidates  # never ran


def test_remove_branch_statement_names_the_case(tmp_path: Path) -> None:
    deletion = apply("remove-branch", project_of(tmp_path, {MODULE: MODES}),
                     'pkg.mod.render[if mode == "plain"]')
    statement = problem_statement(deletion.statement_facts, ["tests/test_mod.py::test_plain"])
    assert 'the case `if mode == "plain"`' in statement and "`pkg.mod.render`" in statement
    assert "text = str(value)" not in statement


# ---------------------------------------------------------------- remove-module

WHOLE_MODULE = """\
    \"\"\"Greetings.\"\"\"
    from __future__ import annotations

    import textwrap
    from collections import OrderedDict as _OD

    __all__ = ["greet", "Greeter", "DEFAULT", "wait"]

    DEFAULT = "hello"
    _CACHE = _OD()


    def _shout(text):
        return text.upper() + "!"


    def greet(name: str = DEFAULT) -> str:
        \"\"\"Greet name.\"\"\"
        return _shout(f"{DEFAULT} {name}")


    async def wait(seconds):
        await seconds
        return None


    # A class with a base from the standard library.
    class Greeter(textwrap.TextWrapper):
        \"\"\"Wraps greetings.\"\"\"

        def greet(self, name):
            return self.fill(greet(name))


    if __name__ == "__main__":
        print(greet("world"))
"""


def test_remove_module_redeclares_public_names_as_stubs(tmp_path: Path) -> None:
    expected = """\
        \"\"\"Greetings.\"\"\"
        from __future__ import annotations

        import textwrap
        from collections import OrderedDict as _OD

        __all__ = ["greet", "Greeter", "DEFAULT", "wait"]

        DEFAULT = "hello"


        def greet(*args, **kwargs):
            raise NotImplementedError


        async def wait(*args, **kwargs):
            raise NotImplementedError


        class Greeter(textwrap.TextWrapper):
            def __init__(self, *args, **kwargs):
                raise NotImplementedError
    """
    assert twice("remove-module", tmp_path, WHOLE_MODULE, "pkg.mod") == dedent(expected)
    deletion = apply("remove-module", project_of(tmp_path / "d", {MODULE: WHOLE_MODULE}), "pkg.mod")
    items = {i["symbol"]: i["signature"] for i in deletion.statement_facts["items"]}
    assert items == {"pkg.mod.greet": "def greet(name: str = DEFAULT) -> str:",
                     "pkg.mod.wait": "async def wait(seconds):",
                     "pkg.mod.Greeter": "class Greeter(textwrap.TextWrapper):",
                     "pkg.mod.Greeter.greet": "def greet(self, name):"}
    candidate = found("remove-module", project_of(tmp_path / "c", {MODULE: WHOLE_MODULE}))["pkg.mod"]
    assert candidate.import_time and candidate.kind == "module"


def test_remove_module_without_docstrings_and_trivial_solution(tmp_path: Path) -> None:
    text = after("remove-module", tmp_path, WHOLE_MODULE, "pkg.mod",
                 TaskOptions(keep_docstrings=False), body="pass")
    assert text.startswith("from __future__ import annotations\n")
    assert "def greet(*args, **kwargs):\n    pass\n" in text


def test_remove_module_refuses_code_it_cannot_stub(tmp_path: Path) -> None:
    project = project_of(tmp_path, {
        "pkg/computed.py": """\
            def _load():
                return {"a": 1}


            TABLE = _load()


            def lookup(key):
                value = TABLE[key]
                return value
        """,
        "pkg/loop.py": """\
            REGISTRY = []
            for name in ("a", "b"):
                REGISTRY.append(name)


            def first():
                value = REGISTRY[0]
                return value
        """,
        "pkg/private_base.py": """\
            class _Base:
                pass


            class Thing(_Base):
                def size(self):
                    value = 1
                    return value
        """,
    })
    assert found("remove-module", project) == {}


# ---------------------------------------------------------------- statements

def test_statement_gets_vaguer_with_detail(tmp_path: Path) -> None:
    deletion = apply("remove-function", project_of(tmp_path, {MODULE: HELPERS}), "pkg.mod._split")
    tests = ["tests/test_mod.py::test_splits_on_punctuation"]
    full = problem_statement(deletion.statement_facts, tests, "full")
    brief = problem_statement(deletion.statement_facts, tests, "brief")
    minimal = problem_statement(deletion.statement_facts, tests, "minimal")
    assert "splits on punctuation" in full and "The words of text." in full
    assert "def _split(text):" in brief and "splits on punctuation" not in brief
    assert "The words of text." not in brief
    assert "def _split" not in minimal and "`tests/test_mod.py`" in minimal
    assert len(minimal) < len(brief) < len(full)


# ---------------------------------------------------------------- recipe knobs

def test_recipe_difficulty_knobs(tmp_path: Path) -> None:
    head = "name: knobs\nsources: [{path: .}]\n"
    recipe = load_recipe(write_recipe(tmp_path / "ok.yaml", head + dedent("""\
        strategies: [{feature-cluster: 3}, remove-branch]
        select: {lines: [5, 80], symbols: [2, null]}
        task: {keep_docstrings: false, broken_imports: reject, statement: brief}
    """)))
    assert recipe.strategies == {"feature-cluster": 3.0, "remove-branch": 1.0}
    assert (recipe.select.min_lines, recipe.select.max_lines) == (5, 80)
    assert (recipe.select.min_symbols, recipe.select.max_symbols) == (2, None)
    assert recipe.task == TaskOptions(keep_docstrings=False, broken_imports="reject",
                                      statement="brief")
    for bad, words in [("select: {symbols: [0, 2]}", "select.symbols"),
                       ("select: {lines: 5}", "select.lines"),
                       ("select: {lines: [9, 3]}", "select.lines"),
                       ("task: {statement: vague}", "task.statement"),
                       ("task: {broken_imports: ignore}", "task.broken_imports")]:
        with pytest.raises(UserError) as info:
            load_recipe(write_recipe(tmp_path / "bad.yaml", head + bad + "\n"))
        assert words in str(info.value) and "\n" not in str(info.value)

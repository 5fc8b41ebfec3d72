"""Expectation canaries (taskforge/languages/python/grading/expectations.py): copies of
FAIL_TO_PASS tests with the expected literal changed, which honest code fails and an answer
read from the test passes.

The attack: a stub that learns which test runs from PYTEST_CURRENT_TEST, finds the test's
function in sys.modules and returns the literal its last assertion compares with, read from
the source. It takes no frame, so nothing else sees it: it scores 1.0 under the naive grader
and under the grade without checks (the positive controls), 0 under the grade.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_grade_tamper import (  # tally_task: a fixture, found here by pytest
    TALLY_CORE,
    generate_task,
    graded_reference,
    pyproject,
    stub_body,
    tally_task,  # noqa: F401
    wins_unchecked_and_loses,
)
from test_sandbox import require

import taskforge
import taskforge.languages.python.grading.run as run_module
from taskforge.languages.python.grading.canaries import Canary, canary_findings
from taskforge.languages.python.grading.expectations import (
    copy_block,
    passing_on_the_original,
    plant_expectation_copies,
)
from taskforge.languages.python.testing.runner import PLUGIN, PLUGIN_DIR

# ------------------------------------------------------------ which tests get a copy, and how

HONEST = "def shout(text):\n    return text.upper() + '!'\n"
TESTS = '''\
import unittest

import pytest
from pytest import mark

from shout import shout

LOUD = "!"


def test_word():
    assert shout("hello") == "HELLO!"


def test_literal_on_the_left():
    heard = shout("hi")
    assert "HI!" == heard


@pytest.mark.parametrize("word", ["a", "b"])
def test_length(word):
    assert len(shout(word)) == 2


@pytest.mark.parametrize("word, heard", [("a", "A!"), ("b", "B!"), pytest.param("c", "C!", id="c")])
def test_cases(word, heard):
    assert shout(word) == heard


@pytest.mark.parametrize("heard", ["A!"])
def test_one_argument(heard):
    assert heard == shout("a")


@mark.parametrize("heard", ["E!"])
def test_bare_mark(heard):
    assert shout("e") == heard


@pytest.mark.parametrize("word, heard", [("ab", "AB!")])
def test_argument_changed(word, heard):
    heard = heard[:3]
    assert shout(word) == heard


@pytest.mark.parametrize("word", ["a"])
@pytest.mark.parametrize("heard", ["A!"])
def test_two_decorators(word, heard):
    assert shout(word) == heard


@pytest.mark.parametrize("heard", [LOUD])
def test_case_not_a_literal(heard):
    assert shout("") == heard


@pytest.mark.parametrize("text", ["A!", "B!"])
def test_round_trip(text):
    assert shout(text).rstrip("!") + "" == text


@pytest.fixture
def said(spoken):
    return shout(spoken)


@pytest.mark.parametrize("spoken", ["c"])
def test_argument_a_fixture_takes(said, spoken):
    assert said == spoken


@pytest.mark.parametrize("loudly", ["D!"])
def test_argument_a_conftest_fixture_takes(shouted_d, loudly):
    assert shouted_d == loudly


class TestShout:
    @pytest.mark.parametrize("word, heard", [("x", "X!"), ("y", "Y!")], ids=["x", "y"])
    def test_method_cases(self, word, heard):
        self.assertion = shout(word)
        assert self.assertion == heard

    def test_empty(self):
        assert shout("") == "!"

    def test_inside_raises(self):
        with pytest.raises(TypeError):
            assert shout(1) == "x"

    def test_returns_early(self):
        if LOUD:
            return
        assert shout("") == "!"

    @pytest.mark.xfail(reason="kept")
    def test_marked_xfail(self):
        assert shout("x") == "X!"

    def test_compares_two_results(self):
        assert shout("a") == shout("a")

    def test_not_equal(self):
        assert shout("a") != "A"

    def test_private(self):
        self.__seen = shout("a")
        assert self.__seen == "A!"


class ShoutCase(unittest.TestCase):
    def test_unittest(self):
        self.assertEqual(shout("u"), "U!")

    def test_float(self):
        self.assertEqual(len(shout("u")) / 2, 1.0)

    def test_infinite(self):
        self.assertEqual(float("inf"), 1e999)
'''
ALL_IDS = ["tests/test_shout.py::" + t for t in (
    "test_word", "test_literal_on_the_left", "test_length[a]", "test_length[b]",
    "test_cases[a-A!]", "test_cases[b-B!]", "test_cases[c]", "test_one_argument[A!]",
    "test_bare_mark[E!]",
    "test_argument_changed[ab-AB!]", "test_two_decorators[A!-a]",
    "test_case_not_a_literal[!]", "test_round_trip[A!]", "test_round_trip[B!]",
    "test_argument_a_fixture_takes[c]", "test_argument_a_conftest_fixture_takes[D!]",
    "TestShout::test_method_cases[x]",
    "TestShout::test_method_cases[y]",
    "TestShout::test_empty", "TestShout::test_inside_raises", "TestShout::test_returns_early",
    "TestShout::test_marked_xfail", "TestShout::test_compares_two_results",
    "TestShout::test_not_equal", "TestShout::test_private", "ShoutCase::test_unittest",
    "ShoutCase::test_float", "ShoutCase::test_infinite")]
COPIED = {"tests/test_shout.py::" + t for t in (
    "test_word", "test_literal_on_the_left", "test_length[a]", "test_length[b]",
    "test_cases", "test_one_argument", "test_bare_mark", "TestShout::test_method_cases",
    "TestShout::test_empty", "ShoutCase::test_unittest", "ShoutCase::test_float")}


def shout_project(root: Path, code: str = HONEST) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "shout.py").write_text(code)
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_shout.py").write_text(TESTS)
    # A fixture that takes a test's `parametrize` argument, from the conftest file.
    (root / "tests" / "conftest.py").write_text(
        "import pytest\n\nfrom shout import shout\n\n\n@pytest.fixture\n"
        "def shouted_d(loudly):\n    return shout(loudly[0].lower())\n")
    return root


def run_pytest(root: Path) -> dict[str, str]:
    """Outcomes by node id (`-rA`'s short summary) of pytest in `root`."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"],
                          cwd=root, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"}, timeout=120)
    outcomes = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR", "XFAIL", "XPASS", "SKIPPED"):
            outcomes[rest.split(" - ")[0]] = word
    return outcomes


def test_which_tests_get_a_copy_and_how_it_is_named(tmp_path: Path) -> None:
    root = shout_project(tmp_path / "p")
    planted = plant_expectation_copies(root, ALL_IDS, random.Random(7), limit=len(ALL_IDS))
    assert {c.copy_of for c in planted} == COPIED
    assert all(c.expected == "failed" for c in planted)
    # A copy keeps the original's classes and parameters, under a new name; where the
    # expected value is a `parametrize` argument, it has cases of its own (two at most).
    for canary in planted:
        head, original = canary.node_id.rsplit("::", 1), canary.copy_of.rsplit("::", 1)
        assert head[0] == original[0]
        assert head[1].split("[")[0] != original[1].split("[")[0]
        if "[" in original[1] or original[1] in ("test_word", "test_literal_on_the_left",
                                                 "test_empty", "test_unittest", "test_float"):
            assert head[1].partition("[")[1:] == original[1].partition("[")[1:]
        else:
            assert re.fullmatch(r"\w+\[[a-z0-9]{6}\]", head[1]), head[1]
    drawn = [c for c in planted if c.copy_of.endswith("::test_cases")]
    assert len(drawn) == 2


def test_honest_code_passes_every_original_and_fails_every_copy(tmp_path: Path) -> None:
    root = shout_project(tmp_path / "p")
    planted = plant_expectation_copies(root, ALL_IDS, random.Random(3), limit=len(ALL_IDS))
    outcomes = run_pytest(root)
    assert all(outcomes[c.node_id] == "FAILED" for c in planted), outcomes
    assert {t: o for t, o in outcomes.items() if t in ALL_IDS and o != "PASSED"} == {
        "tests/test_shout.py::TestShout::test_inside_raises": "FAILED",
        "tests/test_shout.py::TestShout::test_marked_xfail": "XPASS",
        # a round trip that does not hold: fails, as its copy would
        "tests/test_shout.py::test_round_trip[A!]": "FAILED",
        "tests/test_shout.py::test_round_trip[B!]": "FAILED",
        "tests/test_shout.py::test_argument_a_fixture_takes[c]": "FAILED"}, outcomes
    assert len(outcomes) == len(ALL_IDS) + len(planted)
    findings = canary_findings(planted, {t: o.lower() for t, o in outcomes.items()}, None)
    assert findings == []


# The oracle as a stub body: the literal the test's last assertion compares with, read from
# its source (the unittest form: the call's second argument); where it compares with a
# `parametrize` argument, that argument's value in the running case, read from the marks.
ORACLE_BODY = """\
    import ast, inspect, os, sys, textwrap
    test = os.environ["PYTEST_CURRENT_TEST"].rsplit(" ", 1)[0]
    path, *names = test.split("::")
    owner = sys.modules[path[:-3].replace("/", ".")]
    for name in names:
        owner = getattr(owner, name.split("[")[0])
    last = ast.parse(textwrap.dedent(inspect.getsource(owner))).body[0].body[-1]
    sides = [last.test.left, *last.test.comparators] if isinstance(last, ast.Assert) \\
        else last.value.args
    for side in sides:
        if isinstance(side, ast.Constant):
            return side.value
    case = names[-1].partition("[")[2][:-1]
    for mark in owner.pytestmark:
        argnames = [n.strip() for n in mark.args[0].split(",")]
        wanted = [s.id for s in sides if isinstance(s, ast.Name) and s.id in argnames]
        for values in mark.args[1]:
            given = getattr(values, "id", None)
            values = getattr(values, "values", values)
            if case in (given, "-".join(map(str, values))):
                return values[argnames.index(wanted[0])]
"""
# The same as a module of its own, for the quick tests.
ORACLE = "def shout(text):\n" + ORACLE_BODY


def test_an_answer_read_from_the_test_passes_the_copies(tmp_path: Path) -> None:
    """The positive control at this level: the oracle passes the originals it answers and
    the copies too, and the findings name the copies."""
    root = shout_project(tmp_path / "p", ORACLE)
    ids = ["tests/test_shout.py::test_word", "tests/test_shout.py::TestShout::test_empty",
           "tests/test_shout.py::ShoutCase::test_unittest"]
    planted = plant_expectation_copies(root, ids, random.Random(5))
    assert len(planted) == 3
    outcomes = run_pytest(root)
    assert all(outcomes[t] == "PASSED" for t in ids), outcomes
    assert all(outcomes[c.node_id] == "PASSED" for c in planted), outcomes
    findings = canary_findings(planted, {t: o.lower() for t, o in outcomes.items()}, None)
    assert len(findings) == 3 and all(f.disqualifies for f in findings)
    assert all("a copy of tests/test_shout.py::" in f.message for f in findings)


def test_a_copy_that_cannot_be_defined_leaves_the_module_importable(tmp_path: Path) -> None:
    """An imported decorator that raises when evaluated again: the copy is not defined (nor
    run), the module's own tests run as before, and no finding."""
    root = tmp_path / "p"
    (root / "tests").mkdir(parents=True)
    (root / "shout.py").write_text(HONEST)
    (root / "once.py").write_text(textwrap.dedent('''\
        _used = []


        def once(function):
            if _used:
                raise RuntimeError("decorated twice")
            _used.append(function)
            return function
    '''))
    (root / "tests" / "test_once.py").write_text(textwrap.dedent('''\
        from once import once
        from shout import shout


        @once
        def test_word():
            assert shout("a") == "A!"
    '''))
    planted = plant_expectation_copies(root, ["tests/test_once.py::test_word"], random.Random(1))
    assert len(planted) == 1
    outcomes = run_pytest(root)
    assert outcomes == {"tests/test_once.py::test_word": "PASSED"}
    assert canary_findings(planted, {"tests/test_once.py::test_word": "passed",
                                     planted[0].node_id: "error"}, None) == []


def test_copies_run_after_every_other_test(tmp_path: Path) -> None:
    """TASKFORGE_LAST: a copy that fails half-way leaves its state to no test of the task."""
    root = shout_project(tmp_path / "p")
    planted = plant_expectation_copies(root, ["tests/test_shout.py::test_word"], random.Random(2))
    (root / "last.txt").write_text(planted[0].node_id + "\n")
    # Another plugin sorting after every other modifyitems (as pytest-order does, `trylast`)
    # puts the copy first: it still runs last.
    with (root / "tests" / "conftest.py").open("a") as conftest:
        conftest.write(
            "\n\n@pytest.hookimpl(trylast=True)\ndef pytest_collection_modifyitems(items):\n"
            f"    items.sort(key=lambda item: item.nodeid != {planted[0].node_id!r})\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", PLUGIN, "-p", "no:cacheprovider"],
        cwd=root, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PLUGIN_DIR),
             "TASKFORGE_LAST": str(root / "last.txt")})
    ran = [line.split(" ")[0] for line in proc.stdout.splitlines() if "::" in line
           and (" PASSED" in line or " FAILED" in line or " XFAIL" in line)]
    assert ran[-1] == planted[0].node_id, ran
    assert len(ran) > 10


@pytest.mark.parametrize("source", [
    "def test_a():\n    assert f() == True\n",
    "def test_a():\n    assert f() == \'\'\'x\ny\'\'\'\n",
    "def case(f):\n    return f\n\n\n@case\ndef test_a():\n    assert f() == 'x'\n",
    "# -*- coding: latin-1 -*-\ndef test_a():\n    assert f() == 'x'\n",
    "def test_a():\n    assert f() == 'x'\n    return\n",
    "def test_a():\n    global server\n    server = start()\n    assert f() == 'x'\n",
    "def test_a():\n    return\n    assert f() == 'x'\n",
    "def test_a():\n    for x in []:\n        yield x\n    assert f() == 'x'\n",
    "def test_a():\n    assert f() == float('nan')\n",
    "def test_a():\n    assert f() == None\n",
    "def test_a():\n    assert f() == 1 == 1\n",
    "def test_a():\n    assert f() is 'x'\n",
])
def test_no_copy_where_honest_code_might_pass_it_or_the_copy_would_differ(
        source: str, tmp_path: Path) -> None:
    """A bool (its one other value is what state may make a result), a string over several
    lines (indented under `try` it would change), the module's own decorator (it may record
    what it decorates), a file in another encoding, and the shapes that may not reach or
    may pass the assertion."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_bytes(source.encode("latin-1"))
    assert plant_expectation_copies(tmp_path, ["tests/test_a.py::test_a"],
                                    random.Random(0)) == []


def test_a_methods_copy_is_named_as_a_method_of_its_class(tmp_path: Path) -> None:
    """Its `__name__` and `__qualname__` are a method's: a `_copy` name told it apart."""
    root = shout_project(tmp_path / "p")
    (planted,) = plant_expectation_copies(
        root, ["tests/test_shout.py::TestShout::test_empty"], random.Random(4))
    name = planted.node_id.rsplit("::", 1)[1]
    (root / "tests" / "test_names.py").write_text(textwrap.dedent(f"""\
        from tests.test_shout import TestShout


        def test_names():
            method = TestShout.{name}
            assert (method.__name__, method.__qualname__) == \\
                ("{name}", "TestShout.{name}")
            import tests.test_shout as module
            assert not hasattr(module, "{name}")
    """))
    assert run_pytest(root)["tests/test_names.py::test_names"] == "PASSED"


def test_a_method_naming_its_class_body_is_not_moved() -> None:
    import ast
    source = textwrap.dedent('''\
        class TestA:
            mark = staticmethod(lambda f: f)

            @mark
            def test_a(self):
                assert f() == "x"

            def test_super(self):
                super().setup()
                assert f() == "x"

            def test_default(self, value=mark):
                assert f() == "x"
    ''')
    tree = ast.parse(source)
    for name in ("test_a", "test_super", "test_default"):
        assert copy_block(source.encode(), tree, ("TestA", name), "test_b",
                          random.Random(0)) is None, name


def test_a_planted_copy_that_passes_is_the_only_finding_of_its_kind() -> None:
    copy = Canary("t.py::test_b", "failed", copy_of="t.py::test_a")
    for outcome in ("failed", "error", "skipped"):
        assert canary_findings([copy], {"t.py::test_b": outcome}, None) == []
    assert canary_findings([copy], {}, None) == []
    (finding,) = canary_findings([copy], {"t.py::test_b": "passed"}, None)
    assert finding.disqualifies and "a copy of t.py::test_a" in finding.message
    # What the observer never saw did not run, whatever the XML says.
    assert canary_findings([copy], {"t.py::test_b": "passed"}, {}) == []


# ------------------------------------------------------------- graded for real, under bwrap

SHOUT_FILES = {
    "pyproject.toml": pyproject("loud"),
    "loud/__init__.py": "",
    "loud/core.py": '''\
        def shout(text):
            """`text` in capitals, and an exclamation mark."""
            cleaned = text.strip()
            loud = cleaned.upper()
            return loud + "!"


        def whisper(text):
            """`text` in small letters."""
            quiet = text.lower()
            return quiet


        def echo(text, times):
            """`text` said `times` times, with spaces between."""
            said = [text] * times
            joined = " ".join(said)
            return joined


        class Loose:
            """Equal to every string that starts with its prefix: a matcher."""

            def __init__(self, prefix):
                self.prefix = prefix

            def __eq__(self, other):
                return isinstance(other, str) and other.startswith(self.prefix)


        def loose(prefix):
            """A matcher of the strings starting with `prefix`, spaces around it left out."""
            cleaned = prefix.strip()
            matcher = Loose(cleaned)
            return matcher
    ''',
    "tests/__init__.py": "",
    "tests/test_loud.py": '''\
        import pytest

        from loud.core import echo, loose, shout, whisper


        def test_shout_a_word():
            assert shout("hello") == "HELLO!"


        @pytest.mark.parametrize("padded", [" hi", "hi ", " hi "])
        def test_shout_strips(padded):
            heard = shout(padded)
            assert heard == "HI!"


        class TestShout:
            def test_shout_nothing(self):
                assert shout("") == "!"


        def test_whisper():
            assert whisper("HeLLo") == "hello"


        @pytest.mark.parametrize("text, times, heard", [("a", 2, "a a"), ("hey", 1, "hey"),
                                                        ("b", 0, "")])
        def test_echo(text, times, heard):
            assert echo(text, times) == heard


        def test_loose():
            assert loose(" ab ") == "abc"
    ''',
}
LOUD_CORE = "loud/core.py"


@pytest.fixture(scope="module")
def loud_task(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> taskforge.Task:
    chosen = generate_task(tmp_path_factory, tf_cache, "loud", SHOUT_FILES, "loud.core.shout")
    assert len(chosen.record["FAIL_TO_PASS"]) == 5
    return chosen


@pytest.fixture(scope="module")
def echo_task(tmp_path_factory: pytest.TempPathFactory, tf_cache: Path) -> taskforge.Task:
    """Its only FAIL_TO_PASS test compares with a `parametrize` argument."""
    chosen = generate_task(tmp_path_factory, tf_cache, "echo", SHOUT_FILES, "loud.core.echo")
    assert {t.split("[")[0] for t in chosen.record["FAIL_TO_PASS"]} == {
        "tests/test_loud.py::test_echo"}
    return chosen




@pytest.mark.slow
@pytest.mark.parametrize("suite, core", [("loud_task", LOUD_CORE), ("echo_task", LOUD_CORE),
                                         ("tally_task", TALLY_CORE)])
def test_an_answer_read_from_the_test_scores_zero_and_is_named(
        suite: str, core: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    task: taskforge.Task = request.getfixturevalue(suite)
    box = require("bwrap")
    # 1.0 under the naive grader and under the grade without checks (the positive controls).
    wins_unchecked_and_loses(task, box, tmp_path, lambda ws: stub_body(ws, ORACLE_BODY, core),
                             ("with another expected value",))
    # The reference, graded with its copies planted, scores 1.0 with nothing named.
    reference = graded_reference(task, box, tmp_path / "ref")
    assert (reference.reward, reference.tampered) == (1.0, ()), reference



@pytest.mark.slow
def test_a_copy_the_original_code_passes_too_is_no_finding(
        tmp_path_factory: pytest.TempPathFactory, tf_cache: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`loose` returns a matcher, equal to any string with its prefix: the copy of its test
    expects `abc` and six letters more, which the matcher equals too. Run again on the
    original code, the copy passes there as well, so the reference scores 1.0; without that
    second run (its positive control) the reference would score 0."""
    task = generate_task(tmp_path_factory, tf_cache, "loose", SHOUT_FILES, "loud.core.loose")
    assert task.record["FAIL_TO_PASS"] == ["tests/test_loud.py::test_loose"]
    box = require("bwrap")
    reference = graded_reference(task, box, tmp_path / "ref")
    assert (reference.reward, reference.tampered) == (1.0, ()), reference
    monkeypatch.setattr(run_module, "passing_on_the_original", lambda *args: set())
    unchecked = graded_reference(task, box, tmp_path / "ref-unchecked")
    assert unchecked.reward == 0.0, unchecked
    assert any("a copy of tests/test_loud.py::test_loose" in r for r in unchecked.tampered)


IDS_TEST = '''\
from loud.ids import next_id


def test_first_id_is_one():
    assert next_id() == 1


def test_ids_keep_growing():
    for _ in range(44):
        next_id()
    assert next_id() > 1
'''
# the copy of the first test a grading might plant, its offset 46: after the second test it
# passes on any code that counts, the original too
IDS_COPY = '''
try:
    def test_first_keep_x1y2z3():
        assert next_id() == 47
except Exception:
    pass
'''


@pytest.mark.slow
def test_the_second_run_runs_the_copy_as_the_grading_run_did(loud_task: taskforge.Task,
                                                            tmp_path: Path) -> None:
    """A copy whose value depends on what the tests before it left (a counter) passes on the
    original code in the grading run's selection, copies last, and only there: run alone, as
    the second run first did, it failed, and the reference of such a task scored 0 one
    grading in 97 (the review of session 66's change, on the JavaScript copies)."""
    original = tmp_path / "original"
    shutil.copytree(loud_task.snapshot_root(), original)
    (original / "loud" / "ids.py").write_text("LAST = [0]\n\n\ndef next_id():\n"
                                             "    LAST[0] += 1\n    return LAST[0]\n")
    (original / "tests" / "test_ids.py").write_text(IDS_TEST)
    graded = tmp_path / "graded"
    (graded / "tests").mkdir(parents=True)
    (graded / "tests" / "test_ids.py").write_text(IDS_TEST + IDS_COPY)
    copy = Canary("tests/test_ids.py::test_first_keep_x1y2z3", "failed",
                  copy_of="tests/test_ids.py::test_first_id_is_one")
    runner = loud_task.runner(require("bwrap"))
    selected = ["tests/test_ids.py::test_first_id_is_one",
                "tests/test_ids.py::test_ids_keep_growing", copy.node_id]
    forgiven = passing_on_the_original([copy], graded, original, runner, tmp_path / "a", {},
                                       selected)
    assert forgiven == {copy.node_id}
    alone = passing_on_the_original([copy], graded, original, runner, tmp_path / "b", {},
                                    [copy.node_id])
    assert alone == set()  # the control: the copy alone fails on the original code

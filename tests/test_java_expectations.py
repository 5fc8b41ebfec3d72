"""Expectation copies for Java: the Python and JavaScript graders' (their
`grading/expectations.py`), made in place in the test classes.

The attack: a stub that answers with whatever the calling test expects. It walks its own stack
trace to the test's frame, reads that line of the test source (the console launcher runs in
the workspace, where `src/test/java` is) and returns the literal the assertion compares its
result with. It scored 1.0 under `taskforge grade` with every check, and under the naive
grader: the positive controls, kept below. With the copies, a FAIL_TO_PASS test expecting
another value, in a second run at the same path, passes for it and for no honest solution."""

from __future__ import annotations

import functools
import random
import re
import textwrap
from pathlib import Path

import pytest
from conftest import (
    apply_patch,
    count_calls,
    lucky_once_then_caught,
    make_project,
    trivial_solutions_of_before,
    write_recipe,
)
from java_support import require_jdk
from naive_grader import naive_java_reward
from test_grade_tamper import copied_and_caught
from test_sandbox import require

import taskforge
from taskforge.languages.grading_copy import Copy, copy_findings
from taskforge.languages.java.grading import expectations
from taskforge.languages.java.grading import run as grading_run

PROJECT = {
    "pom.xml": """\
        <?xml version="1.0" encoding="UTF-8"?>
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>jwords</groupId>
          <artifactId>jwords</artifactId>
          <version>1.0.0</version>
          <properties><maven.compiler.release>11</maven.compiler.release></properties>
          <dependencies>
            <dependency>
              <groupId>org.junit.jupiter</groupId>
              <artifactId>junit-jupiter</artifactId>
              <version>5.9.2</version>
              <scope>test</scope>
            </dependency>
          </dependencies>
        </project>
        """,
    "src/main/java/jwords/Words.java": """\
        package jwords;

        public final class Words {
            private Words() {
            }

            public static String shout(String text) {
                String loud = text.toUpperCase();
                return loud + "!";
            }

            public static int vowels(String text) {
                int count = 0;
                for (char c : text.toLowerCase().toCharArray()) {
                    if ("aeiou".indexOf(c) >= 0) {
                        count++;
                    }
                }
                return count;
            }

            public static boolean isLoud(String text) {
                String upper = text.toUpperCase();
                return !text.isEmpty() && text.equals(upper);
            }

            // What the line calling it compares with: a call-site reader, as debugging
            // libraries have. Its test passes a copy with any literal, on the original too.
            public static String literalAtCall() {
                StackTraceElement caller = new Throwable().getStackTrace()[1];
                String file = "src/test/java/" + caller.getClassName().replace('.', '/') + ".java";
                try {
                    String line = java.nio.file.Files.readAllLines(java.nio.file.Path.of(file))
                        .get(caller.getLineNumber() - 1);
                    return line.replaceAll(".*assertEquals\\\\(\\"([^\\"]*)\\".*", "$1");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        }
        """,
    "src/test/java/jwords/WordsTest.java": """\
        package jwords;

        import static org.junit.jupiter.api.Assertions.assertEquals;
        import static org.junit.jupiter.api.Assertions.assertFalse;
        import static org.junit.jupiter.api.Assertions.assertTrue;

        import org.junit.jupiter.api.Test;

        class WordsTest {
            @Test
            void tellsALoudWord() {
                assertTrue(Words.isLoud("HEY"));
            }

            @Test
            void shoutsAWord() {
                assertEquals("HELLO!", Words.shout("hello"));
            }

            @Test
            void shoutsTwoWords() {
                assertEquals("HI THERE!", Words.shout("hi there"));
            }

            @Test
            void countsVowels() {
                assertEquals(5, Words.vowels("Education"));
            }

            @Test
            void readsItsCallSite() {
                assertEquals("here", Words.literalAtCall());
            }
        }
        """,
}

# The stub's body, by what the method returns: the literal of the assertion on the line that
# called it, in the test source the launcher's working directory holds.
READ = """\
        try {{
            for (StackTraceElement frame : new Throwable().getStackTrace()) {{
                java.nio.file.Path file = java.nio.file.Path.of("src/test/java",
                    frame.getClassName().replaceAll("\\\\$.*", "").replace('.', '/') + ".java");
                if (frame.getLineNumber() < 1 || !java.nio.file.Files.isRegularFile(file)) {{
                    continue;
                }}
                String line = java.nio.file.Files.readAllLines(file).get(frame.getLineNumber() - 1);
                java.util.regex.Matcher m = java.util.regex.Pattern.compile({pattern}).matcher(line);
                if (m.find()) {{
                    return {value};
                }}
            }}
        }} catch (java.io.IOException e) {{
            throw new java.io.UncheckedIOException(e);
        }}
        throw new UnsupportedOperationException();
"""
LOOK_TELLING = {
    "shout": READ.format(pattern='"assertEquals\\\\(\\"([^\\"]*)\\""', value="m.group(1)"),
    "vowels": READ.format(pattern='"assertEquals\\\\((-?[0-9]+),"',
                          value="Integer.parseInt(m.group(1))"),
}
STUB = 'throw new UnsupportedOperationException("not implemented");'
# The boolean the calling line asserts: true where it calls assertTrue.
ASSERTED = READ.format(pattern='"(assertTrue|assertFalse)\\\\("',
                       value='m.group(1).equals("assertTrue")')


def stub_method_tasks(files: dict[str, str], name: str,
                      tmp_path_factory: pytest.TempPathFactory) -> dict[str, taskforge.Task]:
    """stub-method's tasks of the project of `files`, by method name."""
    require_jdk()
    root = make_project(tmp_path_factory.mktemp("java"), files, name=name)
    base = tmp_path_factory.mktemp(f"{name}-tasks")
    recipe = write_recipe(base / "recipe.yaml", f"""\
        name: {name}
        seed: 0
        sources:
          - path: {root}
        strategies: [stub-method]
        select: {{min_covering_tests: 1, min_body_lines: 2}}
        task: {{tests_visible: true}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)
    with trivial_solutions_of_before():  # isLoud's one test: `return true;` passes it
        taskforge.generate(str(recipe), out=str(base / "out"), workers=1)
    return {t.record["deleted"][0]["symbol"].rsplit(".", 1)[-1]: t
            for t in taskforge.load_tasks(str(base / "out"))}


@pytest.fixture(scope="module")
def tasks(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, taskforge.Task]:
    """stub-method's tasks of the JUnit 5 project, by method name."""
    return stub_method_tasks(PROJECT, "jwords", tmp_path_factory)


def look_telling(workspace: Path, name: str) -> None:
    source = workspace / "src/main/java/jwords/Words.java"
    text = source.read_text()
    assert text.count(STUB) == 1, text
    source.write_text(text.replace(STUB, LOOK_TELLING[name].strip()))


@pytest.mark.slow
def test_a_stub_that_reads_the_expected_value_scores_zero(tasks, tmp_path: Path) -> None:
    assert {"shout", "vowels", "literalAtCall"} <= set(tasks), sorted(tasks)
    box = require("bwrap")
    for name in ("shout", "vowels"):
        task = tasks[name]
        workspace = task.materialize(tmp_path / name)
        look_telling(workspace, name)
        copied_and_caught(task, workspace, box, naive_java_reward, tmp_path / f"naive-{name}")


@pytest.mark.slow
def test_every_reference_passes_with_every_copy(tasks, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reference scores 1.0 with every copy planted; it fails each changed test as
    honest code does (the value before against the value now, read from the signed
    channel), so the original code runs only for literalAtCall, whose copy passes."""
    monkeypatch.setattr(grading_run, "draw_expectation_copies", functools.partial(
        expectations.draw_expectation_copies, limit=100))
    for name, task in sorted(tasks.items()):
        runs = count_calls(monkeypatch, grading_run, "run_on_the_original")
        workspace = task.materialize(tmp_path / name)
        apply_patch(workspace, task.record["patch"])
        result = task.grade(workspace, sandbox="bwrap")
        assert (result.reward, result.tampered) == (1.0, ()), (name, result)
        assert len(runs) == (name == "literalAtCall"), name


@pytest.mark.slow
def test_a_copy_the_original_passes_too_costs_the_reference_nothing(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """literalAtCall's test passes with any literal on the original code: the run on the
    original forgives its copy; without that run the reference scores 0 (the control)."""
    task = tasks["literalAtCall"]
    assert task.record["FAIL_TO_PASS"] == ["jwords.WordsTest::readsItsCallSite()"]
    workspace = task.materialize(tmp_path / "ws")
    apply_patch(workspace, task.record["patch"])
    runs = count_calls(monkeypatch, grading_run, "run_on_the_original")
    assert task.grade(workspace, sandbox="bwrap").reward == 1.0
    assert len(runs) == 1
    monkeypatch.setattr(grading_run, "run_on_the_original", lambda *args, **kwargs: None)
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 0.0 and any("readsItsCallSite" in t for t in result.tampered), \
        result


RULES = """\
    package p;

    import static org.junit.jupiter.api.Assertions.assertEquals;

    import org.junit.jupiter.api.Test;

    class ATest {
        @Test
        void plain() {
            String word = "x";
            assertEquals("HELLO!", W.shout(word));
        }

        @Test
        void swapped() {
            Assertions.assertEquals(W.count(), -42L); // a comment after it
        }

        @Test
        void empty() { assertEquals("", W.text()); }

        @Test
        void bothLiterals() { assertEquals("a", "b"); }

        @Test
        void escaped() { assertEquals("a\\n", W.text()); }

        @Test
        void tooLong() { assertEquals(1234567890, W.count()); }

        @Test
        void returnsEarly() { if (W.flag()) return; assertEquals("a", W.text()); }

        @Test
        void notLast() { assertEquals("a", W.text()); W.text(); }

        @Test
        void withMessage() { assertEquals("a", W.text(), "why"); }

        @Test
        void messageNotALiteral() { assertEquals("a", W.text(), W.why()); }

        @Test
        void delta() { assertEquals(5, W.count(), 1); }

        @Test
        @org.junit.jupiter.api.Disabled
        void disabled() { assertEquals("a", W.text()); }

        @org.junit.jupiter.params.ParameterizedTest
        void parameterized() { assertEquals("a", W.text()); }

        @Test
        void inherited() { assertEquals("a", W.text()); }

        @org.junit.jupiter.api.Nested
        class Inner {
            @Test
            void nested() { assertEquals(7, W.count()); }
        }
    }
    """
QUALIFYING = {"p.ATest::plain()": '"HELLO!"', "p.ATest::swapped()": "-42L",
              "p.ATest::empty()": '""', "p.ATest$Inner::nested()": "7",
              "p.ATest::withMessage()": '"a"'}


def test_which_tests_qualify(tmp_path: Path) -> None:
    """Only a test honest code certainly fails once changed, whose file still compiles; a
    test of that name in a subclass would fail too (the one run as `SubTest::inherited()`)."""
    path = tmp_path / "src/test/java/p/ATest.java"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(RULES))
    tests = [f"p.ATest::{m}()" for m in re.findall(r"void (\w+)\(\)", RULES)
             if m != "nested"] + ["p.ATest$Inner::nested()"]
    selected = [*tests, "p.SubTest::inherited()"]
    copies, changed = expectations.draw_expectation_copies(tmp_path, tests, selected,
                                                           rng=random.Random(3), limit=100)
    assert {c.test_id: c.was for c in copies} == QUALIFYING
    text = changed["src/test/java/p/ATest.java"].decode()
    for copy in copies:
        assert copy.now != copy.was and len(copy.now) >= len(copy.was)
        assert copy.now in text
    # with a Unicode escape of an ASCII character outside a comment, or one that could end a
    # comment, none (javac reads it before the parser: `\\u000a` ends a line comment); in a
    # comment otherwise, or of a character beyond ASCII, the same
    for place, escape, kept in (("// a comment", "\\u000a", False),
                                ("// a comment", "\\u002a", False), ('"x"', "\\u0041", False),
                                ("// a comment", "\\u0041", True), ("// a comment", "\\u0000", True),
                                ("// a comment", "\\uD83D\\uDE00", True), ('"x"', "\\u00e9", True)):
        path.write_text(textwrap.dedent(RULES).replace(place, place[:-1] + escape + place[-1]))
        drawn, _ = expectations.draw_expectation_copies(tmp_path, tests, selected,
                                                        rng=random.Random(3), limit=100)
        assert len(drawn) == (len(QUALIFYING) if kept else 0), (place, escape)
    # of two or more FAIL_TO_PASS tests one stays as it is
    path.write_text(textwrap.dedent(RULES))
    few, _ = expectations.draw_expectation_copies(tmp_path, tests[:2], selected,
                                                  rng=random.Random(3), limit=100)
    assert len(few) == 1


JUNIT4_RULES = """\
    package p;

    import static org.junit.Assert.*;

    import org.junit.Test;

    public class BTest {
        @Test
        public void plain() { assertEquals(7, W.count()); }

        @Test
        public void withMessage() { assertEquals("why", "a", W.text()); }

        @Test
        public void messageLast() { assertEquals("a", W.text(), "why"); }

        @Test
        public void delta() { assertEquals(5, W.count(), 1); }

        @Test
        public void qualified() { org.junit.Assert.assertEquals("m", -3L, W.count()); }
    }
    """


@pytest.mark.parametrize(("imports", "qualifying"), [
    # (`messageLast` is JUnit 4's `assertEquals(message, expected, actual)` too: "why" the
    # value compared)
    ("import static org.junit.Assert.*;",
     {"p.BTest::plain()": "7", "p.BTest::withMessage()": '"a"', "p.BTest::messageLast()": '"why"',
      "p.BTest::qualified()": "-3L"}),
    # both JUnits' assertEquals imported: which a bare call with three arguments is, unsure
    ("import static org.junit.Assert.*;\nimport static org.junit.jupiter.api.Assertions.*;",
     {"p.BTest::plain()": "7", "p.BTest::qualified()": "-3L"}),
    # JUnit 5's: the message last (a string literal, so never a delta)
    ("import static org.junit.jupiter.api.Assertions.assertEquals;",
     {"p.BTest::plain()": "7", "p.BTest::messageLast()": '"a"', "p.BTest::qualified()": "-3L"}),
], ids=["junit4", "both", "junit5"])
def test_which_tests_with_a_message_qualify(imports: str, qualifying: dict[str, str],
                                            tmp_path: Path) -> None:
    """A message moves the compared pair: JUnit 4 puts it first, JUnit 5 last. Only where
    the call is certainly one JUnit's and its message a string literal (a third number is a
    delta)."""
    path = tmp_path / "src/test/java/p/BTest.java"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(JUNIT4_RULES).replace(
        "import static org.junit.Assert.*;", imports))
    tests = [f"p.BTest::{m}()" for m in re.findall(r"void (\w+)\(\)", JUNIT4_RULES)]
    copies, changed = expectations.draw_expectation_copies(tmp_path, tests, tests,
                                                           rng=random.Random(5), limit=100)
    assert {c.test_id: c.was for c in copies} == qualifying
    text = changed["src/test/java/p/BTest.java"].decode()
    assert all(c.now in text for c in copies)
    assert 'assertEquals("m", ' in text  # a message as it was


BOOLEAN_RULES = """\
    package p;

    import static org.junit.jupiter.api.Assertions.*;

    import org.junit.jupiter.api.Assertions;
    import org.junit.jupiter.api.Test;

    class CTest {
        @Test
        void bare() { assertTrue(W.flag()); }

        @Test
        void negated() { assertFalse(W.flag(), "why"); }

        @Test
        void qualified() { Assertions.assertFalse(W.flag()); }

        @Test
        void literal() { assertTrue(true); }

        @Test
        void messageFirst() { assertTrue("why", W.flag()); }

        @Test
        void supplied() { assertTrue(W.flag(), W::why); }
    }
    """
BOOLEAN_QUALIFYING = {"p.CTest::bare()": ("true", "false"),
                      "p.CTest::negated()": ("false", "true"),
                      "p.CTest::qualified()": ("false", "true")}


@pytest.mark.parametrize(("change", "qualifying"), [
    ((), BOOLEAN_QUALIFYING),
    # only assertTrue imported: a bare assertFalse would not compile
    ((("import static org.junit.jupiter.api.Assertions.*;",
       "import static org.junit.jupiter.api.Assertions.assertTrue;\n"
       "import static org.junit.jupiter.api.Assertions.assertFalse;"),),
     BOOLEAN_QUALIFYING),
    ((("import static org.junit.jupiter.api.Assertions.*;",
       "import static org.junit.jupiter.api.Assertions.assertTrue;"),),
     {"p.CTest::qualified()": ("false", "true")}),
    # a superclass, an interface's default method or a method of the class may be what a
    # bare name calls
    ((("class CTest {", "class CTest extends Base {"),),
     {"p.CTest::qualified()": ("false", "true")}),
    ((("class CTest {", "class CTest implements Checks {"),),
     {"p.CTest::qualified()": ("false", "true")}),
    ((("class CTest {", "class CTest {\n    static void assertFalse(boolean b) {}\n"),),
     {"p.CTest::qualified()": ("false", "true")}),
], ids=["star", "both-named", "one-named", "extends", "implements", "declares"])
def test_which_boolean_assertions_qualify(change: tuple[tuple[str, str], ...],
                                          qualifying: dict[str, tuple[str, str]],
                                          tmp_path: Path) -> None:
    """`assertTrue(C)` becomes `assertFalse(C)` and the other way, where javac certainly
    resolves the other name to the same JUnit class (or the whole file would not compile,
    and every honest solution would fail it); the condition no literal."""
    text = textwrap.dedent(BOOLEAN_RULES)
    for old, new in change:
        text = text.replace(old, new)
    path = tmp_path / "src/test/java/p/CTest.java"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    tests = [f"p.CTest::{m}()" for m in re.findall(r"void (\w+)\(\)", BOOLEAN_RULES)]
    copies, changed = expectations.draw_expectation_copies(tmp_path, tests, tests,
                                                           rng=random.Random(1), limit=100)
    assert {c.test_id: (c.was, c.now) for c in copies} == qualifying
    assert all(c.two_valued for c in copies)
    flipped = {"p.CTest::bare()": "void bare() { assertFalse(W.flag()); }",
               "p.CTest::negated()": 'void negated() { assertTrue(W.flag(), "why"); }',
               "p.CTest::qualified()": "void qualified() { Assertions.assertTrue(W.flag()); }"}
    new_text = changed["src/test/java/p/CTest.java"].decode()
    assert all(flipped[c.test_id] in new_text for c in copies)


def test_a_two_valued_copy_passed_counts_after_a_pass_in_the_grading_run() -> None:
    """A wrong solution fails a boolean test in the grading run and may well pass its other
    value: a pass in the copies' run is a finding only after a pass in the first."""
    copy = Copy("p.CTest::bare()", "true", "false", two_valued=True)
    passed = {copy.test_id: "passed"}
    assert copy_findings([copy], passed, set(), passed)
    assert not copy_findings([copy], passed, set(), {copy.test_id: "failed"})
    literal = Copy("p.ATest::plain()", '"a"', '"b"')
    assert copy_findings([literal], {literal.test_id: "passed"}, set(),
                         {literal.test_id: "failed"})


@pytest.mark.slow
# (-1: no value the changed `5` can take; `return 0` passed a 5 changed to 0, by the other
# finding, one grading in nine)
@pytest.mark.parametrize("second", ["throw new UnsupportedOperationException();", "return -1;"],
                         ids=["throws", "negative"])
def test_a_stub_that_reads_the_answer_in_the_first_run_only_scores_zero(
        tasks, second: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """vowels has one FAIL_TO_PASS test, so the copies' run changes it at every grading: a
    stub that reads the answer in one run of two at random wins when its coin is right (one
    grading in four). Made deterministic (the answer in the first run only, a marker file
    outside the workspace, which `none` lets outlive a run): it fails the copies' run, as
    honest code does, but not as honest code does it (the value before against the value
    now). Without that check (the positive control) it scores 1.0 under the grade with every
    check; with it 0, the test named, after one run on the original code."""
    task = tasks["vowels"]
    assert task.record["FAIL_TO_PASS"] == ["jwords.WordsTest::countsVowels()"]
    marker = tmp_path / "marker"
    workspace = task.materialize(tmp_path / "ws")
    source = workspace / "src/main/java/jwords/Words.java"
    source.write_text(source.read_text().replace(STUB, first_run_only(marker, second)))
    runs = count_calls(monkeypatch, grading_run, "run_on_the_original")
    assert task.record["FAIL_TO_PASS"] == ["jwords.WordsTest::countsVowels()"]
    lucky_once_then_caught(task, workspace, marker, lambda patched: patched.setattr(
        grading_run, "fails_as_honest_code_does", lambda *args: True), monkeypatch)
    assert len(runs) == 1  # (none in the lucky grading: every failure there honest)


def test_what_an_honest_failure_compares() -> None:
    """The value before against the value now, in either order, as JUnit shows them."""
    word = Copy("p.ATest::a()", '"HELLO!"', '"HELQO!"')
    before, now = ["java.lang.String", "HELLO!"], ["java.lang.String", "HELQO!"]
    assert expectations.fails_as_honest_code_does(word, [now, before])
    assert expectations.fails_as_honest_code_does(word, [before, now])
    assert not expectations.fails_as_honest_code_does(word, [now, ["java.lang.String", ""]])
    assert not expectations.fails_as_honest_code_does(word, None)
    assert not expectations.fails_as_honest_code_does(word, [now])
    number = Copy("p.ATest::b()", "-42L", "-47L")
    assert expectations.fails_as_honest_code_does(
        number, [["java.lang.Long", "-47"], ["java.lang.Long", "-42"]])
    assert not expectations.fails_as_honest_code_does(
        number, [["java.lang.Long", "47"], ["java.lang.Long", "-42"]])
    assert expectations.agrees_with_the_original([before, now], [before, now])
    assert not expectations.agrees_with_the_original([before, now], [now, now])


# The review's attack on the first version: the look-telling stub also blanks the assertion
# that called it in the copy's test source (the sources are compiled before the tests run, so
# the run itself is not changed). The run on the original code took the changed test file
# from the copy after the run, found an empty test there passing and forgave the copy.
BLANKING = LOOK_TELLING["vowels"].replace(
    "                if (m.find()) {\n",
    "                if (m.find()) {\n"
    "                    java.util.List<String> all = new java.util.ArrayList<>(\n"
    "                        java.nio.file.Files.readAllLines(file));\n"
    "                    all.set(frame.getLineNumber() - 1, \";\");\n"
    "                    java.nio.file.Files.write(file, all);\n")


@pytest.mark.slow
def test_a_stub_that_blanks_the_changed_test_scores_zero(
        tasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two defences, each enough alone: the original code runs the test files as the grader
    wrote them, and a test file the run changed disqualifies. With both taken back to the
    first version (the control), the stub scored 1.0 under the grade with every check."""
    task = tasks["vowels"]
    assert LOOK_TELLING["vowels"] != BLANKING
    workspace = task.materialize(tmp_path / "ws")
    source = workspace / "src/main/java/jwords/Words.java"
    source.write_text(source.read_text().replace(STUB, BLANKING.strip()))
    real = grading_run.run_on_the_original

    def from_the_copy_after_the_run(found, changed, snapshot_root, runner, scratch):
        copy = scratch.parent / "workspace"
        return real(found, {rel: (copy / rel).read_bytes() for rel in changed},
                    snapshot_root, runner, scratch)

    with monkeypatch.context() as first_version:
        first_version.setattr(grading_run, "run_on_the_original", from_the_copy_after_the_run)
        first_version.setattr(grading_run, "rewritten_during_run", lambda *args: [])
        won = task.grade(workspace, sandbox="bwrap")
        assert (won.reward, won.tampered) == (1.0, ()), won
    with monkeypatch.context() as unchecked_files:
        unchecked_files.setattr(grading_run, "rewritten_during_run", lambda *args: [])
        result = task.grade(workspace, sandbox="bwrap")
        assert result.reward == 0.0, result
        assert any(line.startswith("expectation copy jwords.WordsTest::countsVowels() passed")
                   for line in result.tampered), result.tampered
    result = task.grade(workspace, sandbox="bwrap")
    assert result.reward == 0.0, result
    assert any(line.startswith("test files were rewritten while the tests ran: "
                               "src/test/java/jwords/WordsTest.java") for line in result.tampered), \
        result.tampered


# JUnit 4 compares anything but two strings with a plain AssertionError from
# `Assert.failNotEquals`, whose message alone says what it compared.
JUNIT4_PROJECT = {
    "pom.xml": PROJECT["pom.xml"].replace("jwords</", "jwords4</").replace(
        "<groupId>org.junit.jupiter</groupId>", "<groupId>junit</groupId>").replace(
        "<artifactId>junit-jupiter</artifactId>", "<artifactId>junit</artifactId>").replace(
        "<version>5.9.2</version>", "<version>4.13.2</version>"),
    # JUnit 5's project's class, with two methods more
    "src/main/java/jwords/Words.java": PROJECT["src/main/java/jwords/Words.java"].replace(
        "            public static int vowels(", """\
            public static boolean isShort(String text) {
                int length = text.strip().length();
                return length > 0 && length < 4;
            }

            public static long letters(String text) {
                long count = 0;
                for (char c : text.toCharArray()) {
                    count += Character.isLetter(c) ? 1 : 0;
                }
                return count;
            }

            public static int vowels(""", 1),
    "src/test/java/jwords/WordsTest.java": """\
        package jwords;

        import static org.junit.Assert.*;

        import org.junit.Test;

        public class WordsTest {
            @Test
            public void tellsAShortWord() {
                assertTrue("a short word", Words.isShort(" hi "));
            }

            @Test
            public void countsVowels() {
                assertEquals(5, Words.vowels("Education"));
            }

            @Test
            public void countsLetters() {
                assertEquals("letters of a phrase", 13L, Words.letters("Hello, world and"));
            }
        }
        """,
}


@pytest.fixture(scope="module")
def junit4_tasks(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory
                 ) -> dict[str, taskforge.Task]:
    """stub-method's tasks of the JUnit 4 project, by method name."""
    return stub_method_tasks(JUNIT4_PROJECT, "jwords4", tmp_path_factory)


def first_run_only(marker: Path, second: str, reading: str = LOOK_TELLING["vowels"]) -> str:
    """The look-telling stub's body (`reading`), answering in the first run only (a marker
    file outside the workspace, which `none` lets outlive a run); `second`: what it does
    afterwards."""
    return (f'if (java.nio.file.Files.exists(java.nio.file.Path.of("{marker}"))) {{\n'
            f"    {second}\n}}\n"
            "try {\n"
            f'    java.nio.file.Files.createFile(java.nio.file.Path.of("{marker}"));\n'
            "} catch (java.io.IOException e) {\n"
            "    throw new java.io.UncheckedIOException(e);\n"
            "}\n") + reading.strip()


# JUnit 4's messages: the stub reads the second number of the call (`"...", 13L, ...`).
LETTERS = READ.format(pattern='"assertEquals\\\\(\\"[^\\"]*\\", ([0-9]+)L,"',
                      value="Long.parseLong(m.group(1))")


@pytest.mark.slow
def test_junit4_a_stub_that_reads_the_expected_value_with_a_message_scores_zero(
        junit4_tasks: dict[str, taskforge.Task], tmp_path: Path) -> None:
    """`assertEquals(message, expected, actual)` is copied too (before, only the
    two-argument form was, and the look-telling stub scored 1.0 on this task with every
    check, as it still does under the naive grader and without the checks)."""
    box = require("bwrap")
    task = junit4_tasks["letters"]
    workspace = task.materialize(tmp_path / "ws")
    source = workspace / "src/main/java/jwords/Words.java"
    source.write_text(source.read_text().replace(STUB, LETTERS.strip()))
    copied_and_caught(task, workspace, box, naive_java_reward, tmp_path / "naive")


@pytest.mark.slow
@pytest.mark.parametrize(("project", "name"), [("junit5", "isLoud"), ("junit4", "isShort")])
def test_a_stub_that_reads_the_asserted_boolean_scores_zero(
        tasks: dict[str, taskforge.Task], junit4_tasks: dict[str, taskforge.Task], project: str,
        name: str, tmp_path: Path) -> None:
    """A test ending with `assertTrue(C)` or `assertFalse(C)` expects a boolean: the stub
    returns true where the calling line says assertTrue. It scored 1.0 under the grade with
    every check (no copy reached such a test), as it still does under the naive grader and
    without the checks; the copy that turns the assertion into the other catches it."""
    box = require("bwrap")
    task = (tasks if project == "junit5" else junit4_tasks)[name]
    workspace = task.materialize(tmp_path / "ws")
    source = workspace / "src/main/java/jwords/Words.java"
    source.write_text(source.read_text().replace(STUB, ASSERTED.strip()))
    copied_and_caught(task, workspace, box, naive_java_reward, tmp_path / "naive")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "test", "reading", "second"), [
    ("vowels", "countsVowels", LOOK_TELLING["vowels"], "return -1;"),
    ("letters", "countsLetters", LETTERS, "return -1;"),
    ("isShort", "tellsAShortWord", ASSERTED, "throw new UnsupportedOperationException();"),
], ids=["two-arguments", "with-a-message", "assert-true"])
def test_junit4_a_stub_that_reads_the_answer_in_the_first_run_only_scores_zero(
        junit4_tasks: dict[str, taskforge.Task], name: str, test: str, reading: str,
        second: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JUnit 4's `assertEquals(long, long)` fails with a plain AssertionError: with only the
    exception classes that carry their sides read, nothing was compared on either side, the
    stub's failure (-1, a value no change of the literal gives) agreed with the original
    code's, and it scored 1.0 under the grade with every check (the control: the sides read
    from a plain AssertionError dropped from the channel). Read from `failNotEquals`'
    message (`expected:<6> but was:<-1>`, after the assertion's own message if it has one),
    it scores 0; the reference 1.0, its failure honest. JUnit 4's `assertTrue` fails with
    no message of its own: what it compared comes from its stack trace (the stub throws
    there, so nothing it compared agrees)."""
    task = junit4_tasks[name]
    assert task.record["FAIL_TO_PASS"] == [f"jwords.WordsTest::{test}()"]
    reference = task.materialize(tmp_path / "reference")
    apply_patch(reference, task.record["patch"])
    runs = count_calls(monkeypatch, grading_run, "run_on_the_original")
    assert task.grade(reference, sandbox="none").reward == 1.0
    assert runs == []  # its failure in the copies' run compared the value before with now
    marker = tmp_path / "marker"
    workspace = task.materialize(tmp_path / "ws")
    source = workspace / "src/main/java/jwords/Words.java"
    source.write_text(source.read_text().replace(STUB, first_run_only(marker, second, reading)))

    def without_message_sides(real):
        def read(channel, key):
            outcomes, compared = real(channel, key)
            return outcomes, {t: c for t, c in compared.items() if c[0][0] != ""}
        return read

    def disarm(before: pytest.MonkeyPatch) -> None:
        before.setattr(grading_run, "read_channel", without_message_sides(grading_run.read_channel))
        before.setattr(expectations, "read_channel",
                       without_message_sides(expectations.read_channel))

    lucky_once_then_caught(task, workspace, marker, disarm, monkeypatch)

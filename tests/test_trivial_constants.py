"""A constant is a trivial solution too: tests that only ever expect `False` of a predicate,
`0` of a count, `[]` or `{}` of a search, or check each item of a result (none, when it is
empty) pass for a constant body, and a task made of them rewards the agent for writing it.

The attack: the deleted function's body becomes `return False` (or `True`, `0`, `""`, `[]`,
`{}`; in JavaScript also `null`). Against the trivial-solution gate as it was (a `pass` /
`return None` body, an empty / `return undefined;` one: its positive control) each such
candidate became a task, and the constant scores 1.0 under the grader; with the constants
among the language's trivial solutions (`null_bodies`) each is rejected, in Python's screen
and in JavaScript's confirmation, and `taskforge verify` finds the tasks the old gate made.
A function with real tests stays a task, its record scoring every constant."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import (
    apply_patch,
    make_project,
    setuptools_pyproject,
    trivial_solutions_of_before,
    write_recipe,
)
from java_support import require_jdk
from test_java_expectations import PROJECT as JUNIT5_PROJECT

import taskforge
from taskforge.languages import language_named
from taskforge.languages.java import JavaLanguage
from taskforge.languages.javascript import JavaScriptLanguage
from taskforge.languages.python import PythonLanguage
from taskforge.languages.python.testing import screen as screen_module
from taskforge.materialize import materialize_record
from taskforge.sandbox import get_sandbox
from taskforge.verify.gates import score_null_solution

pytestmark = pytest.mark.slow  # real environments, two generate runs a language

PYTHON = {
    "pyproject.toml": setuptools_pyproject("onesided", "0.1"),
    "onesided/__init__.py": "",
    "onesided/checks.py": """\
        RESERVED = {"class", "def", "lambda"}
        DEFAULTS = {"colour": "blue", "size": 3}


        def is_reserved(word):
            lowered = word.strip().lower()
            return lowered in RESERVED


        def has_digit(text):
            digits = [c for c in text if c.isdigit()]
            return len(digits) > 0


        def error_count(lines):
            errors = [line for line in lines if line.startswith("ERROR")]
            return len(errors)


        def vowels_of(text):
            found = [c for c in text if c in "aeiou"]
            return found


        def problems(config):
            found = []
            if "name" not in config:
                found.append("name is missing")
            return found


        def missing_defaults(config):
            missing = {k: v for k, v in DEFAULTS.items() if k not in config}
            return missing


        def shout(text):
            cleaned = text.strip()
            return cleaned.upper() + "!"
        """,
    "tests/test_checks.py": """\
        from onesided.checks import (error_count, has_digit, is_reserved, missing_defaults,
                                     problems, shout, vowels_of)


        def test_plain_words_are_not_reserved():
            assert is_reserved("apple") is False
            assert is_reserved(" Banana ") is False


        def test_digits_are_found():
            assert has_digit("route 66") is True


        def test_a_clean_log_has_no_errors():
            assert error_count(["INFO up", "WARN slow"]) == 0


        def test_every_vowel_found_is_a_vowel():
            for c in vowels_of("rhythm and blues"):
                assert c in "aeiou"


        def test_a_named_config_has_no_problems():
            assert problems({"name": "x"}) == []


        def test_a_full_config_misses_no_default():
            assert missing_defaults({"colour": "red", "size": 1}) == {}


        def test_shout():
            assert shout(" hi ") == "HI!"
            assert shout("") == "!"
        """,
}
# Each one-sided function, and the constant that passes its tests (the first the gate
# tries: `error_count`'s `== 0` holds for `False` too)
PYTHON_WON_BY = {"is_reserved": "return False", "has_digit": "return True",
                 "error_count": "return False", "vowels_of": 'return ""',
                 "problems": "return []", "missing_defaults": "return {}"}
GOOD = "shout"  # the function with real tests in each project

JAVASCRIPT = {
    "package.json": '{"name": "onesided", "type": "module", "scripts": {"test": "node --test"}}',
    "src/checks.js": """\
        const RESERVED = new Set(['class', 'function', 'let']);

        export function isReserved(word) {
          const lowered = String(word).trim().toLowerCase();
          return RESERVED.has(lowered);
        }

        export function hasDigit(text) {
          const digits = [...String(text)].filter((c) => /[0-9]/.test(c));
          return digits.length > 0;
        }

        export function firstMatch(items, wanted) {
          const found = items.find((item) => item === wanted);
          return found === undefined ? null : found;
        }

        export function problems(config) {
          const found = [];
          if (!('name' in config)) found.push('name is missing');
          return found;
        }

        export function namesOf(table) {
          const names = {};
          for (const [key, value] of Object.entries(table)) names[key] = String(value);
          return names;
        }

        export function shout(text) {
          const cleaned = String(text).trim();
          return cleaned.toUpperCase() + '!';
        }
        """,
    "test/checks.test.js": """\
        import { test } from 'node:test';
        import assert from 'node:assert/strict';
        import { firstMatch, hasDigit, isReserved, namesOf, problems, shout } from '../src/checks.js';

        test('plain words are not reserved', () => {
          assert.equal(isReserved('apple'), false);
          assert.equal(isReserved(' Banana '), false);
        });
        test('digits are found', () => { assert.strictEqual(hasDigit('route 66'), true); });
        test('nothing matches in an empty list', () => {
          assert.strictEqual(firstMatch([], 'x'), null);
        });
        test('a named config has no problems', () => {
          assert.deepStrictEqual(problems({ name: 'x' }), []);
        });
        test('every name is a string', () => {
          const names = namesOf({ a: 1, b: true });
          for (const key of Object.keys(namesOf({}))) assert.equal(typeof names[key], 'string');
        });
        test('shout', () => {
          assert.equal(shout(' hi '), 'HI!');
          assert.equal(shout(''), '!');
        });
        """,
}
JAVASCRIPT_WON_BY = {"isReserved": "return false;", "hasDigit": "return true;",
                     "firstMatch": "return null;", "problems": "return [];",
                     "namesOf": "return true;"}

JAVA = {
    "pom.xml": JUNIT5_PROJECT["pom.xml"].replace("jwords</", "onesided</"),
    "src/main/java/onesided/Checks.java": """\
        package onesided;

        import java.util.ArrayList;
        import java.util.List;
        import java.util.Map;

        public final class Checks {
            private Checks() {
            }

            public static boolean hasDigit(String text) {
                long digits = text.chars().filter(Character::isDigit).count();
                return digits > 0;
            }

            public static int indexOfWord(List<String> words, String wanted) {
                int at = words.indexOf(wanted);
                return at;
            }

            public static List<String> problems(Map<String, String> config) {
                List<String> found = new ArrayList<>();
                if (!config.containsKey("name")) {
                    found.add("name is missing");
                }
                return found;
            }

            public static String squeeze(String text) {
                String squeezed = text.replaceAll("\\\\s+", " ");
                return squeezed.trim();
            }

            public static String shout(String text) {
                String cleaned = text.trim();
                return cleaned.toUpperCase() + "!";
            }
        }
        """,
    "src/test/java/onesided/ChecksTest.java": """\
        package onesided;

        import static org.junit.jupiter.api.Assertions.assertEquals;
        import static org.junit.jupiter.api.Assertions.assertTrue;

        import java.util.List;
        import java.util.Map;
        import org.junit.jupiter.api.Test;

        class ChecksTest {
            @Test
            void digitsAreFound() {
                assertTrue(Checks.hasDigit("route 66"));
            }

            @Test
            void aMissingWordIsNowhere() {
                assertEquals(-1, Checks.indexOfWord(List.of("a", "b"), "c"));
            }

            @Test
            void aNamedConfigHasNoProblems() {
                assertEquals(List.of(), Checks.problems(Map.of("name", "x")));
            }

            @Test
            void blanksSqueezeToNothing() {
                assertEquals("", Checks.squeeze("  \\t "));
            }

            @Test
            void shouts() {
                assertEquals("HI!", Checks.shout(" hi "));
                assertEquals("!", Checks.shout(""));
            }
        }
        """,
}
JAVA_WON_BY = {"hasDigit": "return true;", "indexOfWord": "return -1;",
               "problems": "return java.util.Collections.emptyList();", "squeeze": 'return "";'}
STUB = {"python": re.compile(r"raise NotImplementedError$", re.MULTILINE),
        "javascript": re.compile(re.escape('throw new Error("not implemented");')),
        "java": re.compile(re.escape('throw new UnsupportedOperationException("not implemented");'))}
STRATEGY = {"python": "stub-function", "javascript": "stub-function", "java": "stub-method"}


def generate(tmp: Path, files: dict[str, str], strategy: str) -> Path:
    root = make_project(tmp, files, name="onesided")
    out = tmp / "out"
    taskforge.generate(str(write_recipe(tmp / "recipe.yaml", f"""\
        name: onesided
        seed: 0
        sources:
          - path: {root}
        strategies: [{strategy}]
        select: {{min_covering_tests: 1, min_body_lines: 2}}
        task: {{tests_visible: true}}
        verify: {{repeats: 2, timeout_s: 300}}
        sandbox: bwrap
        """)), out=str(out), workers=2)
    return out


@pytest.fixture(scope="module", params=["python", "javascript", "java"])
def made(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One project's tasks under the old gate (the positive control) and under the gate."""
    language = request.param
    files, won_by, bodies = {
        "python": (PYTHON, PYTHON_WON_BY, PythonLanguage.null_bodies),
        "javascript": (JAVASCRIPT, JAVASCRIPT_WON_BY, JavaScriptLanguage.null_bodies),
        "java": (JAVA, JAVA_WON_BY, JavaLanguage.null_bodies),
    }[language]
    if language == "java":
        require_jdk()
    tmp = tmp_path_factory.mktemp(f"onesided-{language}")
    with trivial_solutions_of_before():
        old = generate(tmp / "old", files, STRATEGY[language])
    return {"language": language, "won_by": won_by, "bodies": bodies, "old": old,
            "new": generate(tmp / "new", files, STRATEGY[language]), "tmp": tmp}


def rejections(out: Path) -> dict[str, str]:
    """Each rejected candidate's reason and detail, by its function's short name."""
    journal = out / ".journal" / "tasks-00000-of-00001.jsonl"
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    return {re.split(r"[.:]", e["key"])[-1]: f"{e['reason']}: {e['detail']}"
            for e in entries if e["status"] == "rejected"}


def by_function(out: Path) -> dict[str, taskforge.Task]:
    return {t.record["deleted"][0]["symbol"].rsplit(".", 1)[-1]: t
            for t in taskforge.load_tasks(out)}


def constant_scores(task: taskforge.Task, body: str, tmp: Path) -> float:
    """The grader's reward for the task solved with `body` in place of its stub."""
    workspace = task.materialize(tmp / f"solved-{task.record['instance_id']}")
    language = task.record.get("language", "python")
    written = 0
    for path in {d["path"] for d in task.record["deleted"]}:
        text, n = STUB[language].subn(body, (workspace / path).read_text())
        (workspace / path).write_text(text)
        written += n
    assert written, task.record["instance_id"]
    return task.grade(workspace, sandbox=get_sandbox("bwrap")).reward


def won(language: str, body: str) -> str:
    """The rejection of a task `body` passes (Java names its second body whatever the type)."""
    named = JavaLanguage.null_bodies["return-other"] if language == "java" else body
    return f"trivial-solution: a `{named}` body passes every FAIL_TO_PASS test"


def test_under_the_old_gate_a_constant_earns_the_reward(made: dict) -> None:
    """The positive control: every one-sided function is a task, and its constant scores 1.0
    under the grader."""
    tasks = by_function(made["old"])
    assert set(tasks) == {*made["won_by"], GOOD}, rejections(made["old"])
    for name, body in made["won_by"].items():
        assert constant_scores(tasks[name], body, made["tmp"]) == 1.0, name


def test_a_task_a_constant_passes_is_no_task(made: dict) -> None:
    """Each is rejected, naming the first constant that passes its tests; the task that stays
    scored every trivial solution, none passing all its tests."""
    assert set(by_function(made["new"])) == {GOOD}, rejections(made["new"])
    assert rejections(made["new"]) == {name: won(made["language"], body)
                                       for name, body in made["won_by"].items()}
    nulls = by_function(made["new"])[GOOD].record["verification"]["null_solutions"]
    assert set(nulls) == set(made["bodies"].values())
    assert all(c["passed"] < c["of"] for c in nulls.values())


def test_verify_finds_the_tasks_the_old_gate_made(made: dict) -> None:
    tasks = by_function(made["old"])
    box = get_sandbox("bwrap")
    for name, body in made["won_by"].items():
        assert tasks[name].reverify(sandbox=box) == [won(made["language"], body)], name
    assert tasks[GOOD].reverify(sandbox=box) == []


def test_verify_scores_the_constants_in_one_server_as_fresh_runs_do(made: dict,
                                                                   tmp_path: Path) -> None:
    """Python's re-verification scores the constants of a screened record in one forking
    server (`Language.screen_trivial`) instead of a fresh run each: every score there is the
    fresh run's (the same tests passed before the first failure); JavaScript has no server."""
    language = language_named(made["language"])
    box = get_sandbox("bwrap")
    tasks = [*by_function(made["old"]).values(), *by_function(made["new"]).values()]
    if made["language"] != "python":
        assert language.screen_trivial(tasks[0].record, tasks[0].snapshot_root(),
                                       tasks[0].runner(box)) == {}
        return
    for task in tasks:
        record, root, runner = task.record, task.snapshot_root(), task.runner(box)
        served = language.screen_trivial(record, root, runner)
        assert set(served) == set(screen_module.CONSTANTS), record["instance_id"]
        for body in screen_module.CONSTANTS:
            null = {**record, "deletion_patch": language.with_null_body(record["deletion_patch"],
                                                                        body)}
            workspace, _removed = materialize_record(
                null, root, tmp_path / f"{record['instance_id']}-{body}")
            if record.get("test_patch"):  # (tests visible: none hidden)
                apply_patch(workspace, record["test_patch"])
            fresh = score_null_solution(workspace, list(record["FAIL_TO_PASS"]), runner)
            assert served[body] == fresh, (record["instance_id"], body)
        name = record["deleted"][0]["symbol"].rsplit(".", 1)[-1]
        assert [language.null_bodies[b] for b, c in served.items()
                if c["passed"] == c["of"]][:1] == ([PYTHON_WON_BY[name]] if name != GOOD else [])

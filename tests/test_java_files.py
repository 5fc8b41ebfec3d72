"""Java without a JVM: which files are tests and protected, detection, test ids from JUnit
unique ids, and every strategy on javademo (tree-sitter-java): candidates, a re-parsing task
state, javadoc and annotations kept, remove-method's rules, and the null-body rewrite of a
record's patch equal to what `apply(body=...)` writes."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from conftest import make_project
from java_support import JAVADEMO

from taskforge.languages import detect_language, language_named
from taskforge.languages.java.delete.syntax import parses_cleanly, trivial_statement
from taskforge.languages.java.testing import selector
from taskforge.languages.java.testing import test_id as junit_id
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline, Snapshot

JAVA = language_named("java")


def test_tests_and_protected_files() -> None:
    assert JAVA.is_test_file("src/test/java/a/BTest.java")
    assert JAVA.is_test_file("module/src/test/resources/data.txt")
    assert not JAVA.is_test_file("src/main/java/a/B.java")
    for rel in ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle.kts",
                "src/test/resources/junit-platform.properties",
                "src/main/resources/junit-platform.properties", ".mvn/maven.config"):
        assert JAVA.is_protected(rel), rel
    assert not JAVA.is_protected("src/main/java/a/B.java")
    assert not JAVA.is_protected("src/main/resources/META-INF/services/x")


def test_detection(tmp_path: Path) -> None:
    assert detect_language(JAVADEMO, "javademo").name == "java"
    gradle = make_project(tmp_path, {"build.gradle.kts": "plugins { java }\n",
                                     "src/test/java/a/ATest.java": "class ATest {}\n",
                                     "tools/gen.py": "print(1)\n"}, name="g")
    assert JAVA.detect(gradle)
    no_tests = make_project(tmp_path, {"pom.xml": "<project/>\n",
                                       "src/main/java/a/A.java": "class A {}\n"}, name="n")
    assert not JAVA.detect(no_tests)


def test_ids_from_unique_ids() -> None:
    jupiter = "[engine:junit-jupiter]/[class:a.BTest]"
    assert junit_id(f"{jupiter}/[method:adds()]") == "a.BTest::adds()"
    assert junit_id(f"{jupiter}/[nested-class:Inner]/[method:x(int)]") == "a.BTest$Inner::x(int)"
    template = f"{jupiter}/[test-template:r(java.lang.String)]/[test-template-invocation:#3]"
    assert junit_id(template) == "a.BTest::r(java.lang.String)[3]"
    assert selector("a.BTest::r(java.lang.String)[3]") == "a.BTest#r(java.lang.String)"
    assert junit_id("[engine:junit-vintage]/[runner:a.OldTest]/[test:works(a.OldTest)]") == \
        "a.OldTest::works()"
    assert junit_id(jupiter) is None  # a container, not a test


def test_trivial_statements_follow_the_return_type() -> None:
    assert trivial_statement("void") == "return;"
    assert trivial_statement("boolean") == "return false;"
    assert trivial_statement("long") == "return 0L;"
    assert trivial_statement("int") == "return 0;"
    assert trivial_statement("Optional<V>") == "return null;"
    assert trivial_statement("int[]") == "return null;"
    # the other everyday value, where the type has one; else the default again
    other = {"boolean": "return true;", "java.lang.String": 'return "";', "int": "return -1;",
             "long": "return -1L;", "List<String>": "return java.util.Collections.emptyList();",
             "java.util.Map<K, List<V>>": "return java.util.Collections.emptyMap();",
             "Optional<V>": "return java.util.Optional.empty();", "void": "return;",
             "int[]": "return null;", "Object": "return null;", "double": "return 0.0d;"}
    for return_type, statement in other.items():
        assert trivial_statement(return_type, "return-other") == statement, return_type


@pytest.fixture(scope="module")
def project():
    snapshot = Snapshot(id="j" * 40, name="javademo", source=str(JAVADEMO), commit="0" * 40,
                        root=JAVADEMO, license=None)
    return JAVA.project(snapshot, None)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def everything_covered(project) -> Baseline:
    """Every line of every source covered by one stable test (strategies need coverage)."""
    coverage = {p: {ln: (0,) for ln in range(1, 500)} for p in project.source_files}
    return Baseline(key="k", tests=("t.ATest::a()",), stable=("t.ATest::a()",), flaky=(),
                    failing=(), run_seconds=(), coverage=coverage)


def _patch(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        f"a/{path}", f"b/{path}"))


def test_every_candidate_applies_and_parses(project, everything_covered) -> None:
    counts = {}
    for name in JAVA.strategies:
        strategy = JAVA.strategy(name)
        candidates = strategy.candidates(project, everything_covered, SelectOptions())
        counts[name] = len(candidates)
        for candidate in candidates:
            first = strategy.apply(project, candidate, TaskOptions())
            again = strategy.apply(project, candidate, TaskOptions())
            assert first.new_texts == again.new_texts
            for text in first.new_texts.values():
                assert parses_cleanly(text.encode())
            for body in JAVA.null_bodies:
                for text in strategy.apply(project, candidate, TaskOptions(),
                                           body=body).new_texts.values():
                    assert parses_cleanly(text.encode())
    # the research's brute force found 71 methods with bodies of 3+ lines
    assert counts["stub-method"] == 71
    assert counts["stub-class"] >= 10 and counts["remove-method"] >= 10


def test_the_null_body_rewrite_equals_apply(project, everything_covered,
                                            tmp_path: Path) -> None:
    """The record's deletion, rewritten, applied to the original gives `apply(body=...)`'s
    text (as a patch it may differ: `return true;` of a predicate that ends so lines up with
    the original's last line in a diff of their own)."""
    from taskforge.patches import apply_patch

    checked = 0
    for name in ("stub-method", "stub-class"):
        strategy = JAVA.strategy(name)
        for candidate in strategy.candidates(project, everything_covered, SelectOptions()):
            original = project.text(candidate.path)
            task = strategy.apply(project, candidate, TaskOptions()).new_texts[candidate.path]
            for body in JAVA.null_bodies:
                trivial = strategy.apply(project, candidate, TaskOptions(),
                                         body=body).new_texts[candidate.path]
                workspace = tmp_path / f"{checked}"
                (workspace / candidate.path).parent.mkdir(parents=True)
                (workspace / candidate.path).write_text(original)
                apply_patch(workspace, JAVA.with_null_body(
                    _patch(candidate.path, original, task), body))
                assert (workspace / candidate.path).read_text() == trivial, candidate.symbol
                checked += 1
    assert checked >= 160


def test_stub_keeps_signature_javadoc_and_annotations(project, everything_covered) -> None:
    strategy = JAVA.strategy("stub-method")
    candidate = next(c for c in strategy.candidates(project, everything_covered, SelectOptions())
                     if c.symbol == "javademo.money.Money.allocate")
    deletion = strategy.apply(project, candidate, TaskOptions())
    text = deletion.new_texts[candidate.path]
    assert "public Money[] allocate(int... ratios) {\n" \
           "        throw new UnsupportedOperationException(\"not implemented\");\n    }" in text
    assert "negative ratio" not in text
    assert deletion.statement_facts["signature"] == "public Money[] allocate(int... ratios)"
    assert "ratios" in deletion.statement_facts["docstring"]
    assert text.count("/**") == project.text(candidate.path).count("/**")
    lru = next(c for c in strategy.candidates(project, everything_covered, SelectOptions())
               if c.symbol == "javademo.store.LruStore.get")
    stubbed = strategy.apply(project, lru, TaskOptions()).new_texts[lru.path]
    assert "@Override\n    public Optional<V> get(K key) {\n        throw new" in stubbed


def test_remove_method_rules(project, everything_covered) -> None:
    strategy = JAVA.strategy("remove-method")
    candidates = strategy.candidates(project, everything_covered, SelectOptions())
    symbols = {c.symbol for c in candidates}
    assert not any(s.startswith("javademo.store.KeyValueStore.") for s in symbols)  # interface
    assert "javademo.store.LruStore.get" not in symbols  # @Override of an interface method
    assert "javademo.expr.Parser.parseExpression" not in symbols  # called by main code
    times = next(c for c in candidates if c.symbol == "javademo.money.Money.times")
    deletion = strategy.apply(project, times, TaskOptions())
    text = deletion.new_texts[times.path]
    assert "public Money times(" not in text  # both overloads go
    assert len(deletion.deleted) == 2
    # the test files that call it no longer compile: their tests cover the deletion
    assert any(t.startswith("javademo.money.MoneyTest") for t in times.covering_tests) or \
        times.covering_tests == ("t.ATest::a()",)


POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>x</groupId><artifactId>y</artifactId><version>1</version>
  <properties><maven.compiler.source>1.8</maven.compiler.source>
    <jupiter.version>5.9.2</jupiter.version></properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId>
      <version>${jupiter.version}</version><scope>test</scope></dependency>
    %s
  </dependencies>
</project>
"""


def test_dependencies_resolve_in_debians_repository_or_set_the_source_aside(tmp_path: Path
                                                                             ) -> None:
    from java_support import require_jdk

    from taskforge.errors import UserError
    from taskforge.languages.java.env import spec_for

    require_jdk()
    test = {"src/test/java/a/ATest.java": "class ATest {}\n"}
    ok = make_project(tmp_path, {"pom.xml": POM % "", **test}, name="ok")
    spec = spec_for(ok, "ok")
    assert "org.junit.jupiter:junit-jupiter:5.9.2" in spec.requirements
    assert any(n.startswith("org.opentest4j:opentest4j:") for n in spec.requirements)
    assert spec.test_command == ("javac+console-launcher", "--release", "8")
    assert all(Path(jar).is_file() for jar in spec.install)
    pioneer = ("<dependency><groupId>org.junit-pioneer</groupId><artifactId>junit-pioneer"
               "</artifactId><version>1.9.1</version><scope>test</scope></dependency>")
    # a test-scope dependency Debian lacks: only the test files that import it are set aside
    # (they do not compile), and the decisions say why
    tests_only = make_project(tmp_path, {"pom.xml": POM % pioneer, **test}, name="tests-only")
    assert any("org.junit-pioneer:junit-pioneer:1.9.1 (test)" in d
               for d in spec_for(tests_only, "tests-only").decisions)
    # ... one the main code needs sets the source aside
    needed = pioneer.replace("<scope>test</scope>", "")
    missing = make_project(tmp_path, {"pom.xml": POM % needed, **test}, name="missing")
    with pytest.raises(UserError, match=r"org.junit-pioneer:junit-pioneer:1.9.1 \(compile\).*"
                                        r"Maven Central"):
        spec_for(missing, "missing")
    gradle = make_project(tmp_path, {
        "build.gradle": "plugins { id 'java' }\njava { sourceCompatibility = '17' }\n"
                        "dependencies {\n"
                        "    testImplementation 'org.junit.jupiter:junit-jupiter:5.9.2'\n"
                        "    testImplementation \"org.hamcrest:hamcrest:2.2\"\n}\n", **test},
        name="gradle")
    spec = spec_for(gradle, "gradle")
    assert {"org.junit.jupiter:junit-jupiter:5.9.2", "org.hamcrest:hamcrest:2.2"} <= \
        set(spec.requirements)
    assert spec.test_command[-1] == "17"


def test_the_null_body_rewrite_of_a_removal_gives_what_apply_writes(project, everything_covered,
                                                                    tmp_path: Path) -> None:
    """remove-method: the record's removal, rewritten, puts the methods back with trivial
    bodies: applied to the original it gives `apply(body=...)`'s text, for every candidate."""
    from taskforge.patches import apply_patch, diff_texts

    strategy = JAVA.strategy("remove-method")
    checked = 0
    for candidate in strategy.candidates(project, everything_covered, SelectOptions()):
        original = project.text(candidate.path)
        task = strategy.apply(project, candidate, TaskOptions()).new_texts[candidate.path]
        for body in JAVA.null_bodies:
            trivial = strategy.apply(project, candidate, TaskOptions(),
                                     body=body).new_texts[candidate.path]
            workspace = tmp_path / f"{checked}"
            (workspace / candidate.path).parent.mkdir(parents=True)
            (workspace / candidate.path).write_text(original)
            apply_patch(workspace, JAVA.with_null_body(
                diff_texts({candidate.path: (original, task)}), body))
            assert (workspace / candidate.path).read_text() == trivial, candidate.symbol
            checked += 1
    assert checked >= 20


def test_the_grading_copy_leaves_out_build_outputs_and_compiled_code(tmp_path: Path) -> None:
    from taskforge.languages.java.grading import copy_solution, runner_tampering

    solution = make_project(tmp_path, {
        "pom.xml": "<project/>\n", "bin/run.sh": "echo\n", "lib/tracked.jar": "x",
        "src/main/java/a/build/Tool.java": "package a.build; class Tool {}\n",
        "target/classes/a/A.class": "x", "src/main/resources/a/A.class": "x", "out/x.txt": "x",
        "src/main/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener":
            "a.Spy\n",
        "src/main/java/a/Spy.java": "package a;\n@org.junit.jupiter.api.extension.ExtendWith(X.class)\n"
                                    "class Spy {}\n"}, name="sol")
    snapshot_files = {"pom.xml", "bin/run.sh", "lib/tracked.jar"}
    dropped = copy_solution(solution, tmp_path / "copy", snapshot_files)
    assert sorted(d.split(" ")[1] for d in dropped) == ["out", "src/main/resources/a/A.class",
                                                       "target"]
    copy = tmp_path / "copy"
    assert (copy / "bin/run.sh").is_file() and (copy / "lib/tracked.jar").is_file()
    assert (copy / "src/main/java/a/build/Tool.java").is_file()
    findings = runner_tampering(copy)
    assert all(f.disqualifies for f in findings) and len(findings) == 2
    assert not list((copy / "src/main/resources/META-INF/services").iterdir())

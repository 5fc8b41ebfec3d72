"""Java for real: javac and the JUnit console launcher in each sandbox (docker mounts the
host's JDK read-only), ids and selection from the JUnit XML, no class file left in the
workspace, compile errors as `<collect-error>` markers, and per-test JaCoCo coverage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from java_support import JAVADEMO, require_jdk
from test_sandbox import require

from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.model import Environment, Snapshot, SourceSpec

pytestmark = pytest.mark.slow
JAVA = language_named("java")
ALLOCATION = "javademo.money.MoneyTest$Allocation::splitsByRatio()"
TEMPLATE = "javademo.text.StringUtilsTest::snakeToCamel(java.lang.String, java.lang.String)[2]"
INHERITED = "javademo.store.HashStoreTest::putThenGet()"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Environment, Path]:
    require_jdk()
    cache = tmp_path_factory.mktemp("cache")
    snapshot = Snapshot(id="r" * 40, name="javademo", source=str(JAVADEMO), commit="0" * 40,
                        root=JAVADEMO, license=None)
    prepared = JAVA.prepare(SourceSpec(kind="path", location=str(JAVADEMO)), snapshot, cache,
                            lambda _m: None)
    assert any("javac+console-launcher" in note for note in prepared.notes)
    record = JAVA.environment_record(prepared.env)
    assert "org.junit.jupiter:junit-jupiter:5.9.2" in record["requirements"]
    assert record["way"] == "javac+console-launcher" and record["release"] == "11"
    assert not list(prepared.env.venv.rglob("*.class"))  # the support jar is built, not kept
    rebuilt = JAVA.environment_from_record(record, snapshot, cache)
    assert rebuilt.key == prepared.env.key
    return snapshot, prepared.env, cache


@pytest.mark.parametrize("name", ["none", "bwrap", "docker"])
def test_ids_selection_and_no_class_files(project, tmp_path: Path, name: str) -> None:
    snapshot, env, _cache = project
    sandbox = require(name)
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    run = JAVA.run_tests(env, workspace, sandbox, timeout=600)
    assert len(run.outcomes) == 127 and set(run.outcomes.values()) == {"passed"}, run.log_tail
    assert {ALLOCATION, TEMPLATE, INHERITED} <= set(run.outcomes)
    assert not [p for p in workspace.rglob("*") if p.suffix in (".class", ".jar")]
    chosen = [ALLOCATION, TEMPLATE, INHERITED, "javademo.Gone::nothing()"]
    picked = JAVA.run_tests(env, workspace, sandbox, timeout=600, select=chosen)
    assert picked.outcomes == {ALLOCATION: "passed", TEMPLATE: "passed", INHERITED: "passed",
                               "javademo.Gone::nothing()": "error"}


def test_compile_errors_are_collection_errors(project, tmp_path: Path) -> None:
    snapshot, env, _cache = project
    sandbox = require("bwrap")
    workspace = tmp_path / "ws"
    shutil.copytree(snapshot.root, workspace)
    broken = workspace / "src/test/java/javademo/util/PairTest.java"
    broken.write_text(broken.read_text().replace("void valueSemantics() {",
                                                 "void valueSemantics() { int x = ;"))
    collected = JAVA.collect(env, workspace, sandbox, timeout=600)
    assert "<collect-error>::src/test/java/javademo/util/PairTest.java" in collected
    assert ALLOCATION in collected and "javademo.util.PairTest::valueSemantics()" not in collected
    main = workspace / "src/main/java/javademo/util/Lists.java"
    main.write_text(main.read_text().replace("public final class Lists", "public final class Lists {{"))
    collected = JAVA.collect(env, workspace, sandbox, timeout=600)
    assert all(t.startswith("<collect-error>::src/test/java/") for t in collected)
    assert len(collected) == 13  # every test file


def test_per_test_coverage(project) -> None:
    snapshot, env, cache = project
    bwrap = Runner(JAVA, env, require("bwrap"), 900, cache=cache)
    baseline = JAVA.baseline(snapshot, bwrap, repeats=2, test_timeout=60)
    assert len(baseline.tests) == 127 and len(baseline.stable) == 127
    assert baseline.tracer == "jacoco"
    index = {t: i for i, t in enumerate(baseline.tests)}
    money = baseline.coverage["src/main/java/javademo/money/Money.java"]
    allocate_body = range(134, 155)  # Money.allocate's lines
    ran = {i for ln in allocate_body for i in money.get(ln, ())}
    assert index[ALLOCATION] in ran
    assert index["javademo.text.TextStatsTest::countsWords()"] not in ran
    assert JAVA.cached_baseline(snapshot, bwrap, repeats=2, test_timeout=60) == baseline


SEALED = {
    "pom.xml": "<project><modelVersion>4.0.0</modelVersion><groupId>m</groupId>"
               "<artifactId>m</artifactId><version>1</version><properties>"
               "<maven.compiler.release>17</maven.compiler.release></properties><dependencies>"
               "<dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter"
               "</artifactId><version>5.9.2</version><scope>test</scope></dependency>"
               "</dependencies></project>\n",
    "src/main/java/m/Shapes.java": '''\
        package m;

        public final class Shapes {
            public sealed interface Shape permits Square, Circle {
                double area();
            }

            public record Square(double side) implements Shape {
                public double area() {
                    return side * side;
                }
            }

            public record Circle(double r) implements Shape {
                public double area() {
                    return Math.PI * r * r;
                }
            }

            public static String kind(Object o) {
                if (o instanceof Square s) {
                    return "square " + s.side();
                }
                return "other";
            }
        }
        ''',
    "src/test/java/m/ShapesTest.java": '''\
        package m;

        import static org.junit.jupiter.api.Assertions.assertEquals;

        import org.junit.jupiter.api.Test;

        class ShapesTest {
            @Test
            void squareArea() {
                assertEquals(4.0, new Shapes.Square(2).area());
            }

            @Test
            void kinds() {
                assertEquals("other", Shapes.kind(1));
            }
        }
        ''',
}


def test_java_17_and_a_class_jacoco_cannot_instrument(tmp_path: Path) -> None:
    """Records and patterns are covered per test; the sealed interface JaCoCo 0.8.6 cannot
    instrument makes its file's coverage the whole suite's, never nobody's."""
    from conftest import make_project

    require_jdk()
    root = make_project(tmp_path, SEALED, name="shapes")
    cache = tmp_path / "cache"
    snapshot = Snapshot(id="q" * 40, name="shapes", source=str(root), commit="0" * 40,
                        root=root, license=None)
    env = JAVA.prepare(SourceSpec(kind="path", location=str(root)), snapshot, cache,
                       lambda _m: None).env
    assert env.spec.test_command[-1] == "17"
    baseline = JAVA.baseline(snapshot, Runner(JAVA, env, require("bwrap"), 600, cache=cache),
                             repeats=2, test_timeout=60)
    assert baseline.stable == ("m.ShapesTest::kinds()", "m.ShapesTest::squareArea()")
    lines = baseline.coverage["src/main/java/m/Shapes.java"]
    assert set(lines[5]) == {0, 1}  # the sealed interface's file: every test

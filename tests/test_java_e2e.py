"""Java end to end on javademo: generate gives verified tasks (failing before, passing with
the reference in a fresh JVM, trivial bodies rejected, leak scan clean), the reference
scores 1 and the untouched workspace 0, and a JUnit extension that forces passes, which wins
against the naive grader (plain console launcher, its XML), scores 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import apply_patch
from java_support import generated
from naive_grader import naive_java_reward

import taskforge

pytestmark = pytest.mark.slow

# An extension that swallows every test's exception, registered for auto-detection from the
# solution's main resources: every test passes whatever the code does.
FORCING = {
    "src/main/java/javademo/Swallow.java":
        "package javademo;\n\nimport org.junit.jupiter.api.extension.ExtensionContext;\n"
        "import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;\n\n"
        "public class Swallow implements TestExecutionExceptionHandler {\n"
        "    @Override\n    public void handleTestExecutionException(ExtensionContext c, "
        "Throwable t) {\n    }\n}\n",
    "src/main/resources/META-INF/services/org.junit.jupiter.api.extension.Extension":
        "javademo.Swallow\n",
    "src/main/resources/junit-platform.properties":
        "junit.jupiter.extensions.autodetection.enabled=true\n",
}


@pytest.fixture(scope="module")
def out(tf_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated(tmp_path_factory)


@pytest.fixture(scope="module")
def tasks(out: Path) -> taskforge.TaskSet:
    return taskforge.load_tasks(str(out))


def test_generate_gives_verified_java_tasks(out: Path) -> None:
    records = [json.loads(line) for path in sorted(out.glob("tasks-*.jsonl"))
               for line in path.read_text().splitlines() if line.strip()]
    assert len(records) >= 3
    assert {r["language"] for r in records} == {"java"}
    for record in records:
        assert record["FAIL_TO_PASS"], record["instance_id"]
        assert all("::" in t for t in record["FAIL_TO_PASS"] + record["PASS_TO_PASS"])
        assert record["environment"]["way"] == "javac+console-launcher"
        nulls = record["verification"]["null_solutions"]
        assert nulls and all(c["passed"] < c["of"] for c in nulls.values())
        assert "UnsupportedOperationException" in record["deletion_patch"] or \
            record["strategy"] == "remove-method"
        assert ".class" not in record["patch"] and ".class" not in record["deletion_patch"]


def test_grading_reference_untouched_and_a_forcing_extension(tasks: taskforge.TaskSet,
                                                             tmp_path: Path) -> None:
    task = next(t for t in tasks if t.record["strategy"] == "stub-method") \
        if any(t.record["strategy"] == "stub-method" for t in tasks) else next(iter(tasks))
    untouched = task.materialize(tmp_path / "untouched")
    assert not list(untouched.rglob("*.class"))
    assert task.grade(untouched, sandbox="bwrap").reward == 0.0
    reference = task.materialize(tmp_path / "reference")
    apply_patch(reference, task.record["patch"])
    (tmp_path / "naive-ref").mkdir()
    assert naive_java_reward(task, reference, tmp_path / "naive-ref") == 1.0
    result = task.grade(reference, sandbox="bwrap")
    assert (result.reward, result.tampered) == (1.0, ())
    forced = task.materialize(tmp_path / "forced")
    for rel, text in FORCING.items():
        (forced / rel).parent.mkdir(parents=True, exist_ok=True)
        (forced / rel).write_text(text)
    (tmp_path / "naive-forced").mkdir()
    assert naive_java_reward(task, forced, tmp_path / "naive-forced") == 1.0  # the attack works
    result = task.grade(forced, sandbox="bwrap")
    assert result.reward == 0.0, result  # ... and not here
    assert any("registers a JUnit Platform service" in line for line in result.tampered)
    assert any("added src/main/resources/junit-platform.properties" in line
               for line in result.tampered)

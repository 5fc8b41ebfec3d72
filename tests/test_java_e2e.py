"""Java end to end on javademo: generate gives verified tasks (failing before, passing with
the reference in a fresh JVM, trivial bodies rejected, leak scan clean), the reference
scores 1 and the untouched workspace 0, and a JUnit extension that forces passes, which wins
against the naive grader (plain console launcher, its XML), scores 0."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import apply_patch, run_cli
from java_support import JAVADEMO, generated
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


def test_taskforge_scan_finds_the_original_compiled_anywhere(out: Path, tasks: taskforge.TaskSet,
                                                            tmp_path: Path) -> None:
    """`taskforge scan` on a materialized workspace: clean; with javac output of the
    original in `target/classes`, as a jar, and as a jar in a zip: exit 1, the class named."""
    from taskforge.languages.java.env import jdk_home

    originals = tmp_path / "original-classes"
    subprocess.run([str(jdk_home() / "bin" / "javac"), "-d", str(originals),
                    *map(str, sorted((JAVADEMO / "src/main/java").rglob("*.java")))], check=True)
    for task in tasks:
        deleted = task.record["deleted"][0]["path"].removeprefix("src/main/java/")
        stem = deleted.removesuffix(".java")
        # the file's classes: the top-level one and its nested ones (`Ast$Num.class`)
        compiled = sorted(originals.glob(stem + ".class")) + sorted(originals.glob(stem + "$*.class"))
        ws = task.materialize(tmp_path / task.instance_id)
        clean = run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path)
        assert clean.returncode == 0, clean.stdout + clean.stderr
        jar = io.BytesIO()
        with zipfile.ZipFile(jar, "w") as z:
            for path in compiled:
                z.write(path, path.relative_to(originals).as_posix())
        nested = io.BytesIO()
        with zipfile.ZipFile(nested, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("libs/app.jar", jar.getvalue())
        plants = {f"target/classes/{p.relative_to(originals).as_posix()}": p.read_bytes()
                  for p in compiled}
        for rel, data in plants.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_bytes(data)
        found = run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path)
        assert found.returncode == 1 and "target/classes/" in found.stdout, found.stdout
        assert "!method:" in found.stdout  # the structural check names the compiled method
        shutil.rmtree(ws / "target")
        for rel, data in {"lib/app.jar": jar.getvalue(), "dist/bundle.zip": nested.getvalue()
                          }.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_bytes(data)
            found = run_cli("scan", str(out), task.instance_id, str(ws), cwd=tmp_path)
            assert found.returncode == 1 and rel in found.stdout, (rel, found.stdout)
            (ws / rel).unlink()

"""Java end to end on javademo: generate gives verified tasks (failing before, passing with
the reference in a fresh JVM, trivial bodies rejected, leak scan clean), the reference
scores 1 and the untouched workspace 0, and a JUnit extension that forces passes, which wins
against the naive grader (plain console launcher, its XML), scores 0."""

from __future__ import annotations

import io
import json
import re
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
    # (and a link out of the workspace, which every language's grader removes and names)
    (forced / "src/main/java/Outside.java").symlink_to(tmp_path / "nowhere" / "Outside.java")
    result = task.grade(forced, sandbox="bwrap")
    assert result.reward == 0.0, result  # ... and not here
    assert f"removed link src/main/java/Outside.java -> {tmp_path}/nowhere/Outside.java: it " \
        "points outside the workspace" in result.tampered
    assert any("registers a JUnit Platform service" in line for line in result.tampered)
    assert any("added src/main/resources/junit-platform.properties" in line
               for line in result.tampered)


# A static initializer in the stubbed class registers a shutdown hook: after the launcher has
# written its XML, the hook drops every <failure>/<error> whose stack trace passes through the
# class, so the stub's tests read as passed and every canary stays as it was (session 44's
# red team). The launcher's directory comes from its own command line.
REWRITE_HOOK = r"""
    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                String[] parts = System.getProperty("sun.java.command", "").split(" ");
                for (int i = 0; i + 1 < parts.length; i++) {
                    if (!parts[i].equals("--reports-dir")) continue;
                    java.util.List<java.nio.file.Path> xmls;
                    try (java.util.stream.Stream<java.nio.file.Path> files =
                             java.nio.file.Files.list(java.nio.file.Paths.get(parts[i + 1]))) {
                        xmls = files.filter(f -> f.toString().endsWith(".xml"))
                            .collect(java.util.stream.Collectors.toList());
                    }
                    for (java.nio.file.Path xml : xmls) {
                        String text = new String(java.nio.file.Files.readAllBytes(xml), "UTF-8");
                        text = text.replaceAll("(?s)<(failure|error)\\b[^>]*>"
                            + "(?:(?!</(?:failure|error)>).)*?at CLASS\\."
                            + "(?:(?!</(?:failure|error)>).)*</(?:failure|error)>", "");
                        java.nio.file.Files.write(xml, text.getBytes("UTF-8"));
                    }
                }
            } catch (Exception e) {
                // nothing to rewrite
            }
        }));
    }
"""


def rewrite_the_report_on_exit(ws: Path, task: taskforge.Task) -> None:
    rel = task.record["deleted"][0]["path"]
    cls = rel.removeprefix("src/main/java/").removesuffix(".java").replace("/", ".")
    path = ws / rel
    text = path.read_text()
    body = re.search(r"\b(?:class|enum|record)\s+" + re.escape(cls.rsplit(".", 1)[1])
                     + r"\b[^{]*\{", text)
    assert body is not None
    hook = REWRITE_HOOK.replace("CLASS", cls.replace(".", "\\\\."))
    path.write_text(text[:body.end()] + hook + text[body.end():])


def test_a_report_rewritten_after_the_tests_scores_zero(tasks: taskforge.TaskSet,
                                                        tmp_path: Path) -> None:
    """Each stub-method task where the rewrite wins against the naive grader (its XML read
    after the JVM exits) scores 0: outcomes come from the signed channel the launcher's
    listener wrote as the tests ran, and the rewrite is named. Before the channel the grade
    was 1.0 there too (the canaries' failures do not pass through the class)."""
    won = 0
    for n, task in enumerate(t for t in tasks if t.record["strategy"] == "stub-method"):
        workspace = task.materialize(tmp_path / f"ws{n}")
        rewrite_the_report_on_exit(workspace, task)
        (tmp_path / f"naive{n}").mkdir()
        if naive_java_reward(task, workspace, tmp_path / f"naive{n}") != 1.0:
            continue
        won += 1
        result = task.grade(workspace, sandbox="bwrap")
        assert result.reward == 0.0, result
        assert any(line.startswith("the test report was rewritten") for line in result.tampered), \
            result.tampered
    assert won, "the rewrite won against the naive grader on no task: no positive control"


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

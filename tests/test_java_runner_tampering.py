"""The Java grader's reading of a solution's tree for what would act inside the test JVM
(`grading.runner_tampering`): three ways past the first reading, found by session 44's
review, each refused and named."""

from __future__ import annotations

from pathlib import Path

from taskforge.languages.java.grading import runner_tampering

LISTENER = "org.junit.platform.launcher.TestExecutionListener"


def test_three_ways_past_the_first_reading(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    main = copy / "src/main/java"
    # (1) taskforge's own listener by its name: with the support jar last on the class path
    # this class was loaded instead and signed whatever it liked
    (main / "taskforge/java").mkdir(parents=True)
    (main / "taskforge/java/ResultChannel.java").write_text("package taskforge.java;\n")
    # (2) JUnit's API imported through Unicode escapes, which javac reads before anything else
    (main / "app").mkdir()
    (main / "app/Hook.java").write_text(
        "package app;\nimport \\u006frg.junit.platform.launcher.TestExecutionListener;\n")
    # (3) a services directory linked in: its files are not listed under META-INF/services/
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / LISTENER).write_text("app.Hook\n")
    (copy / "src/main/resources/META-INF").mkdir(parents=True)
    (copy / "src/main/resources/META-INF/services").symlink_to(elsewhere,
                                                                target_is_directory=True)
    findings = runner_tampering(copy)
    assert all(f.disqualifies for f in findings)
    found = sorted(f.message for f in findings)
    assert found == [
        "src/main/java/app/Hook.java: main code uses JUnit (an extension or the platform's API)",
        "src/main/java/taskforge/java/ResultChannel.java: adds to taskforge's own package",
        f"src/main/resources/META-INF/services: links a directory into the project ({elsewhere})",
    ], found
    assert not (main / "taskforge/java/ResultChannel.java").exists()
    assert not (copy / "src/main/resources/META-INF/services").exists()


def test_an_honest_tree_has_nothing(tmp_path: Path) -> None:
    main = tmp_path / "src/main/java/app"
    main.mkdir(parents=True)
    (main / "Money.java").write_text("package app;\n// see \\\\u0041 in the docs\n"
                                     "public final class Money {}\n")
    (tmp_path / "src/main/resources").mkdir(parents=True)
    (tmp_path / "src/main/resources/app.properties").write_text("currency=EUR\n")
    assert runner_tampering(tmp_path) == []

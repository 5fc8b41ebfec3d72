"""The leak scan finds a compiled copy of a deleted Java method: javac output of the original
in the workspace and in the environment, in a jar, and the class in a jar inside a zip (each
plant a positive control: the same tree scans clean before it, and javac output of the task
state scans clean)."""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from java_support import JAVADEMO, require_jdk

from taskforge.languages import language_named
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline, Snapshot
from taskforge.sanitize.classfile import is_class, parameter_names, parse_class
from taskforge.sanitize.fingerprints import fingerprint_workspace
from taskforge.sanitize.scan import scan

JAVA = language_named("java")


def _javac(sources: Path, out: Path) -> Path:
    from taskforge.languages.java.env import jdk_home

    subprocess.run([str(jdk_home() / "bin" / "javac"), "-g", "-d", str(out),
                    *map(str, sorted(sources.rglob("*.java")))], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory):
    """The task state of stub-method on `Money.allocate`, its fingerprints, and the classes
    javac makes of the original."""
    require_jdk()
    snapshot = Snapshot(id="s" * 40, name="javademo", source=str(JAVADEMO), commit="0" * 40,
                        root=JAVADEMO, license=None)
    project = JAVA.project(snapshot, None)  # type: ignore[arg-type]
    coverage = {p: {ln: (0,) for ln in range(1, 500)} for p in project.source_files}
    baseline = Baseline(key="k", tests=("t.T::a()",), stable=("t.T::a()",), flaky=(), failing=(),
                        run_seconds=(), coverage=coverage)
    strategy = JAVA.strategy("stub-method")
    candidate = next(c for c in strategy.candidates(project, baseline, SelectOptions())
                     if c.symbol == "javademo.money.Money.allocate")
    deletion = strategy.apply(project, candidate, TaskOptions())
    base = tmp_path_factory.mktemp("javascan")
    workspace = base / "ws"
    shutil.copytree(JAVADEMO, workspace)
    for rel, text in deletion.new_texts.items():
        (workspace / rel).write_text(text)
    fingerprints = fingerprint_workspace(workspace, {candidate.path: project.text(candidate.path)})
    original = _javac(JAVADEMO / "src" / "main" / "java", base / "original")
    task_classes = _javac(workspace / "src" / "main" / "java", base / "task-classes")
    return workspace, fingerprints, original / "javademo" / "money" / "Money.class", task_classes


def _code_hits(hits) -> set[str]:
    return {h.where() for h in hits if h.kind == "code"}


def test_the_class_file_is_decoded(task) -> None:
    _ws, fingerprints, money, _task = task
    data = money.read_bytes()
    assert is_class(data) and not is_class(b"\xca\xfe\xba\xbe\x00\x00\x00\x02" + b"\0" * 8)
    info = parse_class(data)
    assert info.name == "javademo/money/Money" and info.source_file == "Money.java"
    allocate = next(m for m in info.methods if m.name == "allocate")
    assert allocate.parameters == ["int[]"] and not allocate.is_stub()
    assert "ratios" in allocate.locals and "no ratios" in allocate.strings
    assert parameter_names("(JLjava/math/BigDecimal;[[Ljava/lang/String;)V") == [
        "long", "BigDecimal", "String[][]"]
    assert ("java:javademo.money.Money#allocate", "int[]") in fingerprints.code


def test_clean_workspace_and_task_state_classes(task, tmp_path: Path) -> None:
    workspace, fingerprints, _money, task_classes = task
    assert scan(fingerprints, [workspace]) == []
    planted = tmp_path / "ws"
    shutil.copytree(workspace, planted)
    shutil.copytree(task_classes, planted / "target" / "classes")
    assert scan(fingerprints, [planted]) == []  # the stub compiled is no residue


def test_javac_output_of_the_original_anywhere(task, tmp_path: Path) -> None:
    workspace, fingerprints, money, _task = task
    for where in ("target/classes/javademo/money/Money.class", "bin/Money.class",
                  ".m2/repository/x/Money.class", "deep/er/renamed.dat"):
        planted = tmp_path / where.replace("/", "_")
        shutil.copytree(workspace, planted)
        assert scan(fingerprints, [planted]) == []
        (planted / where).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(money, planted / where)
        hits = scan(fingerprints, [planted])
        assert _code_hits(hits) == {f"{where}!method:allocate([I)[Ljavademo/money/Money;"}, hits
    environment = tmp_path / "environment"
    environment.mkdir()
    shutil.copy(money, environment / "Money.class")
    assert _code_hits(scan(fingerprints, [workspace, environment]))


def test_a_jar_and_a_jar_inside_a_zip(task, tmp_path: Path) -> None:
    workspace, fingerprints, money, _task = task
    jar = io.BytesIO()
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(money, "javademo/money/Money.class")
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("lib/dep.jar", jar.getvalue())
    planted = tmp_path / "ws"
    shutil.copytree(workspace, planted)
    (planted / "lib").mkdir()
    (planted / "lib" / "app.jar").write_bytes(jar.getvalue())
    (planted / "dist.zip").write_bytes(outer.getvalue())
    found = _code_hits(scan(fingerprints, [planted]))
    assert found == {
        "lib/app.jar!javademo/money/Money.class!method:allocate([I)[Ljavademo/money/Money;",
        "dist.zip!lib/dep.jar!javademo/money/Money.class!method:allocate([I)[Ljavademo/money/Money;"}


def test_every_stub_of_the_sample_scans_clean_and_its_original_is_found(task,
                                                                         tmp_path: Path) -> None:
    """Each stub-method task state of javademo scans clean; with the original's classes
    planted (one javac run), every deleted method is found in them."""
    _ws, _fp, money, _task = task
    originals = money.parents[2]  # the javac output root of the original
    snapshot = Snapshot(id="s" * 40, name="javademo", source=str(JAVADEMO), commit="0" * 40,
                        root=JAVADEMO, license=None)
    project = JAVA.project(snapshot, None)  # type: ignore[arg-type]
    coverage = {p: {ln: (0,) for ln in range(1, 500)} for p in project.source_files}
    baseline = Baseline(key="k", tests=("t.T::a()",), stable=("t.T::a()",), flaky=(), failing=(),
                        run_seconds=(), coverage=coverage)
    strategy = JAVA.strategy("stub-method")
    workspace = tmp_path / "ws"
    shutil.copytree(JAVADEMO, workspace)
    planted = tmp_path / "planted"
    shutil.copytree(originals, planted)
    checked = 0
    for candidate in strategy.candidates(project, baseline, SelectOptions()):
        deletion = strategy.apply(project, candidate, TaskOptions())
        original = project.text(candidate.path)
        (workspace / candidate.path).write_text(deletion.new_texts[candidate.path])
        try:
            fingerprints = fingerprint_workspace(workspace, {candidate.path: original})
            assert scan(fingerprints, [workspace]) == [], candidate.symbol
            assert _code_hits(scan(fingerprints, [planted])), candidate.symbol
        finally:
            (workspace / candidate.path).write_text(original)
        checked += 1
    assert checked == 71

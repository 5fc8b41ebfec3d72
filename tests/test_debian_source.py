"""`debian: NAME=VERSION` sources: the recipe refuses an unpinned value in one line (exit 2
through the CLI), a missing apt-get or dpkg-dev is one line too, the private APT
configuration turns the machine's sources into `deb-src` ones, a pom's Surefire
configuration reaches the launcher, and (slow) a real Debian source package is ingested and
gives a verified Java task whose reference scores 1.

The tests that fetch need `apt-get source` to work (APT, dpkg-dev, the archive): they skip
where it cannot, and fail under CI (CI is set), like the Java ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import apply_patch, run_cli, stderr_lines, write_recipe
from java_support import require_jdk

import taskforge
from taskforge.errors import UserError
from taskforge.recipe import load_recipe
from taskforge.sources.debian import (
    as_source_lines,
    as_source_stanzas,
    ingest_debian,
    pinned,
    tools_missing,
)

# The smallest of the green packages (docs/corpus.md): 1,158 JUnit 4 and 5 tests.
CODEC = "libcommons-codec-java=1.15-1"


def require_apt_source() -> None:
    why = tools_missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"debian: sources must work under CI: {why}")
        pytest.skip(f"no apt-get source here: {why}")


# ---------------------------------------------------------------- the recipe's value


@pytest.mark.parametrize("value", ["libcommons-codec-java", "libcommons-codec-java=",
                                   "=1.15-1", "LibCommons=1.0", "libcommons-codec-java>=1.15",
                                   "libcommons-codec-java=latest", "x=1.0"])
def test_an_unpinned_debian_source_is_one_line_naming_the_key(tmp_path: Path,
                                                              value: str) -> None:
    path = write_recipe(tmp_path / "bad.yaml", f'name: x\nsources:\n  - debian: "{value}"\n')
    with pytest.raises(UserError) as info:
        load_recipe(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message and "sources[0].debian" in message
    assert "NAME=VERSION" in message
    with pytest.raises(UserError, match="pin an exact version"):  # and at ingest (the CLI)
        ingest_debian(value, tmp_path / "cache")


def test_a_pinned_debian_source_loads() -> None:
    assert pinned(CODEC) == ("libcommons-codec-java", "1.15-1")
    assert pinned("libcommons-lang3-java=3.12.0-2+deb12u1") == ("libcommons-lang3-java",
                                                                "3.12.0-2+deb12u1")
    assert pinned("openjdk-17=1:17.0.9+9-1~deb12u1") is not None  # an epoch


def test_recipe_debian_source_and_cli_exit_2(tmp_path: Path) -> None:
    good = write_recipe(tmp_path / "good.yaml", f'name: x\nsources:\n  - debian: "{CODEC}"\n'
                                                "    max_tasks: 1\n")
    spec = load_recipe(good).sources[0]
    assert (spec.kind, spec.location, spec.describe()) == ("debian", CODEC, f"debian:{CODEC}")
    bad = write_recipe(tmp_path / "bad.yaml", "name: x\nsources:\n"
                                              "  - debian: libcommons-codec-java\n")
    out = tmp_path / "out"
    proc = run_cli("generate", str(bad), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = stderr_lines(proc)
    assert len(lines) == 1 and str(bad) in lines[0] and "sources[0].debian" in lines[0], lines
    assert not out.exists()
    both = write_recipe(tmp_path / "both.yaml", f'name: x\nsources:\n  - debian: "{CODEC}"\n'
                                                '    npm: "qs@6.13.0"\n')
    with pytest.raises(UserError, match="exactly one of path, git, pypi, npm, debian"):
        load_recipe(both)


def test_missing_apt_or_dpkg_dev_is_one_line(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    with pytest.raises(UserError, match="apt-get is not installed") as info:
        ingest_debian(CODEC, tmp_path / "cache")
    assert str(info.value).startswith(f"debian:{CODEC}: ") and "\n" not in str(info.value)
    for tool in ("apt-get", "apt-config"):  # APT, without dpkg-dev's dpkg-source
        (bare / tool).symlink_to("/bin/true")
    with pytest.raises(UserError, match=r"dpkg-source is not installed \(apt-get install "
                                        r"dpkg-dev\)"):
        ingest_debian(CODEC, tmp_path / "cache")


# ---------------------------------------------------------------- the private APT config


def test_the_machines_sources_become_deb_src_entries() -> None:
    sources = ("Types: deb\nURIs: http://mirror.invalid/debian\nSuites: stable\n"
               "Components: main\n\n"
               "# a comment\nTypes: deb deb-src\nURIs: http://other.invalid/x\nSuites: s\n"
               "Components: main\n\nTypes: something-else\nURIs: http://no.invalid\n")
    converted = as_source_stanzas(sources)
    assert converted.count("Types: deb-src\n") == 2 and "something-else" not in converted
    assert "URIs: http://mirror.invalid/debian" in converted
    lines = as_source_lines("# comment\ndeb [arch=amd64] http://m.invalid/debian stable main\n"
                            "deb-src http://m.invalid/debian stable main\n")
    assert lines == ("deb-src [arch=amd64] http://m.invalid/debian stable main\n"
                     "deb-src http://m.invalid/debian stable main\n")


def test_a_version_the_index_lacks_is_one_line_naming_what_it_has(tmp_path: Path) -> None:
    require_apt_source()
    with pytest.raises(UserError) as info:
        ingest_debian("libcommons-codec-java=0.1-1", tmp_path / "cache")
    message = str(info.value)
    assert message.startswith("debian:libcommons-codec-java=0.1-1: not in the source index")
    assert "1.15-1" in message and "\n" not in message and "://" not in message


# ---------------------------------------------------------------- the pom's Surefire settings


def test_surefire_includes_excludes_and_module_flags(tmp_path: Path) -> None:
    from taskforge.languages.java.surefire import (
        class_regex,
        jvm_flags,
        launcher_filters,
        surefire_tokens,
    )

    pom = tmp_path / "pom.xml"
    pom.write_text("""<project xmlns="http://maven.apache.org/POM/4.0.0"><build><plugins>
      <plugin><artifactId>maven-surefire-plugin</artifactId><configuration>
        <includes><include>**/*Test.java</include></includes>
        <excludes><exclude>**/*PerformanceTest.java</exclude><exclude>**/*$*</exclude>
        </excludes></configuration></plugin></plugins></build>
      <profiles><profile><properties><argLine>-Xmx512m --add-opens java.base/java.lang=ALL-UNNAMED
      </argLine></properties></profile></profiles></project>""")
    tokens = surefire_tokens(pom)
    includes, excludes = launcher_filters(tokens)
    assert jvm_flags(tokens) == ["--add-opens=java.base/java.lang=ALL-UNNAMED"]
    assert all(" " not in t for t in tokens)  # recorded joined with spaces
    import re

    def runs(name: str) -> bool:
        return any(re.match(i, name) for i in includes) and \
            not any(re.match(e, name) for e in excludes)

    assert runs("org.apache.commons.codec.binary.Base64Test")
    assert not runs("org.apache.commons.codec.language.bm.PhoneticEnginePerformanceTest")
    assert not runs("org.apache.commons.codec.binary.Base64Test$Inner")
    assert not runs("org.apache.commons.codec.binary.Base64Tests")
    assert class_regex("%regex[.*Test.*]") is None
    assert surefire_tokens(tmp_path / "nowhere.xml") == ()


# ---------------------------------------------------------------- end to end, for real


@pytest.mark.slow
def test_a_debian_source_package_gives_a_verified_java_task(tmp_path: Path,
                                                            tf_cache: Path) -> None:
    """commons-codec from Debian's archive: ingested (debian/ left out, cached), one task
    generated and verified (its tests fail without the reference), the reference grades 1."""
    require_jdk()
    require_apt_source()
    snapshot = ingest_debian(CODEC, tf_cache)
    assert snapshot.source == f"debian:{CODEC}" and snapshot.license == "Apache-2.0"
    assert (snapshot.root / "pom.xml").is_file() and (snapshot.root / "src/test/java").is_dir()
    assert not (snapshot.root / "debian").exists() and not (snapshot.root / ".pc").exists()
    assert ingest_debian(CODEC, tf_cache) == snapshot  # cached: no second download
    recipe = write_recipe(tmp_path / "recipe.yaml", f"""\
        name: debian-codec
        seed: 0
        sources:
          - debian: "{CODEC}"
        strategies: [stub-class]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: 4}}
        verify: {{repeats: 1, timeout_s: 600}}
        sandbox: bwrap
        """)
    out = tmp_path / "out"
    # The first task of the seeded order, at most four tried: a Java candidate costs over a
    # minute here (every run compiles the tree). A stubbed class rarely passes with the
    # trivial solution, which turned the first stub-method candidate down.
    taskforge.generate(str(recipe), out=str(out), workers=1, limit=1)
    records = [json.loads(line) for path in sorted(out.glob("tasks-*.jsonl"))
               for line in path.read_text().splitlines() if line.strip()]
    assert records, (out / "manifest.json").read_text()
    record = records[0]
    assert record["language"] == "java" and record["FAIL_TO_PASS"]
    assert record["environment"]["way"] == "javac+console-launcher"
    assert "PerformanceTest" in record["environment"]["test_command"]  # the pom's excludes
    assert "debian/" not in record["patch"] + record["deletion_patch"]
    task = next(iter(taskforge.load_tasks(str(out))))
    untouched = task.materialize(tmp_path / "untouched")
    assert not (untouched / "debian").exists()
    reference = task.materialize(tmp_path / "reference")
    apply_patch(reference, task.record["patch"])
    result = task.grade(reference, sandbox="bwrap")
    assert (result.reward, result.tampered) == (1.0, ()), result

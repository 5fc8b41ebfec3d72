"""Which files of a Java project are tests, which the grader puts back, and where a layout
keeps its sources: one definition for every stage. Light on purpose (no tree-sitter): a data
loader that grades imports this, not the deleters."""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath

MAIN_DIR = "src/main/java"
TEST_DIR = "src/test/java"
MAIN_RESOURCES = "src/main/resources"
TEST_RESOURCES = "src/test/resources"
# Build files: what decides how the tests compile and run (dependencies, compiler level,
# the JUnit Platform's configuration). The environment is rebuilt from the record, so they
# are restored whole.
BUILD_FILES = ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
               "settings.gradle.kts", "gradle.properties", "junit-platform.properties",
               "gradlew", "gradlew.bat", "mvnw", "mvnw.cmd")
BUILD_DIRS = (".mvn", "gradle")  # wrapper configuration and version catalogs
PROJECT_FILES = ("pom.xml", "build.gradle", "build.gradle.kts")


def is_java(rel: str) -> bool:
    return rel.endswith(".java")


def is_test_file(rel: str) -> bool:
    """Anything under `src/test/` (sources, helpers, resources) of the project or a module."""
    parts = PurePosixPath(rel).parts
    return any(parts[i:i + 2] == ("src", "test") for i in range(len(parts) - 1))


def is_build_file(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    if any(p in BUILD_DIRS for p in parts[:-1]):
        return True
    return any(fnmatch.fnmatchcase(parts[-1], p) for p in BUILD_FILES)


def is_protected(rel: str) -> bool:
    """A file the grader restores: test sources and resources, and build files."""
    return is_test_file(rel) or is_build_file(rel)


def is_main_source(rel: str) -> bool:
    return is_java(rel) and rel.startswith(MAIN_DIR + "/")


def test_source_of(class_name: str) -> str:
    """`javademo.money.MoneyTest$Formatting` -> `src/test/java/javademo/money/MoneyTest.java`
    (the top-level class's file, by Java's convention)."""
    top = class_name.split("$", 1)[0]
    return f"{TEST_DIR}/{top.replace('.', '/')}.java"


def java_files(root: Path, under: str) -> list[str]:
    """The `.java` files under `root/under` (relative, posix, sorted); symlinks left out."""
    base = root / under
    if not base.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*.java")
                  if p.is_file() and not p.is_symlink())

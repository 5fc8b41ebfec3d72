"""Java: Debian's JDK, javac + the JUnit Platform console launcher with the build file's
dependencies resolved in Debian's Maven repository, JUnit XML results, per-test JaCoCo
coverage, tree-sitter-java deletions, and a grader with canaries.

Modules are imported when a question needs them: a data loader that only grades does not
load tree-sitter or the strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from taskforge.languages.base import GradedRun, Language, Prepared, Runner, files_key
from taskforge.languages.java.files import PROJECT_FILES, TEST_DIR, is_protected, is_test_file
from taskforge.languages.strategy import Project, Strategy
from taskforge.model import Baseline, Environment, EnvSpec, Snapshot, SourceSpec, TaskRecord, TestRun
from taskforge.sandbox import Sandbox

# The trivial solutions, by the name `Strategy.apply(body=...)` knows them. A body must
# compile, so what one returns follows the method's type (delete/syntax.py's
# `trivial_statement`): the default, `return null;` for a reference, `0`, `0L`, `0.0f`,
# `0.0d`, `false` or `'\0'` for a primitive, `return;` for void; and the other everyday
# value where a type has one (`OTHERS`: tests that only ever expect `true` of a predicate or
# an empty list of a search pass for it), else the default again (one run scores both:
# `behaviour_key`). The value names each in reports.
NULL_BODIES = {"return-default": "return null; (0, false, '\\0' or return; by return type)",
               "return-other": 'return true; ("", -1, an empty collection or Optional, '
                               'by return type; else the default)'}


class JavaLanguage(Language):
    name = "java"
    null_bodies = NULL_BODIES

    @property
    def strategies(self) -> Mapping[str, type[Strategy]]:
        from taskforge.languages.java.delete import STRATEGIES

        return STRATEGIES

    def detect(self, root: Path) -> bool:
        """A Maven or Gradle build file with Java test sources (`src/test/java`)."""
        if not any((root / name).is_file() for name in PROJECT_FILES):
            return False
        tests = root / TEST_DIR
        return tests.is_dir() and any(p.suffix == ".java" for p in tests.rglob("*.java"))

    # -- environment -----------------------------------------------------------------------

    def prepare(self, spec: SourceSpec, snapshot: Snapshot, cache: Path,
                log: Callable[[str], None]) -> Prepared:
        from taskforge.languages.java.env import build_environment, spec_for

        env_spec = spec_for(snapshot.root, snapshot.source)
        env = build_environment(snapshot, env_spec, cache)
        return Prepared(snapshot, env, tuple(env_spec.decisions))

    def environment_record(self, env: Environment) -> dict[str, Any]:
        from taskforge.languages.java.env import WAY, WAY_WHY, release_of

        spec = env.spec
        # `python` carries the JDK's version (the field's name is Python's).
        return {"python": spec.python, "java": spec.python, "project_install": None,
                "requirements": list(spec.requirements), "install": [],
                "classpath": list(spec.install), "release": release_of(env),
                "test_command": " ".join(spec.test_command), "way": WAY, "why": WAY_WHY,
                "pythonpath": [], "frozen": list(env.frozen), "key": env.key}

    def environment_from_record(self, record: Mapping[str, Any], snapshot: Snapshot,
                                cache: Path) -> Environment:
        from taskforge.languages.java.env import build_environment

        spec = EnvSpec(python=record["python"], project_install=None,
                       requirements=tuple(record["requirements"]),
                       install=tuple(record["classpath"]),
                       test_command=tuple(record["test_command"].split()))
        return build_environment(snapshot, spec, cache)

    # -- tests -----------------------------------------------------------------------------

    def run_tests(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                  timeout: float, select: Iterable[str] | None = None,
                  first_failure: bool = False, watch_state: bool = False) -> TestRun:
        from taskforge.languages.java.testing import run_tests

        # every test runs even with `first_failure`: a cost, not a difference in results;
        # no state watch yet (`watch_state`): a JUnit test's leftovers are not reported
        return run_tests(env, workspace, sandbox, timeout=timeout, select=select)

    def collect(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                timeout: float) -> set[str]:
        from taskforge.languages.java.testing import collected_ids

        return collected_ids(env, workspace, sandbox, timeout=timeout)

    def baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float) -> Baseline:
        from taskforge.languages.java.testing import run_baseline

        return run_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)

    def cached_baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                        test_timeout: float) -> Baseline | None:
        from taskforge.languages.java.testing import cached_baseline

        return cached_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)

    def keep_baseline(self, cache: Path, baseline: Baseline) -> None:
        from taskforge.languages.java.testing import keep_baseline

        keep_baseline(cache, baseline)

    # -- deletion --------------------------------------------------------------------------

    def project(self, snapshot: Snapshot, env: Environment) -> Project:
        from taskforge.languages.java.delete.project import JavaProject

        return JavaProject(snapshot.root)

    def with_null_body(self, deletion_patch: str, body: str) -> str:
        # Every stub line the deletion adds becomes the trivial statement for its method's
        # return type, read from the signature the hunk shows above it: what the strategy
        # itself writes with `apply(body=...)` (tests check both agree over the sample).
        from taskforge.languages.java.delete.syntax import null_body_patch

        return null_body_patch(deletion_patch, body)

    # -- verification ----------------------------------------------------------------------

    def behaviour_key(self, workspace: Path, paths: Collection[str]) -> str | None:
        # The same bytes do the same: "return-other" of a type with no other value is the
        # default, and one run scores both.
        return files_key(workspace, paths, lambda _path, data: data)

    # -- files and grading -----------------------------------------------------------------

    def is_test_file(self, rel: str) -> bool:
        return is_test_file(rel)

    def is_protected(self, rel: str) -> bool:
        return is_protected(rel)

    def grade_run(self, record: TaskRecord, solution: Path, snapshot_root: Path,
                  runner: Runner, *, checks: bool) -> GradedRun:
        from taskforge.languages.java.grading.run import grade_run

        return grade_run(record, solution, snapshot_root, runner, checks=checks)

"""JavaScript (and TypeScript sources run by a JavaScript runner): npm environments, node's
built-in test runner with its report read back, per-test coverage from V8, tree-sitter
deletions, and a grader with canaries.

Modules are imported when a question needs them: a data loader that only grades does not
load tree-sitter or the strategies.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from taskforge.languages.base import GradedRun, Language, Prepared, Runner
from taskforge.languages.javascript.files import (
    SOURCE_SUFFIXES,
    TYPESCRIPT_SUFFIXES,
    is_protected,
    is_source,
    is_test_file,
)
from taskforge.languages.strategy import Project, Strategy
from taskforge.model import (
    Baseline,
    Environment,
    EnvSpec,
    Snapshot,
    SourceSpec,
    TaskRecord,
    TestRun,
)
from taskforge.sandbox import Sandbox

# The trivial solutions, by the name `Strategy.apply(body=...)` knows them: the text each puts
# where the task has `throw new Error("not implemented");` (delete/syntax.py's BODIES).
# Besides doing nothing, a constant of each everyday kind: tests that only ever expect
# `false` of a predicate, or that check each key of an empty result, pass for a constant as
# for nothing, and the agent learns to write the constant.
NULL_BODIES = {"empty": "", "return-undefined": "return undefined;",
               "return-null": "return null;", "return-true": "return true;",
               "return-false": "return false;", "return-zero": "return 0;",
               "return-empty-string": "return '';", "return-empty-array": "return [];",
               "return-empty-object": "return {};"}
# A tree with these is a Python project even when it has a package.json (see _HOMES).
PYTHON_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
STUB = 'throw new Error("not implemented");'
_STUB_LINE = re.compile(r"^(\+.*?)" + re.escape(STUB) + r"$", re.MULTILINE)


class JavaScriptLanguage(Language):
    name = "javascript"
    null_bodies = NULL_BODIES

    @property
    def strategies(self) -> Mapping[str, type[Strategy]]:
        from taskforge.languages.javascript.delete import STRATEGIES

        return STRATEGIES

    def detect(self, root: Path) -> bool:
        """package.json and at least one test file (or a `test` script) outside
        node_modules, and no Python project files."""
        from taskforge.languages.javascript.package import read_package

        if not (root / "package.json").is_file() or any(
                (root / name).is_file() for name in PYTHON_PROJECT_FILES):
            return False
        scripts = read_package(root).get("scripts")
        if isinstance(scripts, dict) and isinstance(scripts.get("test"), str) \
                and "no test specified" not in scripts["test"]:
            return True
        return any(is_test_file(p.relative_to(root).as_posix())
                   for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES
                   and "node_modules" not in p.relative_to(root).parts)

    # -- environment -----------------------------------------------------------------------

    def prepare(self, spec: SourceSpec, snapshot: Snapshot, cache: Path,
                log: Callable[[str], None]) -> Prepared:
        from taskforge.languages.javascript.env import build_environment

        env_spec = self._spec(spec, snapshot)
        env = build_environment(snapshot, env_spec, cache)
        notes = (*env_spec.decisions, *env.build_notes)
        return Prepared(snapshot, env, tuple(notes))

    @staticmethod
    def _spec(spec: SourceSpec, snapshot: Snapshot) -> EnvSpec:
        from taskforge.errors import UserError
        from taskforge.languages.javascript.env import node_version
        from taskforge.languages.javascript.package import runner_setup
        from taskforge.languages.javascript.runners import runner_named

        if spec.test_command:
            words = shlex.split(spec.test_command)
            runner_named(words[0])  # a UserError names the runners there are
            command, decision = tuple(words), "test_command from the recipe"
        else:
            setup = runner_setup(snapshot.root)
            if setup is None:
                raise UserError(f"{snapshot.source}: no test runner found in package.json")
            runner_named(setup.runner)
            command, decision = (setup.runner, *setup.args), setup.decision
        return EnvSpec(python=node_version(), project_install=None, requirements=(),
                       install=tuple(spec.install or ()), test_command=command,
                       decisions=(f"tests: {shlex.join(command)} ({decision})",))

    def environment_record(self, env: Environment) -> dict[str, Any]:
        from taskforge.languages.javascript.env import recorded_lockfile

        spec = env.spec
        # `python` carries the Node.js version (the field's name is Python's).
        return {"python": spec.python, "node": spec.python, "project_install": None,
                "requirements": [], "install": list(spec.install),
                "test_command": shlex.join(spec.test_command), "pythonpath": [],
                "frozen": list(env.frozen), "key": env.key,
                # the tree npm resolved here (None: the project's own lockfile, in the snapshot)
                "lockfile": recorded_lockfile(env)}

    def environment_from_record(self, record: Mapping[str, Any], snapshot: Snapshot,
                                cache: Path) -> Environment:
        from taskforge.languages.javascript.env import build_environment

        spec = EnvSpec(python=record["python"], project_install=None, requirements=(),
                       install=tuple(record.get("install") or ()),
                       test_command=tuple(shlex.split(record["test_command"])))
        return build_environment(snapshot, spec, cache, lockfile=record.get("lockfile"))

    # -- tests -----------------------------------------------------------------------------

    def run_tests(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                  timeout: float, select: Iterable[str] | None = None,
                  first_failure: bool = False, watch_state: bool = False) -> TestRun:
        from taskforge.languages.javascript.testing import run_tests

        # every test runs even with `first_failure`: a cost, not a difference in results;
        # no state watch yet (`watch_state`): a test file's leftovers are not reported
        return run_tests(env, workspace, sandbox, timeout=timeout, select=select)[0]

    def collect(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                timeout: float) -> set[str]:
        from taskforge.languages.javascript.testing import collected_ids

        return collected_ids(env, workspace, sandbox, timeout=timeout)

    def baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float) -> Baseline:
        from taskforge.languages.javascript.testing import run_baseline

        return run_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)

    def cached_baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                        test_timeout: float) -> Baseline | None:
        from taskforge.languages.javascript.testing import cached_baseline

        return cached_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)

    def keep_baseline(self, cache: Path, baseline: Baseline) -> None:
        from taskforge.languages.javascript.testing import keep_baseline

        keep_baseline(cache, baseline)

    # -- deletion --------------------------------------------------------------------------

    def project(self, snapshot: Snapshot, env: Environment) -> Project:
        from taskforge.languages.javascript.delete.project import JavaScriptProject

        return JavaScriptProject(snapshot.root)

    def with_null_body(self, deletion_patch: str, body: str) -> str:
        # Every line the deletion adds that ends in the stub statement ends in the trivial
        # body instead: what the strategy itself writes with `apply(body=...)`.
        return _STUB_LINE.sub(lambda m: m.group(1) + NULL_BODIES[body], deletion_patch)

    # -- verification ----------------------------------------------------------------------

    def behaviour_key(self, workspace: Path, paths: Collection[str]) -> str | None:
        from taskforge.languages.javascript.behaviour import code_key

        return code_key(workspace, paths)

    # -- files and grading -----------------------------------------------------------------

    def is_test_file(self, rel: str) -> bool:
        return is_test_file(rel)

    def is_protected(self, rel: str) -> bool:
        return is_protected(rel)

    def grade_run(self, record: TaskRecord, solution: Path, snapshot_root: Path,
                  runner: Runner, *, checks: bool) -> GradedRun:
        from taskforge.languages.javascript.grading.run import grade_run

        return grade_run(record, solution, snapshot_root, runner, checks=checks)


class TypeScriptLanguage(JavaScriptLanguage):
    """A JavaScript project written in TypeScript (TypeScript sources besides its tests and
    type declarations: a package that only ships `.d.ts` files and type tests is JavaScript):
    the same environments, runners and grader; tree-sitter's TypeScript grammar deletes from
    its `.ts` files, and its records say `typescript`."""

    name = "typescript"

    def detect(self, root: Path) -> bool:
        if not super().detect(root):
            return False
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            if "node_modules" in rel.parts or path.suffix not in TYPESCRIPT_SUFFIXES:
                continue
            if is_source(rel.as_posix()) and not is_test_file(rel.as_posix()):
                return True
        return False

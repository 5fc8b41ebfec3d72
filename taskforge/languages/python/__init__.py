"""Python: uv environments, pytest with JUnit XML, per-test coverage (coverage.py, or our own
`sys.monitoring` tracer on 3.12+), LibCST deletions, a forking fast path, and a grader with
canaries and a runner-integrity observer.

Modules are imported when a question needs them: a data loader that only grades does not
load LibCST or the strategies.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from taskforge.languages.base import GradedRun, Language, Prepared, Runner, Screened, ScreenRequest
from taskforge.languages.python.files import is_protected, is_test_file
from taskforge.languages.strategy import Project, Strategy
from taskforge.model import Baseline, Environment, EnvSpec, Snapshot, SourceSpec, TaskRecord, TestRun
from taskforge.sandbox import Sandbox

# The trivial solutions, by the name `Strategy.apply(body=...)` knows them: the text each puts
# where the task has `raise NotImplementedError` (delete/syntax.py's BODIES). Besides doing
# nothing, a constant of each everyday kind: tests that only ever expect `False` of a
# predicate, or that check each item of an empty result, pass for a constant as for nothing,
# and the agent learns to write the constant.
NULL_BODIES = {"pass": "pass", "return-none": "return None",
               "return-true": "return True", "return-false": "return False",
               "return-zero": "return 0", "return-empty-str": 'return ""',
               "return-empty-list": "return []", "return-empty-dict": "return {}"}
_STUB = re.compile(r"^(\+(?:.*[\s:])?)raise NotImplementedError$", re.MULTILINE)
# Files that make a tree a Python project (else: any .py file outside tool directories).
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


class PythonLanguage(Language):
    name = "python"
    null_bodies = NULL_BODIES

    @property
    def strategies(self) -> Mapping[str, type[Strategy]]:
        from taskforge.languages.python.delete import STRATEGIES

        return STRATEGIES

    def detect(self, root: Path) -> bool:
        if any((root / name).is_file() for name in PROJECT_FILES):
            return True
        return any(not any(p.startswith(".") or p == "node_modules" for p in path.parts)
                   for path in (f.relative_to(root) for f in root.rglob("*.py")))

    # -- environment -----------------------------------------------------------------------

    def prepare(self, spec: SourceSpec, snapshot: Snapshot, cache: Path,
                log: Callable[[str], None]) -> Prepared:
        from taskforge.languages.python.env import build_environment, detect_spec
        from taskforge.languages.python.env.outputs import with_build_outputs

        env = build_environment(snapshot, detect_spec(snapshot.root, spec, snapshot.describe),
                                cache)
        notes: list[str] = []
        if env.outputs:
            # The tasks are made from the tree as the build leaves it (env/outputs.py).
            snapshot = with_build_outputs(snapshot, env, cache)
            notes.append(f"build outputs added to the snapshot ({snapshot.id[:12]}): "
                         + ", ".join(env.outputs[:5]) + (" ..." if len(env.outputs) > 5 else ""))
        notes += [f"build output left out: {note}" for note in env.build_notes]
        return Prepared(snapshot, env, tuple(notes))

    def versioned_by_git(self, root: Path) -> bool:
        from taskforge.languages.python.env.scm import needs_version

        return needs_version(root)

    def environment_record(self, env: Environment) -> dict[str, Any]:
        spec = env.spec
        return {"python": spec.python, "project_install": spec.project_install,
                "requirements": list(spec.requirements), "install": list(spec.install),
                "test_command": shlex.join(spec.test_command),
                "pythonpath": list(env.pythonpath), "frozen": list(env.frozen), "key": env.key,
                **({"scm_version": spec.scm_version} if spec.scm_version else {})}

    def environment_from_record(self, record: Mapping[str, Any], snapshot: Snapshot,
                                cache: Path) -> Environment:
        from taskforge.languages.python.env import build_environment

        spec = EnvSpec(python=record["python"], project_install=record["project_install"],
                       requirements=tuple(record["requirements"]),
                       install=tuple(record["install"]),
                       test_command=tuple(shlex.split(record["test_command"])),
                       scm_version=record.get("scm_version"))
        return build_environment(snapshot, spec, cache)

    # -- tests -----------------------------------------------------------------------------

    def run_tests(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                  timeout: float, select: Iterable[str] | None = None,
                  first_failure: bool = False, watch_state: bool = False) -> TestRun:
        from taskforge.languages.python.testing.runner import run_tests

        # pytest stops after its first failure or error with --maxfail=1 (after the
        # project's addopts: the last one given counts)
        return run_tests(env, workspace, sandbox, timeout=timeout, select=select,
                         extra_args=["--maxfail=1"] if first_failure else (),
                         watch_state=watch_state)

    def collect(self, env: Environment, workspace: Path, sandbox: Sandbox, *,
                timeout: float) -> set[str]:
        from taskforge.languages.python.testing.runner import collected_ids

        return collected_ids(workspace, env, sandbox, timeout=timeout)

    def warm_up(self, env: Environment, sandbox: Sandbox, cache: Path, runs: int = 1) -> None:
        from taskforge.languages.python.testing.runner import warm_up

        warm_up(env, sandbox, cache, runs)

    def baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                 test_timeout: float) -> Baseline:
        from taskforge.languages.python.testing.baseline import run_baseline
        from taskforge.languages.python.testing.bytecode import snapshot_bytecode

        baseline = run_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)
        # The snapshot's bytecode, which seeds every verification run of it, is made here
        # with the rest of what a snapshot needs once (a collect-only run and compileall: 6.5
        # s on boltons), not by the first screen, whose candidates paid for it.
        snapshot_bytecode(snapshot, runner)
        return baseline

    def cached_baseline(self, snapshot: Snapshot, runner: Runner, *, repeats: int,
                        test_timeout: float) -> Baseline | None:
        from taskforge.languages.python.testing.baseline import cached_baseline

        return cached_baseline(snapshot, runner, repeats=repeats, test_timeout=test_timeout)

    def keep_baseline(self, cache: Path, baseline: Baseline) -> None:
        from taskforge.languages.python.testing.baseline import keep_baseline

        keep_baseline(cache, baseline)

    # -- deletion --------------------------------------------------------------------------

    def project(self, snapshot: Snapshot, env: Environment) -> Project:
        from taskforge.languages.python.delete.project import PythonProject

        return PythonProject(snapshot.root, env.pythonpath)

    def with_null_body(self, deletion_patch: str, body: str) -> str:
        # Every line the deletion adds that ends in `raise NotImplementedError` ends in the
        # trivial body instead: what the strategy itself writes with `apply(body=...)`.
        return _STUB.sub(lambda m: m.group(1) + NULL_BODIES[body], deletion_patch)

    # -- verification ----------------------------------------------------------------------

    def screen(self, request: ScreenRequest) -> dict[str, Screened]:
        from taskforge.languages.python.testing.screen import screen_candidates

        return screen_candidates(request, Runner(self, request.env, request.sandbox,
                                                 request.timeout, cache=request.cache))

    def screen_trivial(self, record: TaskRecord, snapshot_root: Path,
                       runner: Runner) -> dict[str, dict[str, int]]:
        from taskforge.languages.python.testing.screen import screen_record_constants

        return screen_record_constants(record, snapshot_root, runner)

    def behaviour_key(self, workspace: Path, paths: Collection[str]) -> str | None:
        from taskforge.languages.python.behaviour import code_key

        return code_key(workspace, paths)

    def set_up_workspace(self, workspace: Path, snapshot: Snapshot, changed: Collection[str],
                         runner: Runner, tests: Collection[str] | None = None) -> None:
        # The snapshot's bytecode for the files the deletion left alone (testing/bytecode.py):
        # the tests' imports then cost what they cost in the baseline.
        from taskforge.languages.python.testing.bytecode import seed_bytecode, snapshot_bytecode

        seed_bytecode(workspace, snapshot_bytecode(snapshot, runner), changed,
                      None if tests is None else {t.split("::", 1)[0] for t in tests})

    # -- files and grading -----------------------------------------------------------------

    def is_test_file(self, rel: str) -> bool:
        return is_test_file(rel)

    def is_protected(self, rel: str) -> bool:
        return is_protected(rel)

    def grade_run(self, record: TaskRecord, solution: Path, snapshot_root: Path,
                  runner: Runner, *, checks: bool) -> GradedRun:
        from taskforge.languages.python.grading.run import grade_run

        return grade_run(record, solution, snapshot_root, runner, checks=checks)

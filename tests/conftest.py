"""Shared helpers and fixtures: real projects on disk, real git repositories, the real CLI.

Everything expensive (virtual environments, baselines, the uv download cache) lives in one
session-scoped cache directory, so each small project's environment is built once per run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # taskforge itself is imported where used, after the session's settings
    from taskforge.ingest import IngestedSource
    from taskforge.languages.strategy import Strategy
    from taskforge.model import Candidate
    from taskforge.verify.confirm import Verifier

# A suite started as a background job of a shell without job control (`cmd &` in a script, as
# some CI runners do) inherits SIGINT ignored, and so would every process it starts: the
# Ctrl-C tests would then test nothing. Python's own handler, as in a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)

REPO_ROOT = Path(__file__).resolve().parents[1]
SANDBOX_WARNING = "warning: sandbox"

# A fixed identity and clock for the git repositories the tests create.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2021-05-01T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2021-05-01T12:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def make_project(tmp_path: Path, files: dict[str, str], name: str = "proj") -> Path:
    """Write `files` (relative path -> text, dedented) under `tmp_path / name`; return that root."""
    root = Path(tmp_path) / name
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def prepared_js_project(factory: pytest.TempPathFactory, files: dict[str, str], *,
                        name: str, snapshot_id: str) -> tuple[Any, Any, Path]:
    """A JavaScript project written from `files` and prepared as a path source: its
    (Snapshot, Environment, cache directory)."""
    from taskforge.languages import language_named
    from taskforge.model import Snapshot, SourceSpec

    root = make_project(factory.mktemp("js"), files, name=name)
    cache = factory.mktemp("cache")
    snapshot = Snapshot(id=snapshot_id, name=name, source=str(root), commit="0" * 40,
                        root=root, license=None)
    prepared = language_named("javascript").prepare(
        SourceSpec(kind="path", location=str(root)), snapshot, cache, lambda _m: None)
    return snapshot, prepared.env, cache


def setuptools_pyproject(name: str, version: str = "0.1") -> str:
    """The smallest `pyproject.toml` a test project installs with: a setuptools package."""
    return (f'[project]\nname = "{name}"\nversion = "{version}"\n[build-system]\n'
            'requires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n')


@dataclass
class PathProject:
    """A project ingested from a path as the real-project tests use one: the none sandbox,
    two baseline runs, stub-function's candidates by their short name (`double` for
    `reg.core.double`), and `verifier(**options)` for a `Verifier` over it."""

    source: IngestedSource
    strategy: Strategy  # stub-function
    candidates: dict[str, Candidate]
    cache: Path

    def verifier(self, **kwargs: Any) -> Verifier:
        from taskforge.languages.strategy import TaskOptions
        from taskforge.sandbox import get_sandbox
        from taskforge.verify.confirm import Verifier, run_timeout

        return Verifier(self.source, get_sandbox("none"), self.cache,
                        run_timeout(self.source, 120), 2, TaskOptions(), **kwargs)

    def task(self, name: str, **kwargs: Any) -> dict:
        """The task record of candidate `name`, screened and confirmed by
        `verifier(**kwargs)` (a screen that rejects it fails the test)."""
        from taskforge.executors import LocalExecutor

        candidate = self.candidates[name]
        made = self.verifier(**kwargs)
        verdict = made.screen([candidate], LocalExecutor(1))[candidate.key]
        assert verdict.screened and not verdict.rejection
        return made.make_task(self.strategy, candidate, verdict)


def free_port() -> int:
    """A loopback port nothing listens on now (bound and closed a moment ago)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def passes_with_body(project: PathProject, module: str, name: str, statement: str,
                     test_file: str, tmp_path: Path) -> bool:
    """Whether `test_file` passes, in a fresh pytest run, with the body of function `name` of
    `module` (a path in the project) replaced by `statement`: what a trivial solution scores
    there (the project copied; its environment's interpreter, the copy first on the path)."""
    import re
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(project.source.snapshot.root, root)
    source = root / module
    text, count = re.subn(rf"(def {name}\([^)]*\):\n)(?:    .*\n)+",
                          lambda m: f"{m.group(1)}    {statement}\n", source.read_text())
    assert count == 1, text
    source.write_text(text)
    env = project.source.env
    proc = subprocess.run([str(env.venv / "bin" / "python"), "-m", "pytest", "-q",
                           "-p", "no:cacheprovider", test_file], cwd=root,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    return proc.returncode == 0


def ingest_path_project(root: Path, cache: Path) -> PathProject:
    """Ingest the project at `root` (made by `make_project`) and find its stub-function
    candidates: the fixture every test of verification on a real small project starts from."""
    from taskforge.ingest import ingest
    from taskforge.languages.strategy import SelectOptions
    from taskforge.model import SourceSpec
    from taskforge.sandbox import get_sandbox

    source = ingest(SourceSpec(kind="path", location=str(root)), cache=cache,
                    base_dir=root.parent, sandbox=get_sandbox("none"), repeats=2, timeout=120)
    strategy = source.language.strategy("stub-function")
    found = strategy.candidates(source.project, source.baseline, SelectOptions())
    return PathProject(source, strategy, {c.symbol.rsplit(".", 1)[-1]: c for c in found}, cache)


def lucky_once_then_caught(task: Any, workspace: Path, marker: Path,
                           disarm: Callable[[pytest.MonkeyPatch], None],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A stub in `workspace` that reads the answer in the grading run only (`marker`: the file
    it tells its runs apart by, which only the sandbox `none` lets outlive a run): with
    `disarm` applied to the grader (the positive control: the check it defeats taken out)
    1.0 under the grade with every other check; with everything, 0, the task's one
    FAIL_TO_PASS test named as failed, but not as the original code fails it."""
    with monkeypatch.context() as patched:
        disarm(patched)
        lucky = task.grade(workspace, sandbox="none")
        assert (lucky.reward, lucky.tampered) == (1.0, ()), lucky
    marker.unlink()
    result = task.grade(workspace, sandbox="none")
    assert result.reward == 0.0, result
    (test_id,) = task.record["FAIL_TO_PASS"]
    assert any(f"expectation copy {test_id} failed, but not as the original code" in reason
               for reason in result.tampered), result


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple]:
    """Every call of `owner.name` (a class's method, or a module's function) from now on (its
    positional arguments, a method's self aside), still made: how many test processes a step
    started, say (`Runner.run`), or runs on the original code a grading made."""
    calls: list[tuple] = []
    function = getattr(owner, name)
    method = isinstance(owner, type)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1:] if method else args)
        return function(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def git(*args: str, cwd: Path) -> str:
    """Run the real git CLI in `cwd`; return its stripped stdout (fails the test on error)."""
    proc = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout.strip()


def init_repo(root: Path) -> None:
    git("init", "-q", "-b", "main", cwd=root)


def commit_all(root: Path, message: str) -> str:
    """Stage everything in `root` and commit it; return the new commit's sha."""
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def run_cli(*args: str, cwd: Path, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user runs it (`python -m taskforge ...`); `env` is added
    to this process's environment."""
    return subprocess.run([sys.executable, "-m", "taskforge", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env} if env else None)


def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """Non-blank stderr lines, without the one-time warning about running unsandboxed."""
    return [ln for ln in proc.stderr.splitlines() if ln.strip() and SANDBOX_WARNING not in ln]


def apply_patch(workspace: Path, patch: str) -> None:
    """Apply a record's patch with the real git CLI, as an agent or harness would."""
    proc = subprocess.run(["git", "apply", "-"], cwd=workspace, input=patch, text=True,
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr


def write_recipe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@contextlib.contextmanager
def trivial_solutions_of_before() -> Iterator[None]:
    """The trivial solutions as they were before session 74: doing nothing, no constant
    (`tests/test_trivial_constants.py`). For the positive control of that gate, and for the
    grading tests' projects whose task has one FAIL_TO_PASS test asserting a lone `f(x)`:
    `return True` passes it, so `generate` makes no such task now, and the grader must still
    defend one made before."""
    from taskforge.languages.java import JavaLanguage
    from taskforge.languages.javascript import JavaScriptLanguage
    from taskforge.languages.python import PythonLanguage
    from taskforge.languages.python.testing import screen

    python = {"pass": "pass", "return-none": "return None"}
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(PythonLanguage, "null_bodies", python)
        patched.setattr(screen, "NULL_BODIES", python)
        patched.setattr(screen, "SCREENED_NULLS", {"pass": ("pass", "return-none")})
        patched.setattr(JavaScriptLanguage, "null_bodies",
                        {"empty": "", "return-undefined": "return undefined;"})
        patched.setattr(JavaLanguage, "null_bodies",
                        {"return-default": JavaLanguage.null_bodies["return-default"]})
        yield


@pytest.fixture(scope="session", autouse=True)
def tf_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One taskforge cache for the whole session, also exported as TASKFORGE_CACHE so the
    library, the CLI subprocesses and loaders all build each environment only once."""
    cache = tmp_path_factory.mktemp("taskforge-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKFORGE_CACHE", str(cache))
        mp.setenv("TASKFORGE_QUIET_SANDBOX", "1")
        yield cache


# What a person looks at after the run (the report's screenshot): kept where CI's log says,
# not in pytest's temporary directories. Not under out/: that is `make run`'s output
# directory, and generate refuses a non-empty directory that is not a taskforge output.
ARTIFACTS_ENV = "TASKFORGE_TEST_ARTIFACTS"
_saved_artifacts: list[Path] = []


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """$TASKFORGE_TEST_ARTIFACTS, else `<repo>/test-artifacts/` (gitignored)."""
    where = Path(os.environ.get(ARTIFACTS_ENV) or REPO_ROOT / "test-artifacts").resolve()
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.fixture
def artifact(artifacts_dir: Path) -> Callable[[str], Path]:
    """`artifact(name)`: the path to save a file under, named at the end of the run."""
    def path(name: str) -> Path:
        saved = artifacts_dir / name
        saved.unlink(missing_ok=True)  # an earlier run's must not pass for this one's
        _saved_artifacts.append(saved)
        return saved
    return path


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line naming what the tests saved (shown with -q too)."""
    saved = [p for p in _saved_artifacts if p.is_file()]
    if saved:
        terminalreporter.write_line(f"test artifacts: {', '.join(str(p) for p in saved)}")


def one_character_apart(was: str, now: str) -> bool:
    """Two literals' texts of the same length apart in one character of the same kind
    (lowercase, uppercase, digit, punctuation)."""
    apart = [(a, b) for a, b in zip(was, now, strict=True) if a != b] if len(was) == len(now) \
        else []
    kinds = (str.islower, str.isupper, str.isdigit, lambda c: not c.isalnum())
    return len(apart) == 1 and any(k(apart[0][0]) and k(apart[0][1]) for k in kinds)

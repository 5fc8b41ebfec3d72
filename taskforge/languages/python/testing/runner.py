"""Run a project's pytest suite (or some of its tests) in a workspace, through a sandbox."""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from taskforge.languages.python.testing import zygote
from taskforge.languages.python.testing.junit import collection_errors, parse_junit
from taskforge.languages.python.testing.testmap import MapProbe
from taskforge.leftovers import owned
from taskforge.model import STATE_UNKNOWN, Environment, TestRun
from taskforge.sandbox import ExecResult, Mounts, Sandbox
from taskforge.workspace import scratch_dir_for, warm_root, warm_root_of

PLUGIN_DIR = Path(__file__).parent / "pytest_plugin"
PLUGIN = "taskforge_pytest_plugin"
SUBPROCESS_COVERAGE_DIR = Path(__file__).parent / "subprocess_coverage"


def test_argv(env: Environment) -> list[str]:
    """The runner's argv with the venv's interpreter: `pytest ...` becomes `python -m pytest ...`."""
    argv = list(env.spec.test_command)
    python = str(env.venv / "bin" / "python")
    if argv and argv[0] in ("pytest", "py.test"):
        return [python, "-m", "pytest", *argv[1:]]
    if argv and argv[0] in ("python", "python3"):
        return [python, *argv[1:]]
    return argv


def files_of(test_ids: Iterable[str]) -> list[str]:
    """The test files that hold these node ids, so pytest collects only those."""
    return sorted({t.split("::", 1)[0] for t in test_ids if not t.startswith("<collect>")})


def run_tests(env: Environment, workspace: Path, sandbox: Sandbox, *, timeout: float,
              select: Iterable[str] | None = None, reverse: bool = False,
              test_map: MapProbe | None = None, extra_args: Sequence[str] = (),
              extra_env: Mapping[str, str] | None = None,
              writable: tuple[Path, ...] = (), exclude: Iterable[str] = (),
              test_timeout: float | None = None, watch_state: bool = False,
              read_only: tuple[Path, ...] = ()) -> TestRun:
    """Run the suite (or only `select`) in `workspace`; results come from the JUnit XML.

    `extra_args`, `extra_env` and `writable` serve the screening and collect-only modes,
    which leave their results in files under `writable` dirs. `exclude`: node ids left
    out. `test_timeout`: a test running longer ends the run, named in `TestRun.hung`.
    `watch_state`: each test's leftover module-level state, in `TestRun.state_left`
    (pytest_plugin/taskforge_state.py). `read_only`: files of the workspace the run may not
    change, where the sandbox can bind them so (the grader's restored test code).
    """
    # A workspace under a warm root runs in a zygote's fork (see zygote.py), unless it is a
    # coverage run (its tracer and subprocess hooks start with the interpreter).
    warm = warm_root_of(workspace) if test_map is None and zygote.enabled() else None
    if warm is not None and not all(warm_root_of(w) == warm for w in writable):
        warm = None
    with tempfile.TemporaryDirectory(prefix=owned("taskforge-run-"), dir=warm) as scratch:
        results = Path(scratch)
        junit = results / "junit.xml"
        home = results / "home"
        home.mkdir()
        # --tb=line: results come from the XML, and long tracebacks of hundreds of failing
        # tests in a task state cost more than the tests themselves.
        # --continue-on-collection-errors: a module that fails to import costs its own tests,
        # not the whole run (a deletion's collateral, one broken file in a real suite).
        argv = [*test_argv(env), "-p", PLUGIN, "-p", "no:cacheprovider",
                f"--junitxml={junit}", f"--rootdir={workspace}", "-q", "--tb=line",
                "--continue-on-collection-errors", *extra_args]
        variables = {**environment_variables(env, workspace, home), **(extra_env or {})}
        if select is not None:
            chosen = sorted(set(select))
            (results / "select.txt").write_text("\n".join(chosen) + "\n")
            variables["TASKFORGE_SELECT"] = str(results / "select.txt")
            argv += files_of(chosen)
        if reverse:
            variables["TASKFORGE_REVERSE"] = "1"
        excluded = sorted(set(exclude))
        if excluded:
            (results / "exclude.txt").write_text("\n".join(excluded) + "\n")
            variables["TASKFORGE_EXCLUDE"] = str(results / "exclude.txt")
        hung_file = results / "hung.txt"
        state_file = results / "state.json"
        if watch_state:
            variables["TASKFORGE_STATE_OUT"] = str(state_file)
        if test_timeout is not None:
            variables["TASKFORGE_TEST_TIMEOUT"] = f"{test_timeout:g}"
            variables["TASKFORGE_HUNG_OUT"] = str(hung_file)
        if test_map is not None:
            variables.update(test_map.variables(workspace))
            variables["PYTHONPATH"] = f"{SUBPROCESS_COVERAGE_DIR}:{variables['PYTHONPATH']}"
        mounts = Mounts(readonly=(env.venv, PLUGIN_DIR, SUBPROCESS_COVERAGE_DIR, *read_only),
                        writable=(results, *writable,
                                  *((test_map.out.parent,) if test_map else ())))
        # A run that only writes its results may go to a zygote that imported the
        # environment's modules (zygote.py), which runs it elsewhere, its results removed,
        # where it cannot: not the screen's server or a collection, which write elsewhere.
        result = _warm_run(env, sandbox, warm, argv, workspace, variables, timeout, results,
                           env_modules=not writable, outputs=(junit, hung_file, state_file)) \
            if warm is not None else None
        if result is None:
            result = sandbox.exec(argv, workspace=workspace, env=variables, timeout=timeout,
                                  mounts=mounts)
        outcomes, pytest_seconds, durations = parse_junit(junit)
        broken = collection_errors(junit)
        hung = (hung_file.read_text().strip() or None) if hung_file.is_file() else None
        state_left = _state_left(state_file, outcomes) if watch_state else {}
    unreported: tuple[str, ...] = ()
    if select is not None:
        # A selected test that did not report (an early exit, a crash) did not pass.
        unreported = tuple(t for t in chosen if t not in outcomes)
        for test_id in unreported:
            outcomes[test_id] = "error"
    return TestRun(outcomes=outcomes, exit_code=result.exit_code, wall_seconds=result.duration_s,
                   pytest_seconds=pytest_seconds, timed_out=result.timed_out, hung=hung,
                   durations=durations, collection_errors=broken,
                   log_tail=result.output[-4000:], unreported=unreported,
                   state_left=state_left)


def _state_left(path: Path, tests: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The state watch's file: node id -> the names the test left changed. Where the run
    ended before writing it (a crash) or it cannot be read, every test is unknown."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(t): tuple(str(n) for n in names) for t, names in data.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {t: (STATE_UNKNOWN,) for t in tests}


def _warm_run(env: Environment, sandbox: Sandbox, root: Path, argv: list[str], workspace: Path,
              variables: dict[str, str], timeout: float, results: Path, *,
              env_modules: bool = False, outputs: Sequence[Path] = ()) -> ExecResult | None:
    """`argv` (`python -m pytest ...`) run by a zygote of `env` that sees `root`; None when
    that cannot be (another runner command, no zygote): the caller runs it fresh."""
    if argv[:3] != _warm_command(env):
        return None
    start, mounts = _zygote_start(env, root)
    return zygote.ZYGOTES.run(env, sandbox, root, mounts, start, argv[3:], cwd=workspace,
                              variables=variables, timeout=timeout, log=results / "output.log",
                              env_modules=env_modules, outputs=outputs)


def _warm_command(env: Environment) -> list[str]:
    """What a run's command starts with where a zygote can run it."""
    return [str(env.venv / "bin" / "python"), "-m", "pytest"]


def _zygote_start(env: Environment, root: Path) -> tuple[dict[str, str], Mounts]:
    """The variables and mounts a zygote of `env` under the warm root `root` starts with."""
    home = root / "zygote-home"
    home.mkdir(exist_ok=True)
    start = environment_variables(env, root, home)
    start["PYTHONPATH"] = str(PLUGIN_DIR)  # a run adds its workspace's roots itself
    return start, Mounts(readonly=(env.venv, PLUGIN_DIR, SUBPROCESS_COVERAGE_DIR),
                         writable=(root,))


def warm_up(env: Environment, sandbox: Sandbox, cache: Path, runs: int = 1) -> None:
    """Start, in the background, the zygotes that the first `runs` runs at once under
    `cache`'s warm root (the screen's servers, then the confirmations) would otherwise start
    themselves (`zygote.Zygotes.prestart`). Nothing where runs do not go warm."""
    if zygote.enabled() and test_argv(env)[:3] == _warm_command(env):
        root = warm_root(cache)
        start, mounts = _zygote_start(env, root)
        zygote.ZYGOTES.prestart(env, sandbox, root, mounts, start, count=runs)


def environment_variables(env: Environment, workspace: Path, home: Path) -> dict[str, str]:
    roots = [str(workspace / r) if r != "." else str(workspace) for r in env.pythonpath]
    return {
        "PATH": f"{env.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "VIRTUAL_ENV": str(env.venv),
        "PYTHONPATH": ":".join([str(PLUGIN_DIR), *roots]),
        "PYTHONDONTWRITEBYTECODE": "1",  # no bytecode of the task state or the original
        "PYTHONHASHSEED": "0",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PY_COLORS": "0",
    }


def split_command(command: str) -> tuple[str, ...]:
    return tuple(shlex.split(command))


def collected_ids(workspace: Path, env: Environment, sandbox: Sandbox, *,
                  timeout: float) -> set[str]:
    """The node ids pytest collects in `workspace` (plus a marker per collection error)."""
    with scratch_dir_for(workspace) as io:
        target = io / "collected.txt"
        run_tests(env, workspace, sandbox, timeout=timeout, extra_args=["--collect-only"],
                  extra_env={"TASKFORGE_COLLECT_OUT": str(target)}, writable=(io,))
        return set(target.read_text().splitlines()) if target.exists() else {"<no collection>"}

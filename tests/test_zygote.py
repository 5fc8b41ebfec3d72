"""Warm runs (`languages/python/testing/zygote.py`): a run forked from a zygote that imported
pytest gives the same results as a fresh `python -m pytest`, sees what a fresh process sees,
is cut off at its timeout with what it started, and is used only under a warm root."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import make_project, setuptools_pyproject
from test_sandbox import require

from taskforge.languages import language_named
from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.languages.python.testing import zygote
from taskforge.languages.python.testing.runner import PLUGIN_DIR, run_tests
from taskforge.model import Environment, SourceSpec
from taskforge.sandbox import Mounts, Sandbox
from taskforge.sources import ingest_source
from taskforge.workspace import warm_dir, warm_root, warm_root_of

# A project whose tests look at what a fresh `python -m pytest` process has, and a few that
# fail or error on purpose (their outcomes must come back the same both ways).
FILES = {
    "pyproject.toml": setuptools_pyproject("probe", "0.1"),
    "probe/__init__.py": "LOADED_FROM = __file__\n",
    "tests/test_probe.py": """\
        import json
        import os
        import subprocess
        import sys
        import tempfile

        import probe


        def test_imports_the_workspace_copy():
            assert probe.LOADED_FROM.startswith(os.getcwd())


        def test_path_and_argv_are_a_fresh_runs():
            here = os.getcwd()
            seen = {"path": [p.replace(here, "<ws>") for p in sys.path],
                    "argv": [a.replace(here, "<ws>") for a in sys.argv
                             if not a.startswith("--junitxml=")],  # the results' own place
                    "main": sys.modules["__main__"].__file__,
                    "env": {k: v.replace(here, "<ws>") for k, v in os.environ.items()
                            if k not in ("TMPDIR", "HOME", "TASKFORGE_SELECT")}}
            with open("seen.json", "w") as f:
                json.dump(seen, f)
            assert sys.argv[0].endswith(os.path.join("pytest", "__main__.py"))
            assert sys.modules["__main__"].__file__ == sys.argv[0]
            assert here in sys.path


        def test_environment_is_the_runs():
            assert os.environ["TMPDIR"] == os.environ["HOME"]
            assert tempfile.gettempdir() == os.environ["TMPDIR"]
            assert os.environ["PYTHONHASHSEED"] == "0" and sys.flags.dont_write_bytecode


        def test_a_child_interpreter_finds_the_project():
            out = subprocess.run([sys.executable, "-c", "import probe; print(probe.LOADED_FROM)"],
                                 capture_output=True, text=True, check=True).stdout
            assert out.startswith(os.getcwd())


        def test_configuration_is_a_fresh_runs(request):
            # pytest's configuration as the run has it: its plugins in the order they were
            # registered, what is blocked, the order hooks are called in, the options and ini
            # names in the order they were added, their values, the invocation
            config, here = request.config, os.getcwd()
            manager = config.pluginmanager

            def named(name, plugin):
                return f"<{type(plugin).__name__}>" if name.isdigit() else name

            def clean(value):
                return repr(value).replace(here, "<ws>")

            args = [a for a in config.invocation_params.args if not a.startswith("--junitxml=")]
            seen = {
                "plugins": [named(n, p) for n, p in manager.list_name_plugin()],
                "blocked": sorted(n for n, p in manager._name2plugin.items() if p is None),
                "hooks": {h: [named(i.plugin_name, i.plugin)
                              for i in getattr(manager.hook, h).get_hookimpls()]
                          for h in ("pytest_addoption", "pytest_configure",
                                    "pytest_collection_modifyitems",
                                    "pytest_runtest_protocol", "pytest_runtest_makereport")},
                "groups": [[g.name, [o.names() for o in g.options]]
                           for g in config._parser._groups],
                "ini": list(config._parser._inidict),
                "options": {k: clean(v) for k, v in sorted(vars(config.option).items())
                            if k != "xmlpath"},
                "invocation": [[clean(a) for a in args], clean(config.invocation_params.dir)],
                "args": [clean(a) for a in config.args],
                "rootpath": clean(config.rootpath),
            }
            with open("config.json", "w") as f:
                json.dump(seen, f)


        def test_fails():
            assert 1 == 2


        def test_errors(missing_fixture):
            pass
        """,
}
EXPECTED = {
    "tests/test_probe.py::test_imports_the_workspace_copy": "passed",
    "tests/test_probe.py::test_path_and_argv_are_a_fresh_runs": "passed",
    "tests/test_probe.py::test_environment_is_the_runs": "passed",
    "tests/test_probe.py::test_a_child_interpreter_finds_the_project": "passed",
    "tests/test_probe.py::test_configuration_is_a_fresh_runs": "passed",
    "tests/test_probe.py::test_fails": "failed",
    "tests/test_probe.py::test_errors": "error",
}


@pytest.fixture(autouse=True)
def plain_zygotes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count zygotes and what they import: the one with the environment's
    modules (tests/test_env_modules.py) stays out of them."""
    monkeypatch.setenv("TASKFORGE_ENV_MODULES", "0")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Environment]:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    root = make_project(tmp_path_factory.mktemp("zygote"), FILES)
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    return snapshot.root, build_environment(snapshot, detect_spec(snapshot.root, spec), cache)


def jobs_done() -> int:
    # runs a zygote answered in this process; zygotes other tests started may be retired in
    # between (at most KEEP live at once), so this is the pool's count, not a sum over the live
    return zygote.ZYGOTES.served


def zygotes_of(box: Sandbox) -> list[zygote.Zygote]:
    return [z for z in zygote.ZYGOTES._all if z.sandbox is box and not z.broken]


@pytest.mark.parametrize("backend", ["none", "bwrap", "docker"])
def test_a_warm_run_gives_what_a_fresh_run_gives(project: tuple[Path, Environment],
                                                 tmp_path: Path, backend: str) -> None:
    tree, env = project
    box = require(backend)
    cache = Path(os.environ["TASKFORGE_CACHE"])
    fresh_ws = tmp_path / "fresh"
    shutil.copytree(tree, fresh_ws)
    fresh = run_tests(env, fresh_ws, box, timeout=120)
    assert warm_root_of(fresh_ws) is None
    assert fresh.outcomes == EXPECTED, fresh.log_tail
    with warm_dir(cache, prefix="test-") as scratch:
        shutil.copytree(tree, scratch / "ws")
        before = jobs_done()
        warm = run_tests(env, scratch / "ws", box, timeout=120)
        assert jobs_done() == before + 1, "the run went to a zygote"
        (server,) = zygotes_of(box)
        again = run_tests(env, scratch / "ws", box, timeout=120,
                          select=["tests/test_probe.py::test_fails"])
        assert jobs_done() == before + 2
        assert zygotes_of(box) == [server] and server._ids == 2, "the same zygote serves it"
        # both started from the server's configuration template (`_config_template`): what
        # the comparison below shows to be a fresh run's
        assert server.templated == 2
        warm_seen = json.loads((scratch / "ws/seen.json").read_text())
        warm_config = json.loads((scratch / "ws/config.json").read_text())
    assert warm.outcomes == EXPECTED, warm.log_tail
    assert again.outcomes == {"tests/test_probe.py::test_fails": "failed"}
    assert warm.exit_code == fresh.exit_code == 1
    # what the process looked like from inside: the same, the workspace's path aside
    assert warm_seen == json.loads((fresh_ws / "seen.json").read_text())
    fresh_config = json.loads((fresh_ws / "config.json").read_text())
    assert "cacheprovider" in fresh_config["blocked"] and fresh_config["groups"]
    assert warm_config == fresh_config


def test_a_hung_run_is_cut_off_with_what_it_started(project: tuple[Path, Environment]) -> None:
    tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(tree, ws)
        marker = scratch / "daemon-alive"
        (ws / "tests/test_hang.py").write_text(textwrap.dedent(f"""\
            import subprocess, time

            def test_hangs():
                # a process of the run's own, alive past the run unless it is killed
                subprocess.Popen(["sh", "-c", "sleep 4; touch {marker}"])
                time.sleep(600)
            """))
        before = jobs_done()
        hung = run_tests(env, ws, box, timeout=2, select=["tests/test_hang.py::test_hangs"])
        assert hung.timed_out and hung.outcomes["tests/test_hang.py::test_hangs"] != "passed"
        (server,) = zygotes_of(box)
        time.sleep(4)  # past when the process it started would have written the marker
        assert not marker.exists(), "what the run started was killed with it"
        after = run_tests(env, ws, box, timeout=60,
                          select=["tests/test_probe.py::test_imports_the_workspace_copy"])
        assert after.outcomes == {"tests/test_probe.py::test_imports_the_workspace_copy":
                                  "passed"}
        assert jobs_done() == before + 2
        assert zygotes_of(box) == [server] and server._ids == 2, "the zygote outlived the hung run"


def test_only_workspaces_under_a_warm_root_run_warm(project: tuple[Path, Environment],
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tree, env = project
    box: Sandbox = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    outside = tmp_path / "ws"
    shutil.copytree(tree, outside)
    before = jobs_done()
    run_tests(env, outside, box, timeout=120)
    assert jobs_done() == before  # a grading copy, a baseline: never warm
    assert warm_root_of(warm_root(cache) / "x") == warm_root(cache)
    monkeypatch.setenv("TASKFORGE_WARM_RUNS", "0")
    with warm_dir(cache, prefix="test-") as scratch:
        shutil.copytree(tree, scratch / "ws")
        off = run_tests(env, scratch / "ws", box, timeout=120)
    assert jobs_done() == before and off.outcomes == EXPECTED


def test_past_the_cap_the_least_recently_used_zygote_ends(project: tuple[Path, Environment],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A run over many sources (an environment each) keeps a bounded number of zygotes."""
    tree, env = project
    cache = Path(os.environ["TASKFORGE_CACHE"])
    monkeypatch.setattr(zygote, "KEEP", 1)
    first_box, second_box = require("none"), require("none")  # two sandboxes: two zygotes
    with warm_dir(cache, prefix="test-") as scratch:
        shutil.copytree(tree, scratch / "ws")
        run_tests(env, scratch / "ws", first_box, timeout=120)
        first = [z for z in zygote.ZYGOTES._all if z.sandbox is first_box]
        assert len(first) == 1 and not first[0].broken
        run_tests(env, scratch / "ws", second_box, timeout=120)
    assert first[0].broken, "the older idle zygote was ended"
    assert len(zygote.ZYGOTES._all) == 1


def test_a_zygote_started_ahead_serves_the_first_runs(project: tuple[Path, Environment]
                                                      ) -> None:
    """`warm_up` starts, in the background, the zygotes the first runs would start: a run that
    comes while one is still starting waits for it and runs there, so no run starts another
    (without the wait, this first run would start its own beside it: two zygotes); asking
    again for as many as are there or starting starts none, for more starts the rest."""
    tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    with warm_dir(cache, prefix="test-") as scratch:
        shutil.copytree(tree, scratch / "ws")
        language_named("python").warm_up(env, box, cache, runs=1)
        before = jobs_done()
        run = run_tests(env, scratch / "ws", box, timeout=120, select=[next(iter(EXPECTED))])
        assert run.outcomes == {next(iter(EXPECTED)): "passed"}
        assert jobs_done() == before + 1, "the run went to a zygote"
        (server,) = zygotes_of(box)
        assert server._ids == 1, "the zygote started ahead served the first run"
        language_named("python").warm_up(env, box, cache, runs=1)  # one is idle: nothing to start
        language_named("python").warm_up(env, box, cache, runs=2)  # one more, for a second worker
        # two runs at once (a second worker's screen server): each takes one of the two,
        # the one still starting or the one idle; neither starts a third
        runs = [threading.Thread(target=run_tests, args=(env, scratch / "ws", box),
                                 kwargs={"timeout": 120, "select": [next(iter(EXPECTED))]})
                for _ in range(2)]
        for thread in runs:
            thread.start()
        for thread in runs:
            thread.join()
        assert jobs_done() == before + 3
        assert len(zygotes_of(box)) == 2 and all(z.ahead for z in zygotes_of(box))
        assert sorted(z._ids for z in zygotes_of(box)) == [1, 2]
        assert not any(zygote.ZYGOTES._prestarting.values())


def test_nothing_starts_ahead_where_runs_do_not_go_warm(project: tuple[Path, Environment],
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Warm runs turned off, or a test command a zygote cannot run (not `pytest`): `warm_up`
    starts nothing (it decides before it returns; the control starts one)."""
    _tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    other = dataclasses.replace(env, spec=dataclasses.replace(
        env.spec, test_command=("python", "-m", "unittest")))
    language_named("python").warm_up(other, box, cache)
    monkeypatch.setenv("TASKFORGE_WARM_RUNS", "0")
    language_named("python").warm_up(env, box, cache)
    assert not zygotes_of(box) and not any(zygote.ZYGOTES._prestarting.values())
    monkeypatch.setenv("TASKFORGE_WARM_RUNS", "1")
    language_named("python").warm_up(env, box, cache)  # the control
    assert any(zygote.ZYGOTES._prestarting.values()) or zygotes_of(box)
    deadline = time.monotonic() + 120  # ready (or failed) before the next test counts
    while any(zygote.ZYGOTES._prestarting.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(zygotes_of(box)) == 1


def test_a_zygote_that_fails_to_start_ahead_sends_the_runs_fresh(
        project: tuple[Path, Environment], tmp_path: Path) -> None:
    """A zygote started ahead that never gets ready (here: no interpreter where the
    environment says) is a failed start like a run's own: taking one waits for it and gets
    none, and its key is marked failed, so `Zygotes.run` sends the runs fresh."""
    _tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    broken = dataclasses.replace(env, venv=tmp_path / "no-venv")
    (broken.venv / "bin").mkdir(parents=True)
    language_named("python").warm_up(broken, box, cache)
    (key,) = [k for k in zygote.ZYGOTES._prestarting if k[0] == str(broken.venv)]
    assert zygote.ZYGOTES._take(key) is None  # waited for it: failed
    assert key in zygote.ZYGOTES._failed and not zygotes_of(box)


def test_a_forked_process_starts_its_own_and_leaves_the_parents(
        project: tuple[Path, Environment]) -> None:
    """A worker forked after warm runs began inherits the parent's zygotes (their FIFOs): it
    must neither send them jobs nor end them (with their directories) when it exits; under a
    warm root of its own it starts its own zygote."""
    tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    with warm_dir(cache, prefix="test-") as scratch:
        shutil.copytree(tree, scratch / "ws")
        run_tests(env, scratch / "ws", box, timeout=120, select=[next(iter(EXPECTED))])
        (server,) = zygotes_of(box)
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the child reports through the pipe
            code = 1
            try:
                os.close(read)
                result = run_tests(env, scratch / "ws", box, timeout=120,
                                   select=[next(iter(EXPECTED))])
                # its own warm roots only (workspace.warm_root_of is per process): the
                # parent's workspace runs fresh here, and never through the parent's zygote
                report = {"outcomes": result.outcomes, "served_by_parents": server._ids != 1}
                with warm_dir(cache, prefix="test-child-") as own:
                    shutil.copytree(tree, own / "ws")
                    mine = run_tests(env, own / "ws", box, timeout=120,
                                     select=[next(iter(EXPECTED))])
                    report["own"] = [z is not server and z._ids == 1 for z in zygotes_of(box)]
                    report["own_outcomes"] = mine.outcomes
                zygote.ZYGOTES.close_all()  # what its exit runs: its own zygote only
                os.write(write, json.dumps(report).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        with os.fdopen(read) as f:
            report = json.loads(f.read() or "{}")
        assert os.waitpid(child, 0)[1] == 0
        passed = {next(iter(EXPECTED)): "passed"}
        assert report == {"outcomes": passed, "served_by_parents": False, "own": [True],
                          "own_outcomes": passed}
        assert not server.broken and server.dir.is_dir(), "the child ended the parent's zygote"
        run_tests(env, scratch / "ws", box, timeout=120, select=[next(iter(EXPECTED))])
        assert zygotes_of(box) == [server] and server._ids == 2


PLUGIN = """\
import os

import probedep
import pytest

with open({log!r}, "a") as _log:  # who imported this copy, from where
    _log.write(f"plugin {{os.getpid()}} {{__file__}}\\n")


@pytest.fixture
def probe_value():
    return probedep.VALUE + {offset}


@pytest.fixture
def probe_checked():
    value = probedep.VALUE
    assert value == 41  # rewritten by pytest (a plugin's module), it explains itself
"""
DEPENDENCY = """\
import os

with open({log!r}, "a") as _log:
    _log.write(f"dependency {{os.getpid()}} {{__file__}}\\n")
VALUE = 42
"""
USES_PLUGIN = """\
import os
import sys


def test_the_plugin_is_the_runs(probe_value):
    import probeplug
    assert (probe_value, os.path.dirname(probeplug.__file__)) == ({value}, {where})


def test_the_plugin_is_rewritten(probe_checked):
    pass


def test_a_blocked_plugin_is_not_imported():
    assert "probeplug" not in sys.modules
"""
# warnings as errors, as many projects have: a plugin module imported before pytest marks it
# for rewriting (PytestAssertRewriteWarning) ends such a run
STRICT = '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'


def install(site: Path, name: str, files: dict[str, str], plugin: str | None = None) -> None:
    """A distribution in `site`: its files, listed in its RECORD as pip lists them (pytest
    marks a plugin distribution's modules for rewriting from that list)."""
    for rel, text in files.items():
        (site / rel).write_text(text)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    if plugin:
        (info / "entry_points.txt").write_text(f"[pytest11]\n{plugin} = {plugin}\n")
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files)
                                 + f"{info.name}/RECORD,,\n")


def with_plugin(env: Environment, dest: Path, log: Path) -> Environment:
    """A copy of `env` with a pytest plugin installed (a `pytest11` entry point, as a
    third-party plugin has) and a library it imports, each logging its imports; the plugin
    gives a fixture 42."""
    venv = dest / "venv"
    shutil.copytree(env.venv, venv, symlinks=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    install(site, "probeplug", {"probeplug.py": PLUGIN.format(log=str(log), offset=0)},
            plugin="probeplug")
    install(site, "probedep", {"probedep.py": DEPENDENCY.format(log=str(log))})
    return dataclasses.replace(env, venv=venv)


def imports(log: Path, kind: str) -> list[str]:
    return [line.split(" ", 2)[2] for line in log.read_text().splitlines()
            if line.startswith(kind + " ")]


def test_what_the_environment_s_plugins_import_is_imported_once(
        project: tuple[Path, Environment], tmp_path: Path) -> None:
    """A zygote imports the environment's pytest plugins and what they import, the plugins'
    own modules through pytest's rewriter, as a run rewrites them. A run whose own paths
    hold one of those modules (the project under test providing the plugin, or the
    library), that blocks a plugin (`-p no:NAME`) or that rewrites asserts otherwise
    (`--assert`) drops them all first, and imports what a fresh process would."""
    tree, env = project
    log = tmp_path / "imports.log"
    env = with_plugin(env, tmp_path / "env", log)
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    site = str(next(env.venv.glob("lib/python3*/site-packages")))
    uses = "tests/test_plugin.py::test_the_plugin_is_the_runs"
    rewritten = "tests/test_plugin.py::test_the_plugin_is_rewritten"
    blocked = "tests/test_plugin.py::test_a_blocked_plugin_is_not_imported"
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(tree, ws)
        with open(ws / "pyproject.toml", "a") as config:
            config.write(STRICT)
        (ws / "tests/test_plugin.py").write_text(USES_PLUGIN.format(value=42, where=repr(site)))
        before = jobs_done()
        for _ in range(2):
            plain = run_tests(env, ws, box, timeout=120, select=[uses, rewritten])
            assert plain.outcomes == {uses: "passed", rewritten: "error"}, plain.log_tail
            assert "assert 42 == 41" in plain.log_tail  # the plugin's assert was rewritten
        assert jobs_done() == before + 2
        (server,) = zygotes_of(box)
        # the library and the plugin once for both runs, by the zygote they were forked
        # from: the plugin through pytest's rewriter (its assert explained itself above,
        # and the strict runs saw no PytestAssertRewriteWarning)
        dependency = os.path.join(site, "probedep.py")
        assert imports(log, "dependency") == [dependency]
        assert imports(log, "plugin") == [os.path.join(site, "probeplug.py")]
        # Positive control for what follows: the zygote holds the environment's library,
        # which a run that kept it would use. Now the workspace provides its own.
        # only the value changes (the log's path may hold "42" too: pytest's session number)
        own = DEPENDENCY.format(log=str(log)).replace("VALUE = 42", "VALUE = 43")
        (ws / "probedep.py").write_text(own)
        (ws / "tests/test_plugin.py").write_text(
            USES_PLUGIN.format(value=43, where=repr(site)))
        shadowed = run_tests(env, ws, box, timeout=120, select=[uses])
        assert shadowed.outcomes == {uses: "passed"}, shadowed.log_tail
        assert imports(log, "dependency") == [dependency, str(ws / "probedep.py")]
        (ws / "probedep.py").unlink()
        kept = run_tests(env, ws, box, timeout=120, select=[blocked])
        assert kept.outcomes == {blocked: "failed"}  # imported: not blocked
        templated = server.templated
        off = run_tests(env, ws, box, timeout=120, select=[blocked],
                        extra_args=["-p", "no:probeplug"])
        assert off.outcomes == {blocked: "passed"}, off.log_tail
        # its arguments block more than the server's configuration template did: pytest's
        # own `get_config` made its configuration
        assert server.templated == templated == jobs_done() - before - 1
        assert imports(log, "dependency")[2:] == []  # no run imported the environment's again
        # A run that rewrites asserts otherwise (here: not at all) imports them itself.
        (ws / "tests/test_plugin.py").write_text(USES_PLUGIN.format(value=42, where=repr(site)))
        plain = run_tests(env, ws, box, timeout=120, select=[uses, rewritten],
                          extra_args=["--assert=plain"])
        assert plain.outcomes == {uses: "passed", rewritten: "error"}, plain.log_tail
        assert "assert 42 == 41" not in plain.log_tail
        assert imports(log, "dependency")[2:] == [dependency]
        assert zygotes_of(box) == [server] and jobs_done() == before + 6
        # Positive control for the rewriter: the plugin imported before pytest marks it,
        # unrewritten (what a zygote's plain import would leave), ends a strict run at start.
        python = str(env.venv / "bin" / "python")
        unrewritten = subprocess.run(
            [python, "-c", "import probeplug, pytest, sys; sys.exit(pytest.main("
             f"['-q', '-p', 'no:cacheprovider', {rewritten!r}]))"],
            cwd=ws, capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ws), "PYTHONDONTWRITEBYTECODE": "1"})
        assert unrewritten.returncode != 0
        assert "PytestAssertRewriteWarning" in unrewritten.stdout + unrewritten.stderr


WHERE_THE_WATCH_CAME_FROM = """\
import gc
import json
import sys


def test_where_the_state_watch_came_from():
    import pytest

    module = sys.modules["taskforge_state"]
    with open("watch.json", "w") as f:
        # a module the zygote imported is frozen there: no run's gc sees it; and it knows
        # the real paths of the zygote's modules (pytest's among them) before the run asks
        json.dump({"file": module.__file__,
                   "frozen": not any(o is module for o in gc.get_objects()),
                   "knows pytest": pytest.__file__ in getattr(module, "REAL_PATHS", {})}, f)
"""


def test_the_state_watch_comes_from_the_zygote_unless_the_run_finds_another(
        project: tuple[Path, Environment]) -> None:
    """A confirmation run over part of a suite watches what each test leaves behind with
    `taskforge_state`, which the zygote imports once (runs write no bytecode: each compiled
    it anew), with the real paths of the zygote's modules found (`remember_real_paths`: the
    watch compares each module's with the run's root). A run whose paths hold a module of
    that name imports that one, as a fresh process would."""
    tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    test = "tests/test_watch.py::test_where_the_state_watch_came_from"
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(tree, ws)
        (ws / "tests/test_watch.py").write_text(WHERE_THE_WATCH_CAME_FROM)
        before = jobs_done()
        watched = run_tests(env, ws, box, timeout=120, select=[test], watch_state=True)
        assert watched.outcomes == {test: "passed"}, watched.log_tail
        seen = json.loads((ws / "watch.json").read_text())
        assert seen == {"file": str(PLUGIN_DIR / "taskforge_state.py"), "frozen": True,
                        "knows pytest": True}
        # Positive control: the workspace's own module of that name is the run's, imported
        # by the run itself (not frozen).
        (ws / "taskforge_state.py").write_text("class StateWatch:\n"
                                               "    def __init__(self, out, root):\n"
                                               "        pass\n")
        shadowed = run_tests(env, ws, box, timeout=120, select=[test], watch_state=True)
        assert shadowed.outcomes == {test: "passed"}, shadowed.log_tail
        seen = json.loads((ws / "watch.json").read_text())
        assert seen == {"file": str(ws / "taskforge_state.py"), "frozen": False,
                        "knows pytest": False}
        assert jobs_done() == before + 2


WHERE_THE_PLUGIN_CAME_FROM = """\
import json
import sys

from _pytest.assertion import rewrite


def test_where_the_plugin_came_from():
    with open("plugin.json", "w") as f:
        json.dump({"file": sys.modules["taskforge_pytest_plugin"].__file__,
                   "served": getattr(rewrite._read_pyc, "served", None)}, f)
"""


def test_taskforge_s_plugin_is_rewritten_once_by_the_zygote(
        project: tuple[Path, Environment]) -> None:
    """A sandboxed run reads taskforge's plugin from a read-only directory, where pytest can
    leave no rewritten bytecode: each run parsed, rewrote and compiled it anew. The zygote
    rewrites it once and gives the code to each run that reads that very file
    (`_rewrite_own_plugins`). A run whose workspace holds a module of that name reads its
    own, rewritten by its own pytest, as a fresh process would."""
    tree, env = project
    box = require("bwrap")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    test = "tests/test_plugin_seen.py::test_where_the_plugin_came_from"
    ours = str(PLUGIN_DIR / "taskforge_pytest_plugin.py")
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(tree, ws)
        (ws / "tests/test_plugin_seen.py").write_text(WHERE_THE_PLUGIN_CAME_FROM)
        before = jobs_done()
        run = run_tests(env, ws, box, timeout=120, select=[test])
        assert run.outcomes == {test: "passed"}, run.log_tail
        seen = json.loads((ws / "plugin.json").read_text())
        assert seen == {"file": ours, "served": [ours]}
        # Positive control: served by the module's name, the run would get taskforge's
        # code for the workspace's own file.
        shutil.copy(ours, ws / "taskforge_pytest_plugin.py")
        shadowed = run_tests(env, ws, box, timeout=120, select=[test])
        assert shadowed.outcomes == {test: "passed"}, shadowed.log_tail
        seen = json.loads((ws / "plugin.json").read_text())
        assert seen == {"file": str(ws / "taskforge_pytest_plugin.py"), "served": []}
        assert jobs_done() == before + 2


# A plugin with a fixture hidden behind a decorator (pytest warns that it cannot find it) and
# one it finds.
WRAPPING_PLUGIN = """\
import functools

import pytest


def logged(function):
    @functools.wraps(function)
    def inner(*args, **kwargs):
        return function(*args, **kwargs)
    return inner


@logged
@pytest.fixture
def hidden_value():
    return 1


@pytest.fixture
def found_value():
    return 2
"""
FIXTURES_SEEN = """\
import json

from _pytest.fixtures import FixtureManager


def test_what_the_fixture_manager_holds(request, found_value):
    manager = request.session._fixturemanager
    with open("fixtures.json", "w") as f:
        json.dump({"fixtures": sorted((d.argname, d.func.__module__, d.func.__qualname__,
                                       d.scope) for d in manager._get_all_fixture_defs()),
                   "check": FixtureManager._check_for_wrapped_fixture.__qualname__}, f)
"""


def test_the_wrapped_fixture_check_is_found_once_and_still_warns(
        project: tuple[Path, Environment], tmp_path: Path) -> None:
    """Every run's fixture manager scans each plugin's attributes for a fixture hidden behind a
    decorator (pytest 9.2); what that check finds in pytest's and the preloaded plugins'
    objects the zygote finds once (`_plain_attributes`). A warm run's fixture manager holds
    what a fresh run's holds, and pytest's warning about a plugin's hidden fixture comes in
    both (that object is one the check does not pass over). Positive control, checked by
    hand: a stand-in that passed over every object lost that warning in the warm run."""
    tree, env = project
    box = require("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    venv = tmp_path / "env" / "venv"
    shutil.copytree(env.venv, venv, symlinks=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    install(site, "wrapplug", {"wrapplug.py": WRAPPING_PLUGIN}, plugin="wrapplug")
    env = dataclasses.replace(env, venv=venv)
    test = "tests/test_fixtures_seen.py::test_what_the_fixture_manager_holds"
    seen = {}
    for where in ("fresh", "warm"):
        with contextlib.ExitStack() as stack:
            if where == "warm":
                ws = stack.enter_context(warm_dir(cache, prefix="test-")) / "ws"
            else:
                ws = tmp_path / "fresh"
            shutil.copytree(tree, ws)
            (ws / "tests/test_fixtures_seen.py").write_text(FIXTURES_SEEN)
            before = jobs_done()
            run = run_tests(env, ws, box, timeout=120, select=[test])
            assert jobs_done() == before + (where == "warm")
            assert run.outcomes == {test: "passed"}, run.log_tail
            assert "cannot discover fixture 'hidden_value' due to being wrapped" \
                in run.log_tail, run.log_tail
            seen[where] = json.loads((ws / "fixtures.json").read_text())
    assert seen["warm"]["fixtures"] == seen["fresh"]["fixtures"]
    assert ["found_value", "wrapplug", "found_value", "function"] in seen["warm"]["fixtures"]
    # the warm run's check is the zygote's stand-in, the fresh run's pytest's own
    assert seen["fresh"]["check"] == "FixtureManager._check_for_wrapped_fixture"
    assert seen["warm"]["check"] == "_skip_known_plain.<locals>._check_for_wrapped_fixture"


# The zygote's server with its opens swapped or watched (for the test below): it waits to
# go on until its owner is gone, notes when it reaches the opens, then serves as the real one.
OPENS_WATCHED = """
import os
import runpy
import sys
import time

server = runpy.run_path(os.environ["REAL_SERVER"])  # its imports and set-up, not its main
names = server["main"].__globals__
own = names["_open_ends"]


def blocking(jobs, results):  # what the server did before `_open_ends`
    return open(jobs, encoding="utf-8"), open(results, "w", encoding="utf-8")


def watched(jobs, results):
    while not os.path.exists(os.environ["OWNER_GONE"]):
        time.sleep(0.01)
    open(os.environ["REACHED"], "w").close()
    return (blocking if os.environ["OPENS"] == "blocking" else own)(jobs, results)


names["_open_ends"] = watched
names["main"](sys.argv[1], sys.argv[2])
"""


def processes_naming(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if text.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("opens", ["the server's", "blocking (control)"])
def test_a_server_whose_owner_ended_while_it_started_ends_too(
        project: tuple[Path, Environment], tmp_path: Path, opens: str) -> None:
    """An owner that ends while its zygote is still starting (a second zygote importing the
    environment's modules when the run that started it ends) closes its FIFO ends before the
    server opens its own, and nobody will open them again. The server must end, not wait for
    them. The control is the blocking opens the server had: that server waits forever."""
    _tree, env = project
    box = require("none")  # bwrap's die with their parent; docker's are swept by owner pid
    root = tmp_path / "root"
    root.mkdir()
    wrapper = tmp_path / "opens_watched.py"
    wrapper.write_text(OPENS_WATCHED)
    gone, reached = tmp_path / "owner-gone", tmp_path / "reached"
    variables = {"PATH": f"{env.venv / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(PLUGIN_DIR),
                 "REAL_SERVER": str(zygote.SERVER), "OWNER_GONE": str(gone),
                 "REACHED": str(reached), "OPENS": "blocking" if "control" in opens else ""}
    owner = os.fork()
    if owner == 0:  # pragma: no cover - the owner ends as soon as its server is there
        try:
            zygote.SERVER = wrapper
            mounts = Mounts(readonly=(env.venv, PLUGIN_DIR), writable=(root, tmp_path))
            threading.Thread(target=zygote.Zygote, daemon=True,
                             args=(env, box, root, mounts, variables)).start()
            deadline = time.monotonic() + 60
            while not processes_naming(str(wrapper)) and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            os._exit(0)
    os.waitpid(owner, 0)
    servers = processes_naming(str(wrapper))
    assert servers, "the owner's zygote server did not start"
    gone.touch()
    try:
        deadline = time.monotonic() + 120
        while not reached.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reached.exists(), "the server did not reach its opens"
        if "control" in opens:
            time.sleep(2)
            assert processes_naming(str(wrapper)) == servers, "the control did not wait"
        else:
            deadline = time.monotonic() + 60
            while processes_naming(str(wrapper)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not processes_naming(str(wrapper)), "the server outlived its owner"
    finally:
        for pid in processes_naming(str(wrapper)):  # ours: its command names our tmp_path
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_a_run_goes_to_the_child_forked_ahead_and_none_outlives_the_server(
        project: tuple[Path, Environment], monkeypatch: pytest.MonkeyPatch) -> None:
    """The server forks each run's child as soon as the run before it ended (`_Parked`): the
    next run is that very process, and when the server ends, so does the child it held."""
    tree, env = project
    box = require("none")
    monkeypatch.setattr(zygote, "KEEP", 1)  # this test's zygote is the only one alive
    cache = Path(os.environ["TASKFORGE_CACHE"])
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(tree, ws)
        (ws / "tests/test_pid.py").write_text(
            "import os\n\ndef test_pid():\n    open('pid.txt', 'w').write(str(os.getpid()))\n")
        select = ["tests/test_pid.py::test_pid"]
        first = run_tests(env, ws, box, timeout=120, select=select)
        assert first.outcomes == {"tests/test_pid.py::test_pid": "passed"}
        (server,) = zygotes_of(box)
        deadline = time.monotonic() + 30  # it forks the next run's child after answering
        while len(processes_naming(str(server.dir))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        named = processes_naming(str(server.dir))
        parked = [pid for pid in named if _parent_of(pid) in named]
        assert len(named) == 2 and len(parked) == 1, "a server and the child it holds"
        second = run_tests(env, ws, box, timeout=120, select=select)
        assert second.outcomes == first.outcomes
        assert int((ws / "pid.txt").read_text()) == parked[0], "the run was the parked child"
        server.close(wait=5.0)
        deadline = time.monotonic() + 30
        while processes_naming(str(server.dir)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not processes_naming(str(server.dir)), "nothing of the server outlived it"

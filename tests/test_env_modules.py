"""Environment modules imported ahead by a zygote (`testing/zygote.py`,
`pytest_plugin/taskforge_preload.py`): what runs' collections import from the environment
is imported once, and a run forked from that zygote finds it imported; it must get the
outcomes a fresh run gets. Each module below would change some test's outcome if a zygote
imported it naively (the positive control: a process that imports it where a zygote does,
then runs the test as a run forked from it would), and taskforge's zygote either refuses it
or sends the run that would see the difference to the plain zygote."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import make_project, setuptools_pyproject
from test_sandbox import require
from test_zygote import install

from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.languages.python.testing import zygote
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Environment, SourceSpec
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.sources import ingest_source
from taskforge.workspace import warm_dir

# The environment's modules: each records where it was imported (and by which process)
LOG = "{log!r}"
MODULES = {
    # harmless: imported ahead, never again by a run
    "calm.py": f"import os\nwith open({LOG}, 'a') as f:\n"
               "    f.write(f'calm {{os.getpid()}}\\n')\nVALUE = 7\n",
    # the working directory when imported: the zygote's, not the run's workspace
    "cwdmod.py": "import os\nCWD = os.getcwd()\n",
    # HOME when imported: the zygote's, not the run's
    "homemod.py": "import os\nHOME = os.environ['HOME']\n",
    # a variable a test module sets before importing it
    "envmod.py": "import os\nMODE = os.environ.get('PROBE_MODE')\n",
    # a warning a test expects to see when it imports it
    "warnmod.py": "import warnings\nwarnings.warn('old', DeprecationWarning, stacklevel=2)\n",
    # a module of the standard library changed for everyone
    "patcher.py": "import string\nstring.capwords = lambda s, sep=None: 'patched'\n",
    # `__main__` as it was when imported: the zygote's script, not pytest's
    "mainmod.py": "import sys\nMAIN = getattr(sys.modules['__main__'], '__file__', None)\n",
    # found in site-packages unless the run's tree has its own
    "shadowmod.py": "WHERE = 'environment'\n",
}
FILES = {
    # the suite is tests/; learn/ is run by name only (a whole-suite run that imported its
    # modules first would see what a zygote that imported them naively sees)
    "pyproject.toml": setuptools_pyproject("probe", "0.1")
    + '[tool.setuptools]\npackages = ["probe"]\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "probe/__init__.py": "",
    # the run that teaches the zygote: its collection imports every module above
    "learn/test_learn.py": """\
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import warnmod
        import calm, cwdmod, envmod, homemod, mainmod, patcher, shadowmod


        def test_learn():
            pass
        """,
    "tests/test_calm.py": """\
        import calm


        def test_calm():
            assert calm.VALUE == 7
        """,
    "tests/test_cwd.py": """\
        import os

        import cwdmod


        def test_cwd():
            assert cwdmod.CWD == os.getcwd()
        """,
    "tests/test_home.py": """\
        import os

        import homemod


        def test_home():
            assert homemod.HOME == os.environ["HOME"]
        """,
    "tests/test_env.py": """\
        import os

        os.environ["PROBE_MODE"] = "on"
        import envmod


        def test_env():
            assert envmod.MODE == "on"
        """,
    "tests/test_warn.py": """\
        import pytest


        def test_warn():
            with pytest.warns(DeprecationWarning):
                import warnmod  # noqa: F401
        """,
    "tests/test_string.py": """\
        import string


        def test_string():
            assert string.capwords("a b") == "A B"
        """,
    "tests/test_main.py": """\
        import sys

        import mainmod


        def test_main():
            assert mainmod.MAIN == sys.modules["__main__"].__file__
        """,
    "tests/test_shadow.py": """\
        import os

        import shadowmod


        def test_shadow():
            expected = "project" if os.path.exists("shadowmod.py") else "environment"
            assert shadowmod.WHERE == expected
        """,
}
CASES = ["calm", "cwd", "home", "env", "warn", "string", "main", "shadow"]


def node_id(case: str) -> str:
    return f"{'learn' if case == 'learn' else 'tests'}/test_{case}.py::test_{case}"


@dataclasses.dataclass
class Setup:
    tree: Path
    env: Environment
    log: Path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    base = tmp_path_factory.mktemp("env-modules")
    root = make_project(base, FILES)
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    venv = base / "venv"
    shutil.copytree(env.venv, venv, symlinks=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    log = base / "imports.log"
    for name, text in MODULES.items():
        install(site, name[:-3], {name: text.format(log=str(log))})
    return Setup(snapshot.root, dataclasses.replace(env, venv=venv), log)


def naive_outcome(setup: Setup, ws: Path, case: str, home: Path) -> str:
    """The test's outcome in a run forked from a zygote that imported every module above
    as it is, unwatched: a process that imports them with the zygote's working directory and
    HOME, then becomes the run (its working directory, environment and path) and runs it."""
    elsewhere = home.parent / "zygote-dir"
    elsewhere.mkdir(exist_ok=True)
    code = (
        "import os, runpy, sys, warnings\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        f"    for name in {sorted(n[:-3] for n in MODULES)!r}: __import__(name)\n"
        f"os.chdir({str(ws)!r}); os.environ['HOME'] = {str(home)!r}\n"
        f"sys.path.insert(0, {str(ws)!r})\n"
        f"sys.argv = ['-m', '-q', '-p', 'no:cacheprovider', {node_id(case)!r}]\n"
        "runpy._run_module_as_main('pytest')  # as a zygote's run does\n")
    python = str(setup.env.venv / "bin" / "python")
    done = subprocess.run([python, "-c", code], cwd=elsewhere, capture_output=True, text=True,
                          timeout=120, env={"PATH": os.environ["PATH"],
                                            "HOME": str(elsewhere), "PYTHONDONTWRITEBYTECODE": "1"})
    return {0: "passed", 1: "failed"}.get(done.returncode, f"exit {done.returncode}")


def with_env_modules(box: Sandbox) -> list[zygote.Zygote]:
    return [z for z in zygote.ZYGOTES._all if z.offered and not z.broken and z.sandbox is box]


@pytest.mark.parametrize("backend", ["none", "bwrap", "docker"])
def test_runs_find_what_a_fresh_run_finds(setup: Setup, tmp_path: Path, backend: str) -> None:
    box = require(backend)
    cache = Path(os.environ["TASKFORGE_CACHE"])
    fresh_ws = tmp_path / "fresh"
    shutil.copytree(setup.tree, fresh_ws)
    fresh = run_tests(setup.env, fresh_ws, box, timeout=120)
    assert fresh.outcomes == {node_id(c): "passed" for c in CASES}, fresh.log_tail
    # Positive control: a zygote that imported them naively fails each but the harmless one
    # (and the shadowed module, which this tree does not shadow yet: see the end)
    naive = {c: naive_outcome(setup, fresh_ws, c, tmp_path / "home") for c in CASES}
    assert naive == {**dict.fromkeys(CASES, "failed"), "calm": "passed", "shadow": "passed"}
    (tmp_path / "home").mkdir(exist_ok=True)
    imported_before = setup.log.read_text().split().count("calm")
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(setup.tree, ws)
        learned = run_tests(setup.env, ws, box, timeout=120, select=[node_id("learn")])
        assert learned.outcomes == {node_id("learn"): "passed"}
        deadline = time.monotonic() + 180
        while not with_env_modules(box) and time.monotonic() < deadline:
            time.sleep(0.2)  # it starts in the background
        (server,) = with_env_modules(box)
        assert "calm" in server.preloaded
        refused = {n: why for n, why in server.refused.items() if n in
                   ("cwdmod", "homemod", "warnmod", "patcher", "mainmod")}
        assert "working directory" in refused["cwdmod"]
        assert "$HOME" in refused["homemod"]
        assert "warns on import" in refused["warnmod"]
        assert "rebinds string.capwords" in refused["patcher"]
        assert "__main__" in refused["mainmod"]
        # envmod reads $PROBE_MODE, which no run sets: taken, and watched
        assert {"envmod", "shadowmod"} <= set(server.preloaded)
        elsewhere = zygote.ZYGOTES.elsewhere
        for case in CASES:
            warm = run_tests(setup.env, ws, box, timeout=120, select=[node_id(case)])
            assert warm.outcomes == {node_id(case): "passed"}, (case, warm.log_tail)
        # test_env set $PROBE_MODE before importing envmod: its run went to the plain zygote
        assert zygote.ZYGOTES.elsewhere == elsewhere + 1
        assert server._ids == len(CASES), "each went to the zygote with the modules first"
        # calm was imported by the learning run, then by the new zygote (its check in a fork
        # and its own import), never by a run forked from it (the host sees what a sandbox
        # wrote only without one)
        if backend == "none":
            assert setup.log.read_text().split().count("calm") == imported_before + 3
        # A workspace with a module of its own by the name of one imported ahead runs where
        # it is not imported.
        (ws / "shadowmod.py").write_text("WHERE = 'project'\n")
        shadowed = run_tests(setup.env, ws, box, timeout=120, select=[node_id("shadow")])
        assert shadowed.outcomes == {node_id("shadow"): "passed"}, shadowed.log_tail
        assert zygote.ZYGOTES.elsewhere == elsewhere + 2
        assert naive_outcome(setup, ws, "shadow", tmp_path / "home") == "failed"


def test_the_learned_modules_are_the_environment_s_own(setup: Setup) -> None:
    """What a run reports imported: the environment's modules, in the order they were
    imported, never the project's or the tests', nor what the zygote had already."""
    box = get_sandbox("none")
    cache = Path(os.environ["TASKFORGE_CACHE"])
    with warm_dir(cache, prefix="test-") as scratch:
        ws = scratch / "ws"
        shutil.copytree(setup.tree, ws)
        seen: list[dict] = []
        real = zygote.Zygote.run

        def run(self: zygote.Zygote, *args: object, **kwargs: object) -> object:
            result = real(self, *args, **kwargs)
            seen.append(self.answer)
            return result

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(zygote.Zygote, "run", run)
            patch.setenv("TASKFORGE_ENV_MODULES", "0")
            run_tests(setup.env, ws, box, timeout=120, select=[node_id("learn")])
    imported = seen[-1]["imported"]
    ours = [n for n in imported if f"{n}.py" in MODULES]
    assert ours == ["warnmod", "calm", "cwdmod", "envmod", "homemod", "mainmod", "patcher",
                    "shadowmod"]  # as test_learn.py imports them
    assert not any(n.startswith(("probe", "learn", "test_", "pytest", "_pytest", "taskforge"))
                   for n in imported)

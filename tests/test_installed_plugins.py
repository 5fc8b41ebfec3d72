"""Plugins a project's test extra installs that act with no option anywhere: taskforge's runs
keep the collected order and draw the same random numbers in every run (pytest-randomly), and
run each benchmark once (pytest-benchmark, here behind a marker so that the test command does
not name it), where a plain pytest run in the same environment shuffles the tests, reseeds
from a new seed each session and repeats each benchmark."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import make_project

from taskforge.languages import language_named
from taskforge.languages.base import Runner
from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sources import ingest_source

COUNT = 8  # shuffled, 8 tests keep their order once in 40,320 sessions
PYPROJECT = ('[project]\nname = "calc"\nversion = "0.1"\n'
             '[project.optional-dependencies]\ntests = ["pytest", "pytest-randomly", '
             '"pytest-benchmark; python_version >= \'3.8\'"]\n'
             '[build-system]\nrequires = ["setuptools>=61"]\n'
             'build-backend = "setuptools.build_meta"\n')
# Each test passes only when the ones before it in the file ran first; `test_draw` writes
# the number it draws where the test can read it.
ORDERED = "SEEN = []\n\n" + "".join(
    f"\ndef test_{i}():\n    assert SEEN == list(range({i}))\n    SEEN.append({i})\n\n"
    for i in range(COUNT))
DRAW = ("import os\nimport random\n\n\ndef test_draw():\n"
        "    with open(os.environ['DRAWN'], 'a') as out:\n"
        "        out.write(f'{random.random()}\\n')\n")
# The benchmarked function counts its calls where the test can read them.
BENCH = ("import os\n\n\ndef counted():\n"
         "    with open(os.environ['CALLS'], 'a') as out:\n"
         "        out.write('.')\n\n\n"
         "def test_bench(benchmark):\n    benchmark(counted)\n")
TESTS = [f"tests/test_order.py::test_{i}" for i in range(COUNT)] + \
    ["tests/test_draw.py::test_draw", "tests/test_bench.py::test_bench"]


@pytest.fixture(scope="module")
def plugins_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner]:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    root = make_project(tmp_path_factory.mktemp("randomly"), {
        "pyproject.toml": PYPROJECT, "calc/__init__.py": "",
        "tests/test_order.py": ORDERED, "tests/test_draw.py": DRAW,
        "tests/test_bench.py": BENCH})
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    assert (env.venv / "bin" / "python").is_file()
    return snapshot.root, Runner(language_named("python"), env, get_sandbox("none"), 120,
                                 cache=cache)


def test_installed_plugins_keep_the_order_the_draws_and_one_call(plugins_env,
                                                                   tmp_path: Path) -> None:
    snapshot_root, runner = plugins_env
    env, root = runner.env, tmp_path / "ws"
    shutil.copytree(snapshot_root, root)
    assert "--benchmark-disable" not in env.spec.test_command  # the marker hid it
    drawn, calls = tmp_path / "drawn.txt", tmp_path / "calls.txt"
    variables = {"DRAWN": str(drawn), "CALLS": str(calls)}
    # Positive control: a plain pytest run in the same environment, twice. pytest-randomly
    # is there (the project's extra installed it) and shuffles: the order tests fail, and
    # the two sessions draw different numbers; pytest-benchmark repeats the function.
    plain = [subprocess.run([str(env.venv / "bin" / "python"), "-m", "pytest", "-p",
                             "no:cacheprovider", "tests"], cwd=root, capture_output=True,
                            text=True, env={**os.environ, **variables,
                                            "PYTHONPATH": str(root)}) for _ in range(2)]
    assert all("Using --randomly-seed=" in run.stdout for run in plain)
    assert all(run.returncode == 1 and " failed" in run.stdout for run in plain)
    first, second = drawn.read_text().split()
    assert first != second
    assert len(calls.read_text()) > 10
    drawn.unlink()
    calls.unlink()
    # taskforge's runs, the whole suite twice and one test alone: the ordered tests pass
    # in the collected order, and every session draws the same number.
    def run(select: list[str] | None = None) -> dict[str, str]:
        return run_tests(env, root, runner.sandbox, timeout=120, select=select,
                         extra_env=variables).outcomes

    forward = run()
    assert forward == dict.fromkeys(TESTS, "passed")
    assert run() == forward
    assert run(["tests/test_draw.py::test_draw"]) == {"tests/test_draw.py::test_draw": "passed"}
    assert len(set(drawn.read_text().split())) == 1  # three sessions, one number
    assert calls.read_text() == ".."  # two sessions ran the benchmark, once each

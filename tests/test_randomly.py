"""pytest-randomly, installed by the project's own test extra: taskforge's runs keep the
collected order and draw the same random numbers in every run, where a plain pytest run in
the same environment shuffles the tests and reseeds from a new seed each session."""

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
             '[project.optional-dependencies]\ntests = ["pytest", "pytest-randomly"]\n'
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
TESTS = [f"tests/test_order.py::test_{i}" for i in range(COUNT)] + ["tests/test_draw.py::test_draw"]


@pytest.fixture(scope="module")
def randomly_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner]:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    root = make_project(tmp_path_factory.mktemp("randomly"), {
        "pyproject.toml": PYPROJECT, "calc/__init__.py": "",
        "tests/test_order.py": ORDERED, "tests/test_draw.py": DRAW})
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    assert (env.venv / "bin" / "python").is_file()
    return snapshot.root, Runner(language_named("python"), env, get_sandbox("none"), 120,
                                 cache=cache)


def test_randomly_keeps_the_order_and_the_draws(randomly_env, tmp_path: Path) -> None:
    snapshot_root, runner = randomly_env
    env, root = runner.env, tmp_path / "ws"
    shutil.copytree(snapshot_root, root)
    drawn = tmp_path / "drawn.txt"
    # Positive control: a plain pytest run in the same environment, twice. pytest-randomly
    # is there (the project's extra installed it) and shuffles: the order tests fail, and
    # the two sessions draw different numbers.
    plain = [subprocess.run([str(env.venv / "bin" / "python"), "-m", "pytest", "-p",
                             "no:cacheprovider", "tests"], cwd=root, capture_output=True,
                            text=True, env={**os.environ, "DRAWN": str(drawn),
                                            "PYTHONPATH": str(root)}) for _ in range(2)]
    assert all("Using --randomly-seed=" in run.stdout for run in plain)
    assert all(run.returncode == 1 and " failed" in run.stdout for run in plain)
    first, second = drawn.read_text().split()
    assert first != second
    drawn.unlink()
    # taskforge's runs, the whole suite twice and one test alone: the ordered tests pass
    # in the collected order, and every session draws the same number.
    def run(select: list[str] | None = None) -> dict[str, str]:
        return run_tests(env, root, runner.sandbox, timeout=120, select=select,
                         extra_env={"DRAWN": str(drawn)}).outcomes

    forward = run()
    assert forward == dict.fromkeys(TESTS, "passed")
    assert run() == forward
    assert run(["tests/test_draw.py::test_draw"]) == {"tests/test_draw.py::test_draw": "passed"}
    assert len(set(drawn.read_text().split())) == 1  # three sessions, one number

"""Plugins a project's test extra installs that act with no option anywhere: taskforge's runs
keep the collected order and draw the same random numbers in every run (pytest-randomly), run
each benchmark once (pytest-benchmark, here behind a marker so that the test command does not
name it), run a test marked flaky once (pytest-rerunfailures, pytest-retry, flaky) and give a
property test the same examples in every run, with no deadline and no saved examples
(hypothesis). Each against its positive control: a plain pytest run in the same environment
shuffles the tests, reseeds from a new seed each session, repeats each benchmark, passes a
flaky test on a second try, draws other examples each session, fails a slow example and
saves it."""

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
from taskforge.model import Environment, SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sources import ingest_source

COUNT = 8  # shuffled, 8 tests keep their order once in 40,320 sessions
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


def pyproject(extra: str) -> str:
    """A package whose `tests` extra lists `extra`; markers are strict, as in many projects
    (a marker no plugin declares stops the run)."""
    return ('[project]\nname = "calc"\nversion = "0.1"\n'
            f'[project.optional-dependencies]\ntests = [{extra}]\n'
            '[build-system]\nrequires = ["setuptools>=61"]\n'
            'build-backend = "setuptools.build_meta"\n'
            '[tool.pytest.ini_options]\naddopts = "--strict-markers"\n')


# The first try in a session fails, a second passes: what a rerun plugin hides.
SETTLES = ("import pytest\n\nCALLS = []\n\n\n@pytest.mark.flaky(reruns=2)\n"
           "def test_settles():\n    CALLS.append(1)\n    assert len(CALLS) > 1\n")
SETTLES_FLAKY = ("from flaky import flaky\n\nCALLS = []\n\n\n@flaky(max_runs=3)\n"
                 "def test_settles():\n    CALLS.append(1)\n    assert len(CALLS) > 1\n")
# `test_draws` writes each example it is given; `test_slow`'s examples run past hypothesis's
# default deadline (200 ms); `test_fails` finds a failing example (which a database saves).
PROPERTIES = ("import os\nimport time\n\nfrom hypothesis import given, settings\n"
              "from hypothesis import strategies as st\n\n\n"
              "@settings(max_examples=100)\n@given(st.integers())\n"
              "def test_draws(number):\n    with open(os.environ['DRAWN'], 'a') as out:\n"
              "        out.write(f'{number}\\n')\n\n\n"
              "@settings(max_examples=2)\n@given(st.integers())\n"
              "def test_slow(number):\n    time.sleep(0.4)\n\n\n"
              "@given(st.integers())\ndef test_fails(number):\n    assert number < 1000\n")


def build(tmp_path_factory: pytest.TempPathFactory, name: str,
          files: dict[str, str]) -> tuple[Path, Runner]:
    cache = Path(os.environ["TASKFORGE_CACHE"])
    root = make_project(tmp_path_factory.mktemp(name), {"calc/__init__.py": "", **files})
    spec = SourceSpec(kind="path", location=str(root))
    snapshot = ingest_source(spec, cache, root.parent)
    env = build_environment(snapshot, detect_spec(snapshot.root, spec), cache)
    assert (env.venv / "bin" / "python").is_file()
    return snapshot.root, Runner(language_named("python"), env, get_sandbox("none"), 120,
                                 cache=cache)


@pytest.fixture(scope="module")
def plugins_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner]:
    return build(tmp_path_factory, "randomly", {
        "pyproject.toml": pyproject(
            '"pytest", "pytest-randomly", "pytest-benchmark; python_version >= \'3.8\'"'),
        "tests/test_order.py": ORDERED, "tests/test_draw.py": DRAW,
        "tests/test_bench.py": BENCH})


def plain_pytest(env: Environment, root: Path, variables: dict[str, str],
                 *args: str) -> subprocess.CompletedProcess:
    """The positive controls' run: pytest in the task's environment, as a user runs it."""
    return subprocess.run([str(env.venv / "bin" / "python"), "-m", "pytest", "-p",
                           "no:cacheprovider", *args], cwd=root, capture_output=True,
                          text=True, env={**os.environ, **variables, "PYTHONPATH": str(root)})


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
    plain = [plain_pytest(env, root, variables, "tests") for _ in range(2)]
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


@pytest.mark.parametrize("extra, test_file", [
    ('"pytest", "pytest-rerunfailures"', SETTLES),
    ('"pytest", "flaky"', SETTLES_FLAKY),
    ('"pytest", "pytest-retry"', SETTLES.replace("reruns=", "retries="))],
    ids=["pytest-rerunfailures", "flaky", "pytest-retry"])
def test_a_test_marked_flaky_runs_once(tmp_path_factory: pytest.TempPathFactory,
                                       extra: str, test_file: str) -> None:
    snapshot_root, runner = build(tmp_path_factory, "reruns", {
        "pyproject.toml": pyproject(extra), "tests/test_settles.py": test_file})
    root = tmp_path_factory.mktemp("ws") / "ws"
    shutil.copytree(snapshot_root, root)
    # Positive control: the plugin passes the test on its second try.
    plain = plain_pytest(runner.env, root, {}, "-rA", "tests")
    assert plain.returncode == 0, plain.stdout
    assert "1 passed" in plain.stdout
    # taskforge's runs try it once, and the strict markers still know `flaky`.
    test = "tests/test_settles.py::test_settles"
    for select in (None, [test]):
        run = run_tests(runner.env, root, runner.sandbox, timeout=120, select=select)
        assert run.outcomes == {test: "failed"}, run.log_tail


# Integer literals of a project module, which recent hypothesis mixes into what it draws
# once the module is imported (here by another test file, in a whole-suite run only).
LIMITS = "LIMITS = (1234567, 7654321, 31337, 65521)\n"


@pytest.fixture(scope="module")
def hypothesis_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner]:
    return build(tmp_path_factory, "hypothesis", {
        "pyproject.toml": pyproject('"pytest", "hypothesis"'),
        "tests/test_properties.py": PROPERTIES, "calc/limits.py": LIMITS,
        "tests/test_limits.py": "from calc.limits import LIMITS\n\n\n"
                                "def test_limits():\n    assert len(LIMITS) == 4\n"})


def test_property_tests_get_the_same_examples_no_deadline_and_no_database(
        hypothesis_env: tuple[Path, Runner], tmp_path: Path) -> None:
    snapshot_root, runner = hypothesis_env
    env, root = runner.env, tmp_path / "ws"
    shutil.copytree(snapshot_root, root)
    drawn = tmp_path / "drawn.txt"
    variables = {"DRAWN": str(drawn)}
    saved = root / ".hypothesis" / "examples"

    def draws() -> list[str]:
        examples = drawn.read_text().split()
        drawn.unlink()
        return examples

    # Positive control: plain pytest, twice, with hypothesis' default profile (on a CI
    # machine it would load its `ci` profile by itself). Each session draws other examples;
    # the slow test fails on the deadline, and its failing example is saved in the workspace.
    draws_of_plain = []
    for _ in range(2):
        plain = plain_pytest(env, root, variables, "--hypothesis-profile=default", "tests")
        assert plain.returncode == 1 and "DeadlineExceeded" in plain.stdout, plain.stdout
        draws_of_plain.append(draws())
    assert draws_of_plain[0] != draws_of_plain[1]
    assert saved.is_dir() and any(saved.rglob("*"))
    shutil.rmtree(root / ".hypothesis")
    # taskforge's runs: the same examples in every session, alone or in the whole suite
    # (which imported calc/limits.py's literals), the slow test passes, nothing saved.
    everything = {"tests/test_limits.py::test_limits": "passed",
                  "tests/test_properties.py::test_draws": "passed",
                  "tests/test_properties.py::test_slow": "passed",
                  "tests/test_properties.py::test_fails": "failed"}

    def run(select: list[str] | None = None, *args: str) -> dict[str, str]:
        result = run_tests(env, root, runner.sandbox, timeout=120, select=select,
                           extra_env=variables, extra_args=args)
        return result.outcomes

    assert run() == everything
    first = draws()
    assert run() == everything and draws() == first
    alone = ["tests/test_properties.py::test_draws"]
    assert run(alone) == {alone[0]: "passed"} and draws() == first
    assert not saved.exists()
    # A seed the project gives is kept (not derandomized): examples from that seed, the same
    # in every session.
    assert run(alone, "--hypothesis-seed=5") == {alone[0]: "passed"}
    seeded = draws()
    assert run(alone, "--hypothesis-seed=5") == {alone[0]: "passed"}
    assert draws() == seeded != first

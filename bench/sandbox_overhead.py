"""What containment costs: wall time of real pytest runs under none, bwrap and docker.

    python bench/sandbox_overhead.py [--source pypi:cachetools==8.0.1] [--repeat 5]

Three workloads, each run through taskforge's own runner (`run_tests`: the argv, environment
and mounts that baseline, verify and grade use), alternating backends in the same process:
- `exec`: `python -c pass` through `Sandbox.exec` (the backend's own fixed cost);
- `one test`: a one-test pytest run (what grading one FAIL_TO_PASS test costs);
- `full suite`: a real package's whole suite (default: sample_repos/textkit, no network; or
  any source, e.g. pypi:cachetools==8.0.1, 465 tests, which needs PyPI the first time).
Prints the median (and min) of N runs per backend and the ratio of medians to none, then what
reusing one docker container across runs would save (`docker exec` against a fresh
container; see docs/sandbox.md for why each run still gets a fresh one). A backend
that is not available here is reported as such. The environment and, for docker, the base
image are built before timing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.languages.python.env import build_environment, detect_spec
from taskforge.languages.python.testing.runner import run_tests
from taskforge.model import Environment, SourceSpec
from taskforge.sandbox import BACKENDS, Mounts, Sandbox, why_unavailable
from taskforge.sources import ingest_source

REPO = Path(__file__).resolve().parents[1]
ONE_TEST = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "onetest"
        version = "0.1.0"

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.setuptools]
        packages = ["onetest"]
    """,
    "onetest/__init__.py": "def double(x):\n    return 2 * x\n",
    "tests/test_one.py": "from onetest import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
}


def parse_source(text: str) -> SourceSpec:
    if text.startswith("pypi:"):
        return SourceSpec(kind="pypi", location=text[5:])
    if "://" in text:
        return SourceSpec(kind="git", location=text)
    return SourceSpec(kind="path", location=str(Path(text).resolve()))


def prepare(spec: SourceSpec, cache: Path) -> tuple[Path, Environment]:
    snapshot = ingest_source(spec, cache, Path.cwd())
    return snapshot.root, build_environment(snapshot, detect_spec(snapshot.root, spec), cache)


def time_suite(box: Sandbox, root: Path, env: Environment, scratch: Path,
               select: list[str] | None) -> tuple[float, int]:
    workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=scratch))
    shutil.copytree(root, workspace, dirs_exist_ok=True)
    start = time.perf_counter()
    run = run_tests(env, workspace, box, timeout=600, select=select)
    elapsed = time.perf_counter() - start
    shutil.rmtree(workspace, ignore_errors=True)
    if run.timed_out or not run.outcomes:
        raise SystemExit(f"{box.name}: the run failed:\n{run.log_tail}")
    return elapsed, len(run.passed())


def time_exec(box: Sandbox, env: Environment, scratch: Path) -> tuple[float, int]:
    start = time.perf_counter()
    result = box.exec([str(env.venv / "bin" / "python"), "-c", "pass"], workspace=scratch,
                      env={"PATH": "/usr/bin:/bin"}, timeout=60, mounts=Mounts(readonly=(env.venv,)))
    if result.exit_code != 0:
        raise SystemExit(f"{box.name}: exec failed: {result.output}")
    return time.perf_counter() - start, 0


def docker_reuse(box: Sandbox, env: Environment, scratch: Path, repeat: int) -> None:
    """What reusing one container across the runs of a task would save: `python -c pass` in
    a fresh container (what DockerSandbox does) against `docker exec` in a running one."""
    image, _mounts, moved = box.image_for(Mounts(readonly=(env.venv,)))  # type: ignore[attr-defined]
    python = str(env.venv / "bin" / "python").replace(*next(iter(moved.items())))
    running = box.client.containers.run(image, ["sleep", "600"], detach=True,  # type: ignore[attr-defined]
                                        network_mode="none", init=True, remove=True)
    try:
        fresh, reused = [], []
        for _ in range(repeat):
            fresh.append(time_exec(box, env, scratch)[0])
            start = time.perf_counter()
            running.exec_run([python, "-c", "pass"])
            reused.append(time.perf_counter() - start)
    finally:
        running.kill()
    print(f"docker container reuse\n  fresh container {statistics.median(fresh):7.3f}"
          f"\n  exec in running {statistics.median(reused):7.3f}"
          f"  (saves {statistics.median(fresh) - statistics.median(reused):.3f} s a run)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(REPO / "sample_repos" / "textkit"),
                        help="the package whose full suite is timed (path, git URL or pypi:N==V)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backends", default="none,bwrap,docker")
    args = parser.parse_args()
    os.environ.setdefault("TASKFORGE_QUIET_SANDBOX", "1")

    cache = cache_root()
    scratch = Path(tempfile.mkdtemp(prefix="taskforge-bench-"))
    try:
        one_root = scratch / "onetest"
        for rel, text in ONE_TEST.items():
            (one_root / rel).parent.mkdir(parents=True, exist_ok=True)
            (one_root / rel).write_text(textwrap.dedent(text))
        one = prepare(SourceSpec(kind="path", location=str(one_root)), cache)
        full = prepare(parse_source(args.source), cache)

        boxes: dict[str, Sandbox] = {}
        for name in args.backends.split(","):
            why = why_unavailable(name)
            if why:
                print(f"{name}: not available here ({why})")
                continue
            boxes[name] = BACKENDS[name]()
        workloads = {
            "exec (python -c pass)": lambda b: time_exec(b, one[1], scratch),
            "one test": lambda b: time_suite(b, *one, scratch, ["tests/test_one.py::test_double"]),
            f"full suite ({args.source.rsplit('/', 1)[-1]})": lambda b: time_suite(b, *full, scratch,
                                                                                    None),
        }
        print(f"{args.repeat} runs each, alternating backends; median (min) seconds; ratio of "
              "medians to none\n")
        for label, work in workloads.items():
            for box in boxes.values():
                work(box)  # warm-up: page cache, docker base image
            times: dict[str, list[float]] = {name: [] for name in boxes}
            passed: dict[str, int] = {}
            for _ in range(args.repeat):
                for name, box in boxes.items():
                    seconds, passed[name] = work(box)
                    times[name].append(seconds)
            base = statistics.median(times["none"]) if "none" in times else None
            print(label)
            for name, values in times.items():
                median = statistics.median(values)
                ratio = f"{median / base:5.2f}x" if base else "  n/a"
                tests = f"  {passed[name]} passed" if passed[name] else ""
                print(f"  {name:7s} {median:7.3f} ({min(values):.3f})  {ratio}"
                      f"  +{median - (base or median):.3f} s{tests}")
            print()
        if "docker" in boxes:
            docker_reuse(boxes["docker"], one[1], scratch, args.repeat)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

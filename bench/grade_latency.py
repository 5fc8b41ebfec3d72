"""What an RL loop pays per task: materialize + grade a correct solution, against bare pytest,
and what the grader's checks of the test process (canaries, the integrity observer) add.

    python bench/grade_latency.py [--source sample_repos/textkit --source ...] [--tasks 2]
                                  [--repeat 5] [--sandbox auto]

Generates a few tasks from each source (default: the three sample repositories; a pinned
sdist such as `pypi:cachetools==8.0.1` works too, the first run needing PyPI), then for each
task, in the same process, environment and sandbox, alternating the order every round:
- `bare pytest`: `python -m pytest -q -p no:cacheprovider <the task's node ids>` in the
  sandbox on a ready reference workspace: the least any grader must pay for these tests;
- `materialize`: `Task.materialize(dest)` (snapshot copy, deletion patch, sanitizing, fresh git);
- `before`: the grade without the checks (`grade_workspace(..., checks=False)`: the copy,
  restoring, the static scan, the audited pytest run): the grade as it was before them;
- `grade`: `Task.grade(workspace)` of the reference solution, canaries and observer included.
Prints the median of N runs per task and two ratios: grade / before (the checks' cost; goal
1.2x or less) and (materialize + grade) / bare pytest (goal 1.5x or less), and their medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import taskforge
from taskforge.cache import cache_root
from taskforge.grade import grade_workspace
from taskforge.languages.python.testing.runner import PLUGIN_DIR, environment_variables, test_argv
from taskforge.sandbox import Mounts, Sandbox, get_sandbox
from taskforge.workspace import scratch_parent

GOAL = 1.5
CHECKS_GOAL = 1.2
DEFAULT_SOURCES = ("sample_repos/textkit", "sample_repos/spans", "sample_repos/exprcalc")


def make_tasks(source: str, count: int, out: Path, sandbox: str) -> taskforge.TaskSet:
    key = "pypi" if source.startswith("pypi:") else "path"
    location = source.removeprefix("pypi:") if key == "pypi" else str(Path(source).resolve())
    recipe = out.parent / "recipe.yaml"
    recipe.write_text(textwrap.dedent(f"""\
        name: grade-latency
        seed: 0
        sources:
          - {key}: "{location}"
        strategies: [stub-function]
        select: {{min_covering_tests: 1, min_body_lines: 3, max_tasks_per_source: {count}}}
        task: {{tests_visible: true, keep_docstrings: true}}
        verify: {{repeats: 1, timeout_s: 600, full_suite: false}}
        sandbox: {sandbox}
    """))
    taskforge.generate(recipe, out=out, limit=count)
    tasks = taskforge.load_tasks(out)
    if not len(tasks):
        raise SystemExit(f"{source}: no task was generated")
    return tasks


def apply_reference(workspace: Path, patch: str) -> None:
    subprocess.run(["git", "apply", "-"], cwd=workspace, input=patch.encode(), check=True)


def bare_pytest(task: taskforge.Task, workspace: Path, box: Sandbox) -> float:
    env = task.environment()
    ids = sorted(set(task.record["FAIL_TO_PASS"]) | set(task.record["PASS_TO_PASS"]))
    with tempfile.TemporaryDirectory(prefix="bare-") as home:
        variables = environment_variables(env, workspace, Path(home))
        start = time.perf_counter()
        result = box.exec([*test_argv(env), "-q", "-p", "no:cacheprovider", *ids],
                          workspace=workspace, env=variables, timeout=600,
                          mounts=Mounts(readonly=(env.venv, PLUGIN_DIR), writable=(Path(home),)))
        elapsed = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"bare pytest failed on the reference of {task.instance_id}:\n"
                         f"{result.output[-2000:]}")
    return elapsed


def grade_before(task: taskforge.Task, workspace: Path, box: Sandbox) -> taskforge.GradeResult:
    """The grade without canaries and the integrity observer."""
    return grade_workspace(task.record, workspace, task.snapshot_root(), task.runner(box),
                           checks=False)


def time_task(task: taskforge.Task, box: Sandbox, scratch: Path, repeat: int) -> dict[str, float]:
    reference = task.materialize(scratch / "reference")
    apply_reference(reference, task.record["patch"])
    task.grade(reference, sandbox=box)  # warm: environment checked, snapshot listed
    times: dict[str, list[float]] = {"bare": [], "materialize": [], "before": [], "grade": []}
    for i in range(repeat):
        times["bare"].append(bare_pytest(task, reference, box))
        dest = scratch / f"ws{i}"
        start = time.perf_counter()
        workspace = task.materialize(dest)
        times["materialize"].append(time.perf_counter() - start)
        apply_reference(workspace, task.record["patch"])
        for name in ("before", "grade")[::1 if i % 2 else -1]:
            start = time.perf_counter()
            result = grade_before(task, workspace, box) if name == "before" \
                else task.grade(workspace, sandbox=box)
            times[name].append(time.perf_counter() - start)
            if result.reward != 1.0 or result.tampered:
                raise SystemExit(f"{task.instance_id}: the reference graded {result} ({name})")
        shutil.rmtree(dest)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", help="repeatable; default: the samples")
    parser.add_argument("--tasks", type=int, default=2, help="tasks per source")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    os.environ.setdefault("TASKFORGE_QUIET_SANDBOX", "1")
    box = get_sandbox(args.sandbox)
    scratch = Path(tempfile.mkdtemp(prefix="grade-latency-", dir=scratch_parent(cache_root())))
    try:
        print(f"sandbox {box.name}, median of {args.repeat} runs per task")
        print(f"{'task':52} {'tests':>5} {'bare':>6} {'mat.':>6} {'before':>6} {'grade':>6} "
              f"{'checks':>6} {'total':>6}")
        checks, totals = [], []
        for s, source in enumerate(args.source or DEFAULT_SOURCES):
            tasks = make_tasks(source, args.tasks, scratch / f"out{s}", box.name)
            for n, task in enumerate(tasks):
                f = time_task(task, box, scratch / f"t{s}-{n}", args.repeat)
                tests = len(task.record["FAIL_TO_PASS"]) + len(task.record["PASS_TO_PASS"])
                checks.append(f["grade"] / f["before"])
                totals.append((f["materialize"] + f["grade"]) / f["bare"])
                print(f"{task.instance_id[-52:]:52} {tests:5d} {f['bare']:6.3f} "
                      f"{f['materialize']:6.3f} {f['before']:6.3f} {f['grade']:6.3f} "
                      f"{checks[-1]:5.2f}x {totals[-1]:5.2f}x")
        check, total = statistics.median(checks), statistics.median(totals)
        print(f"median grade / grade before the checks: {check:.2f}x (range "
              f"{min(checks):.2f}-{max(checks):.2f}; goal {CHECKS_GOAL}x: "
              f"{'met' if check <= CHECKS_GOAL else 'NOT met'})")
        print(f"median (materialize + grade) / bare pytest: {total:.2f}x "
              f"(goal {GOAL}x: {'met' if total <= GOAL else 'NOT met'})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(0)


if __name__ == "__main__":
    main()

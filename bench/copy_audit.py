"""The expectation copies on emitted tasks (taskforge/languages/python/grading/expectations.py):
how many tasks get one, and whether any reference fails because of them.

    python bench/copy_audit.py OUT [--sandbox bwrap] [--timeout 600]

For every Python task in OUT (a `taskforge generate` output), it counts the copies a grading
could plant (every FAIL_TO_PASS function that qualifies, not the three a grading draws), then
grades the task's reference with all of them planted, checks on. Prints, per task, the
copies and the grade, then per source the tasks with a copy and any reference that did not
score 1.0 with nothing named (there must be none), and how often a copy passed and needed
the second run on the original code. Session 65 ran it on 114 tasks of eight PyPI packages
and the sample repositories (README, "Expectation copies").
"""

from __future__ import annotations

import argparse
import functools
import random
import tempfile
from collections import Counter
from pathlib import Path

import taskforge
from taskforge.languages.python.grading import run as grading_run
from taskforge.languages.python.grading.expectations import plant_expectation_copies
from taskforge.patches import apply_patch
from taskforge.sandbox import get_sandbox
from taskforge.workspace import copy_tree

EVERY = 10_000  # copies planted: every function that qualifies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    box = get_sandbox(args.sandbox)
    # Every copy, not three; and each use of the second run counted.
    grading_run.plant_expectation_copies = functools.partial(plant_expectation_copies,
                                                             limit=EVERY)
    second_runs = Counter()
    checked = grading_run.passing_on_the_original

    def counted(copies, *rest):  # type: ignore[no-untyped-def]
        honest = checked(copies, *rest)
        second_runs["runs"] += bool(copies)
        second_runs["forgiven"] += len(honest)
        return honest

    grading_run.passing_on_the_original = counted
    tasks, with_copy, bad = Counter(), Counter(), []
    for task in taskforge.load_tasks(args.out):
        if task.record.get("language", "python") != "python":
            continue
        source = task.record["instance_id"].split("__", 1)[0]
        with tempfile.TemporaryDirectory() as scratch:
            workspace = task.materialize(Path(scratch) / "ws")
            probe = Path(scratch) / "probe"
            copy_tree(workspace, probe)
            copies = plant_expectation_copies(probe, task.record["FAIL_TO_PASS"],
                                              random.Random(0), limit=EVERY)
            apply_patch(workspace, task.record["patch"])
            result = task.grade(workspace, sandbox=box, timeout=args.timeout)
        tasks[source] += 1
        with_copy[source] += bool(copies)
        print(f"{task.record['instance_id']}: {len(copies)} copies, reward {result.reward}"
              f"{'' if not result.tampered else f', named: {result.tampered[0]}'}", flush=True)
        if result.reward != 1.0 or result.tampered:
            bad.append(task.record["instance_id"])
    for source in sorted(tasks):
        print(f"{source}: {with_copy[source]}/{tasks[source]} tasks with a copy")
    print(f"tasks with a copy: {sum(with_copy.values())}/{sum(tasks.values())}; references "
          f"not 1.0 or named: {len(bad)} {bad}; second runs: {second_runs['runs']} "
          f"({second_runs['forgiven']} copies passed on the original too)")


if __name__ == "__main__":
    main()

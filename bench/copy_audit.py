"""The expectation copies on emitted tasks (`expectations.py` of taskforge/languages/python/grading,
javascript/grading and java/grading): how many tasks get one, and whether any reference fails
because of them.

    python bench/copy_audit.py OUT [--sandbox bwrap] [--timeout 600] [--cost ROUNDS]

For every Python, JavaScript, TypeScript and Java task in OUT (a `taskforge generate` output), it
counts the copies a grading
could make (every FAIL_TO_PASS test that qualifies, not the three a grading draws), then
grades the task's reference with all of them planted, checks on. Prints, per task, the
copies and the grade, then per source the tasks with a copy and any reference that did not
score 1.0 with nothing named (there must be none), and how often a copy passed and needed
the second run on the original code. With `--cost ROUNDS` it measures instead what the copies
cost a grading: each task's reference graded ROUNDS times with the copies as a grading plants
them (three) and ROUNDS times with none, alternating which goes first, and prints the
medians, their sums and the median ratio. Session 65 ran it on 114 tasks of eight PyPI packages
and the sample repositories, session 66 on JavaScript and TypeScript tasks, session 67 on them
again with the JavaScript copies made in place, in a run of their own, and on tape and mocha
packages, session 68 with the Python copies made in place too, session 70 on Java tasks
(README, "Expectation copies"; "with copies" counts that second run).
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import taskforge
from taskforge.languages.grading_copy import Original
from taskforge.languages.java.grading import expectations as java_expectations
from taskforge.languages.java.grading import run as java_run
from taskforge.languages.javascript.grading import expectations as js_expectations
from taskforge.languages.javascript.grading import run as js_run
from taskforge.languages.python.grading import expectations as py_expectations
from taskforge.languages.python.grading import run as py_run
from taskforge.patches import apply_patch
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.workspace import copy_tree

EVERY = 10_000  # copies planted: every function that qualifies
LANGUAGES = ("python", "javascript", "typescript", "java")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--cost", type=int, default=0, metavar="ROUNDS")
    args = parser.parse_args()
    box = get_sandbox(args.sandbox)
    if args.cost:
        cost(args.out, box, args.timeout, args.cost)
        return
    second_runs = Counter()
    # Every copy, not three; and each use of the second run counted.
    py_run.draw_expectation_copies = functools.partial(  # type: ignore[attr-defined]
        py_expectations.draw_expectation_copies, limit=EVERY)
    js_run.draw_expectation_copies = functools.partial(  # type: ignore[attr-defined]
        js_expectations.draw_expectation_copies, limit=EVERY)
    java_run.draw_expectation_copies = functools.partial(  # type: ignore[attr-defined]
        java_expectations.draw_expectation_copies, limit=EVERY)
    java_run.run_on_the_original = _counted(  # type: ignore[attr-defined]
        java_expectations.run_on_the_original, second_runs)
    js_run.run_on_the_original = _counted(  # type: ignore[attr-defined]
        js_expectations.run_on_the_original, second_runs)
    py_run.run_on_the_original = _counted(  # type: ignore[attr-defined]
        py_expectations.run_on_the_original, second_runs)
    tasks, with_copy, bad = Counter(), Counter(), []
    for task in taskforge.load_tasks(args.out):
        language = task.record.get("language", "python")
        if language not in LANGUAGES:
            continue
        source = task.record["instance_id"].split("__", 1)[0]
        with tempfile.TemporaryDirectory() as scratch:
            workspace = task.materialize(Path(scratch) / "ws")
            probe = Path(scratch) / "probe"
            copy_tree(workspace, probe)
            if language == "python":
                copies = py_expectations.plant_expectation_copies(
                    probe, task.record["FAIL_TO_PASS"], random.Random(0),
                    also_run=task.record["PASS_TO_PASS"], limit=EVERY)
            elif language == "java":
                expected = task.record["FAIL_TO_PASS"] + task.record["PASS_TO_PASS"]
                copies, _changed = java_expectations.draw_expectation_copies(
                    probe, task.record["FAIL_TO_PASS"], expected, rng=random.Random(0),
                    limit=EVERY)
            else:
                copies = js_expectations.plant_expectation_copies(
                    probe, task.record["FAIL_TO_PASS"],
                    task.environment().spec.test_command[0], random.Random(0), limit=EVERY)
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
          f"not 1.0 or named: {len(bad)} {bad}; runs on the original: {second_runs['runs']} "
          f"({second_runs['forgiven']} changed tests passed there too)")


def cost(out: Path, box: Sandbox, timeout: float, rounds: int) -> None:
    """Each reference's grade with the copies and without, alternating (medians)."""
    nothing = (lambda *_a, **_k: ([], {}),) * 3
    planters = {"copies": (py_run.draw_expectation_copies, js_run.draw_expectation_copies,
                           java_run.draw_expectation_copies),
                "none": nothing}
    sums, ratios = Counter(), []
    for task in taskforge.load_tasks(out):
        if task.record.get("language", "python") not in LANGUAGES:
            continue
        seconds: dict[str, list[float]] = {"copies": [], "none": []}
        with tempfile.TemporaryDirectory() as scratch:
            workspace = task.materialize(Path(scratch) / "ws")
            apply_patch(workspace, task.record["patch"])
            for n in range(rounds):
                for kind in (("copies", "none") if n % 2 == 0 else ("none", "copies")):
                    (py_run.draw_expectation_copies, js_run.draw_expectation_copies,
                     java_run.draw_expectation_copies) = planters[kind]  # type: ignore[assignment]
                    started = time.monotonic()
                    result = task.grade(workspace, sandbox=box, timeout=timeout)
                    seconds[kind].append(time.monotonic() - started)
                    assert result.reward == 1.0, (task.record["instance_id"], result)
        medians = {k: statistics.median(v) for k, v in seconds.items()}
        sums.update(medians)
        ratios.append(medians["copies"] / medians["none"])
        print(f"{task.record['instance_id']}: with copies {medians['copies']:.2f} s, without "
              f"{medians['none']:.2f} s ({ratios[-1]:.2f}x)", flush=True)
    print(f"references' grades summed: with copies {sums['copies']:.2f} s, without "
          f"{sums['none']:.2f} s; median ratio {statistics.median(ratios):.2f}x "
          f"({min(ratios):.2f}-{max(ratios):.2f}x), {rounds} rounds a kind")


def _counted(checked: Callable[..., Original | dict | None],
             runs: Counter) -> Callable[..., Original | dict | None]:
    """A language's run on the original code, made where a changed test passed, a test not
    changed by name failed only in the copies' run (Python), or a changed test failed
    otherwise than honest code does: each use, and the changed tests that passed there
    (Java's gives the outcomes alone)."""
    def counted(copies, *rest):  # type: ignore[no-untyped-def]
        found = checked(copies, *rest)
        outcomes = found.outcomes if isinstance(found, Original) else (found or {})
        runs["runs"] += 1
        runs["forgiven"] += sum(outcomes.get(c.run_id) == "passed" for c in copies)
        return found
    return counted


if __name__ == "__main__":
    main()

"""Where a confirmed task's time goes beside its test runs: each package's candidates are
screened, then `make_task` runs for every one the screen did not reject under cProfile, and
the cumulative seconds of its main steps are printed, per task and against the seconds of
the confirmation runs themselves (the baseline of the same run: a step at 0.30x costs a
third of what the tests' processes cost). The figures are profiled seconds (cProfile slows
Python code, not the runs' processes), to compare steps and packages with each other.

    PYTHONPATH=. python bench/task_profile.py [--packages boltons==26.2.0 ...]
        [--candidates 40] [--cache DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_cost import TimedVerifier, candidate_strategy, choose_candidates, log

from taskforge.cache import cache_root
from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.ingest import ingest
from taskforge.languages.strategy import TaskOptions
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.verify.confirm import run_timeout

# (label, file suffix, function name): the steps of `Verifier._make_task`, outermost first
STEPS = (
    ("confirmation runs", "verify/protocol.py", "label_tests"),
    ("materialize", "taskforge/materialize.py", "materialize"),
    ("  fresh git", "taskforge/gitcmd.py", "fresh_repository"),
    ("  copy", "taskforge/workspace.py", "copy_tree"),
    ("  artifact walk", "taskforge/artifacts.py", "remove_artifacts"),
    ("  git apply", "taskforge/patches.py", "apply_patch"),
    ("bytecode seed", "python/testing/bytecode.py", "seed_bytecode"),
    ("deletion applied", "python/delete/project.py", "replace_nodes"),
    ("diffs", "taskforge/patches.py", "diff_texts"),
    ("fingerprints", "sanitize/fingerprints.py", "fingerprint_deletion"),
    ("leak scan's read", "verify/gates.py", "begin_scan_gate"),
    ("leak scan's finish", "taskforge/sanitize/__init__.py", "finish"),
)


def cumulative(stats: pstats.Stats, suffix: str, name: str) -> float:
    """Seconds inside the function, counted once however deep it recurses."""
    return sum(entry[3] for (path, _line, func), entry in stats.stats.items()  # type: ignore[attr-defined]
               if func == name and path.endswith(suffix))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+",
                        default=["boltons==26.2.0", "sqlparse==0.6.1", "humanize==4.17.0"])
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache, box = cache_root(args.cache), get_sandbox("none")
    rows = []
    for package in args.packages:
        source = ingest(SourceSpec(kind="pypi", location=package), cache=cache,
                        base_dir=Path.cwd(), sandbox=box, repeats=2, timeout=900, log=log)
        chosen, _found = choose_candidates(source, ["stub-function"], args.candidates)
        verifier = TimedVerifier(source, box, cache, run_timeout(source, 900), 2, TaskOptions(),
                                 recipe_sha256="bench")
        verdicts = verifier.screen(chosen, LocalExecutor(1))
        profile = cProfile.Profile()
        tasks = 0
        for candidate in chosen:
            if verdicts[candidate.key].rejection:
                continue
            tasks += 1
            profile.enable()
            try:
                verifier.make_task(candidate_strategy(source, candidate), candidate,
                                   verdicts[candidate.key])
            except Rejected:
                pass
            finally:
                profile.disable()
        stats = pstats.Stats(profile)
        total = cumulative(stats, "verify/confirm.py", "make_task")
        steps = {label: cumulative(stats, suffix, name) for label, suffix, name in STEPS}
        rows.append((package, tasks, total, steps))
    for package, tasks, total, steps in rows:
        runs = steps["confirmation runs"] or float("nan")
        print(f"\n{package}: make_task {total:.2f} s over {tasks} tasks "
              f"({1000 * total / max(1, tasks):.1f} ms a task, profiled)")
        print(f"  {'step':22s} {'s':>7s} {'ms/task':>8s} {'/runs':>7s}")
        for label, seconds in steps.items():
            print(f"  {label:22s} {seconds:7.2f} {1000 * seconds / max(1, tasks):8.1f} "
                  f"{seconds / runs:6.2f}x")


if __name__ == "__main__":
    main()

"""What the self-grade adds to a source (taskforge/verify/self_grade.py), against one plain run
of the same stable tests, in the same run, sandbox and environment.

    python bench/self_grade_cost.py [--recipe recipes/quickstart.yaml ...] [--repeat 3]
                                    [--sandbox auto] [--cache DIR]

For each source of each recipe (ingested as `generate` does; cached after the first run), it
alternates, `--repeat` times, a plain run of every stable test on a fresh copy of the
snapshot (`Language.run_tests`: what a baseline run costs) and a self-grade (the grader's
copy, canaries and integrity checks, never read from the cache). Prints the median seconds
of each and their ratio per source, then the median ratio over all sources: the self-grade is
meant to cost about one whole-suite run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.ingest import IngestedSource, ingest_recipe_sources
from taskforge.recipe import load_recipe
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.verify.self_grade import GRADE_TIMEOUT, GradedSource, self_grade
from taskforge.workspace import scratch_copy


def plain_run(source: IngestedSource, box: Sandbox, cache: Path) -> float:
    """Seconds of one run of the stable tests on a fresh copy of the snapshot."""
    started = time.monotonic()
    with scratch_copy(source.snapshot.root, cache, prefix="bench-plain-") as workspace:
        run = source.language.run_tests(source.env, workspace, box, timeout=GRADE_TIMEOUT,
                                        select=source.baseline.stable)
    if run.timed_out:
        raise SystemExit(f"{source.snapshot.name}: the plain run timed out")
    return time.monotonic() - started


def graded(source: IngestedSource, box: Sandbox, cache: Path) -> float:
    started = time.monotonic()
    grade = self_grade(GradedSource.of(source), box, cache)
    if grade.unusable:
        raise SystemExit(f"{source.snapshot.name}: {grade.unusable}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", action="append", default=None,
                        help="a recipe whose sources to measure (repeatable; default quickstart)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sandbox", default=None, help="default: each recipe's own")
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = cache_root(args.cache)
    rows = []
    for path in args.recipe or ["recipes/quickstart.yaml"]:
        recipe = load_recipe(path)
        box = get_sandbox(args.sandbox or recipe.sandbox)
        sources, _aside = ingest_recipe_sources(recipe, cache=cache, sandbox=box,
                                                log=lambda m: print(f"# {m}", flush=True))
        for source in sources:
            plain, grades = [], []
            for round_ in range(args.repeat):
                # Alternate which goes first: neither always gets a warm page cache.
                pair = [(plain, plain_run), (grades, graded)]
                for seconds, measure in (pair if round_ % 2 == 0 else pair[::-1]):
                    seconds.append(measure(source, box, cache))
            p, g = statistics.median(plain), statistics.median(grades)
            rows.append((source.snapshot.name, source.language.name, box.name,
                         len(source.baseline.stable), p, g, g / p))
            print(f"# {rows[-1][0]}: plain {p:.2f} s, self-grade {g:.2f} s", flush=True)
    print(f"\n{'source':<14} {'language':<11} {'sandbox':<8} {'stable':>6} {'plain s':>8} "
          f"{'self-grade s':>12} {'ratio':>6}")
    for name, language, sandbox, stable, p, g, ratio in rows:
        print(f"{name:<14} {language:<11} {sandbox:<8} {stable:>6} {p:>8.2f} {g:>12.2f} "
              f"{ratio:>5.2f}x")
    print(f"median ratio self-grade / plain run over {len(rows)} sources: "
          f"{statistics.median(r[-1] for r in rows):.2f}x ({args.repeat} rounds each)")


if __name__ == "__main__":
    main()

"""What a failing test's short report saves (taskforge_pytest_plugin._crash_line), against
pytest's own traceback report, on several real packages in one run.

    python bench/failure_report_cost.py [--packages humanize==4.17.0 ...] [--candidates 10]
                                        [--cache DIR] [--sandbox none]

For each package (ingested as `verify_cost.py` does; cached after the first run), the first
`--candidates` screenable candidates of the stub-function strategy, each as its confirmation
runs it: the task state materialized in a warm workspace (the snapshot's bytecode in place),
its covering tests run in one fresh (zygote-forked) process. Each candidate runs four times,
in the order ABBA (BAAB for every other one): as taskforge runs it, and with a plugin in the workspace that
gives the items back pytest's own `repr_failure` (what every run did before 2024d2f); the two
must agree on which tests pass. Prints,
per package, the seconds of each (wall and what pytest reports), their ratio, and the
milliseconds saved per failing test. One untimed run a package first starts its zygote.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from verify_cost import candidate_strategy, choose_candidates, screenable

from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.languages.base import Runner
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.strategy import TaskOptions
from taskforge.materialize import materialize_record
from taskforge.model import SourceSpec
from taskforge.patches import diff_texts
from taskforge.sandbox import get_sandbox
from taskforge.workspace import warm_dir

PACKAGES = ("humanize==4.17.0", "sqlparse==0.6.1", "boltons==26.2.0", "cachetools==8.0.1",
            "click==8.5.1", "attrs==26.1.0")
# Loaded last among the collection hooks: undoes the short report on every item.
FULL_REPORTS = '''import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        item.__dict__.pop("repr_failure", None)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES))
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--sandbox", default="none")
    args = parser.parse_args()
    cache, box = cache_root(args.cache), get_sandbox(args.sandbox)
    rows = []
    for package in args.packages:
        source = ingest(SourceSpec(kind="pypi", location=package), cache=cache,
                        base_dir=Path.cwd(), sandbox=box, repeats=2, timeout=900,
                        log=lambda m: print(f"# {m}", flush=True))
        chosen, _found = choose_candidates(source, ["stub-function"], 4 * args.candidates)
        chosen = [c for c in chosen if screenable(c)][:args.candidates]
        runner = Runner(source.language, source.env, box, 300, cache=cache)
        seconds = {"short": [0.0, 0.0], "full": [0.0, 0.0]}  # wall, pytest
        failing = 0
        for n, candidate in enumerate(chosen):
            deletion = candidate_strategy(source, candidate).apply(source.project, candidate,
                                                                   TaskOptions())
            texts = {p: (source.project.text(p), t) for p, t in deletion.new_texts.items()}
            tests = sorted(candidate.covering_tests)
            with warm_dir(cache, prefix="bench-reports-") as scratch:
                workspace, _ = materialize_record({"deletion_patch": diff_texts(texts)},
                                                  source.snapshot.root, scratch / "workspace")
                source.language.set_up_workspace(workspace, source.snapshot, set(texts), runner)
                (workspace / "bench_full_reports.py").write_text(FULL_REPORTS)
                if n == 0:  # untimed: starts the environment's zygote
                    run_tests(source.env, workspace, box, timeout=300, select=tests)
                # ABBA: whichever runs first on a fresh workspace pays its cold start
                kinds = ("short", "full", "full", "short") if n % 2 == 0 else \
                    ("full", "short", "short", "full")
                outcomes = {}
                for kind in kinds:
                    extra = ["-p", "bench_full_reports"] if kind == "full" else []
                    started = time.monotonic()
                    run = run_tests(source.env, workspace, box, timeout=300, select=tests,
                                    extra_args=extra)
                    seconds[kind][0] += time.monotonic() - started
                    seconds[kind][1] += run.pytest_seconds
                    outcomes[kind] = run.outcomes
                # The same labels: passing or not (pytest's own report may itself raise,
                # ending the session: the tests it never ran read as errors)
                passing = {kind: {t for t in tests if found.get(t) == "passed"}
                           for kind, found in outcomes.items()}
                if passing["short"] != passing["full"]:
                    raise SystemExit(f"{package} {candidate.symbol}: labels differ: "
                                     f"{sorted(passing['short'] ^ passing['full'])[:3]}")
                failing += 2 * sum(o != "passed" for o in outcomes["short"].values())
        (short_wall, short_pytest), (full_wall, full_pytest) = seconds["short"], seconds["full"]
        rows.append((package, len(chosen), failing, full_wall, short_wall, full_pytest,
                     short_pytest))
        print(f"# {package}: {len(chosen)} candidates, {failing} failing tests", flush=True)
    print(f"\n{'package':<18} {'cands':>5} {'failing':>7} {'pytest-own s':>12} {'short s':>8} "
          f"{'ratio':>6} {'pytest-reported ratio':>22} {'ms saved/failure':>16}")
    for package, count, failing, fw, sw, fp, sp in rows:
        print(f"{package:<18} {count:>5} {failing:>7} {fw:>12.2f} {sw:>8.2f} {fw / sw:>5.2f}x "
              f"{fp / sp:>21.2f}x {1000 * (fw - sw) / max(1, failing):>16.2f}")
    print(f"median ratio (wall) over {len(rows)} packages: "
          f"{statistics.median(r[3] / r[4] for r in rows):.2f}x")


if __name__ == "__main__":
    main()

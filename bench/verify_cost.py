"""Targeted vs whole-suite verification on a real package, in the same run.

For N candidates of a pinned PyPI sdist (default click==8.5.1: 2,459 tests, ~7 s suite):
- targeted: taskforge's pipeline (the forking screen over the covering tests, then one
  fresh confirmation run per state on the materialized workspace);
- whole-suite: the peers' method, one fresh process running every test per candidate in
  the task state, `repeats` times.
Prints per-candidate medians, their ratio, label agreement (FAIL_TO_PASS and PASS_TO_PASS
identical) and the orchestration overhead (pipeline seconds / seconds pytest reports). What
pytest reports is a session's time, collection included, for every process alike: a fresh
run's, and the screen server's, shared out among its candidates (each gets what its tests
took in the forked children plus an equal part of the rest: collecting, importing, forking).
Targeted seconds include building the task (materialization, leak scan, record); the
"verification" line counts only the screen and the confirmation's fresh runs.

With --audit, every task the targeted pass emitted is then built again in audit mode
(`verify.full_suite: true`: the whole suite in both states, compared with the targeted labels),
outside the timed figures, and the bench prints how many agree.

    python bench/verify_cost.py [--package click==8.5.1] [--candidates 40] [--repeats 2] [--audit]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.generate import order_candidates
from taskforge.ingest import ingest
from taskforge.languages.python.delete import get_strategy
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.materialize import materialize_record
from taskforge.model import SourceSpec
from taskforge.patches import diff_texts
from taskforge.sandbox import get_sandbox
from taskforge.verify.confirm import Verifier, run_timeout
from taskforge.workspace import scratch_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="click==8.5.1")
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sandbox", default="none")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--audit", action="store_true",
                        help="then rebuild every emitted task in audit mode (untimed)")
    args = parser.parse_args()

    cache = cache_root(args.cache)
    box = get_sandbox(args.sandbox)
    source = ingest(SourceSpec(kind="pypi", location=args.package), cache=cache,
                    base_dir=Path.cwd(), sandbox=box, repeats=args.repeats, timeout=900,
                    log=lambda m: print(f"# {m}", file=sys.stderr))
    strategy = get_strategy("stub-function")
    options = TaskOptions()
    found = strategy.candidates(source.project, source.baseline, SelectOptions())
    chosen = order_candidates(found, {"stub-function": 1.0}, 0, source.snapshot.id)
    chosen = [c for c in chosen if not c.import_time][:args.candidates]
    stable = set(source.baseline.stable)
    timeout = run_timeout(source, 900)
    print(f"# {args.package}: {len(source.baseline.tests)} tests, {len(stable)} stable, "
          f"{len(found)} candidates, measuring {len(chosen)}", file=sys.stderr)

    # Targeted: the screen for all, then one confirmation per survivor.
    pool = LocalExecutor(1)
    start = time.monotonic()
    verifier = Verifier(source, box, cache, timeout, args.repeats, options,
                        recipe_sha256="bench")
    verdicts = verifier.screen(chosen, pool)
    screen_wall = time.monotonic() - start
    server_overhead = (screen_wall - sum(v.seconds for v in verdicts.values())) / len(chosen)
    targeted: dict[str, dict] = {}
    for c in chosen:
        v = verdicts[c.key]
        cost = {"wall": server_overhead + v.seconds, "verify": server_overhead + v.seconds,
                "pytest": v.pytest_seconds,
                "f2p": set(v.fail_to_pass) if v.screened else None, "status": "screen"}
        if v.rejection:
            cost["status"] = v.rejection.reason
        else:
            t0 = time.monotonic()
            try:
                record = verifier.make_task(strategy, c, v)
                cost["f2p"] = set(record["FAIL_TO_PASS"])
                cost["pytest"] += sum(r["pytest_seconds"] for r in record["verification"]["runs"])
                # the confirmation's fresh runs; the rest of make_task builds the task
                # (materialization, leak scan, statement), which whole-suite runs do not do
                cost["verify"] += sum(r["seconds"] for r in record["verification"]["runs"])
                cost["status"] = "task"
            except Rejected as why:
                cost["status"] = why.reason
            cost["wall"] += time.monotonic() - t0
        targeted[c.key] = cost

    # Whole suite, the peers' way: a fresh process running every test, per candidate.
    whole: dict[str, dict] = {}
    for c in chosen:
        deletion = strategy.apply(source.project, c, options)
        texts = {p: (source.project.text(p), t) for p, t in deletion.new_texts.items()}
        t0 = time.monotonic()
        runs = []
        with scratch_dir(cache, prefix="bench-") as scratch:
            workspace, _ = materialize_record({"deletion_patch": diff_texts(texts)},
                                              source.snapshot.root, scratch / "workspace")
            for _ in range(args.repeats):
                runs.append(run_tests(source.env, workspace, box, timeout=timeout))
        failing = {t for t in stable if all(r.outcomes.get(t) != "passed" for r in runs)}
        whole[c.key] = {"wall": time.monotonic() - t0,
                        "pytest": sum(r.pytest_seconds for r in runs), "f2p": failing,
                        "p2p": {t for t in stable if all(r.outcomes.get(t) == "passed"
                                                         for r in runs)}}

    agree = 0
    for c in chosen:
        t, w = targeted[c.key], whole[c.key]
        t_f2p = t["f2p"] if t["f2p"] is not None else set()
        same = t_f2p == w["f2p"] and (stable - t_f2p) == w["p2p"]
        agree += same
        if not same:
            print(f"# disagree {c.symbol}: targeted-only {sorted(t_f2p - w['f2p'])[:3]} "
                  f"whole-only {sorted(w['f2p'] - t_f2p)[:3]}", file=sys.stderr)
    t_med = statistics.median(v["wall"] for v in targeted.values())
    v_med = statistics.median(v["verify"] for v in targeted.values())
    v_mean = statistics.mean(v["verify"] for v in targeted.values())
    w_med = statistics.median(v["wall"] for v in whole.values())
    overhead = sum(v["wall"] for v in targeted.values()) / max(
        1e-9, sum(v["pytest"] for v in targeted.values()))
    statuses: dict[str, int] = {}
    for v in targeted.values():
        statuses[v["status"]] = statuses.get(v["status"], 0) + 1
    t_mean = statistics.mean(v["wall"] for v in targeted.values())
    w_mean = statistics.mean(v["wall"] for v in whole.values())
    print(f"package                      {args.package}")
    print(f"candidates                   {len(chosen)}  ({statuses})")
    print(f"targeted    s/candidate      median {t_med:.3f}  mean {t_mean:.3f}")
    print(f"  of which verification      median {v_med:.3f}  mean {v_mean:.3f}  (screen + fresh runs)")
    print(f"whole-suite s/candidate      median {w_med:.3f}  mean {w_mean:.3f}")
    print(f"ratio whole/targeted         median {w_med / t_med:.1f}x  mean {w_mean / t_mean:.1f}x")
    print(f"ratio whole/verification     median {w_med / v_med:.1f}x  mean {w_mean / v_mean:.1f}x")
    print(f"label agreement              {agree}/{len(chosen)} ({100 * agree / len(chosen):.0f}%)")
    print(f"orchestration overhead       {overhead:.2f}x  (targeted wall / pytest-reported seconds)")
    if args.audit:
        tasks = [c for c in chosen if targeted[c.key]["status"] == "task"]
        agreeing = 0
        for c in tasks:
            try:
                audit = dataclasses.replace(verifier, full_suite=True)
                record = audit.make_task(strategy, c, verdicts[c.key])
                agreeing += record["verification"]["audit"]["disagreements"] == 0
            except Rejected as why:
                print(f"# audit {c.symbol}: {why.reason}: {why.detail}", file=sys.stderr)
        print(f"audit mode agrees            {agreeing}/{len(tasks)} tasks  "
              f"(verify.full_suite: whole suite in both states)")


if __name__ == "__main__":
    main()

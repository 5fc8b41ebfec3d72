"""What a per-test map costs, in the same run: line coverage from coverage.py (one context per
test), the same line map from sys.monitoring (3.12+: each line reported once per test), and a
function-level map (sys.monitoring on 3.12+, sys.setprofile before) against the plain suite;
and whether every candidate of every strategy gets the same covering tests from each. Then the
baseline's third map, every test alone in a fork of the collected session: its cost, and how
many candidates it gives covering tests the two orders missed (a cache's middle users).

    python bench/testmap_cost.py [--package click==8.5.1 ...] [--python 3.11 --python 3.12]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.languages.python.delete import STRATEGIES, get_strategy
from taskforge.languages.python.testing.runner import run_tests
from taskforge.languages.python.testing.testmap import MapProbe, merge_test_maps, tracer_for
from taskforge.languages.strategy import SelectOptions
from taskforge.model import Baseline, SourceSpec
from taskforge.sandbox import Sandbox, get_sandbox
from taskforge.workspace import scratch_copy, scratch_dir


def timed_run(source, box, cache, mode: str, reverse: bool = False) -> tuple[float, object]:
    """(wall seconds, map) of one whole-suite run in the given mode."""
    with scratch_copy(source.snapshot.root, cache, prefix="testmap-") as workspace, \
            scratch_dir(cache, prefix="testmap-io-") as io:
        kwargs: dict = {}
        if mode in ("coverage", "sysmon", "isolated"):
            kwargs["test_map"] = MapProbe(mode, io / f"{mode}.data")
            if mode == "isolated":
                kwargs["extra_env"] = {"TASKFORGE_ISOLATED_TIMEOUT": "60"}
        elif mode == "functions":
            kwargs["extra_env"] = {"TASKFORGE_TRACE": str(io / "calls.json"),
                                   "TASKFORGE_TRACE_FUNCTIONS": "1",
                                   "TASKFORGE_COVER_ROOT": str(workspace)}
            kwargs["writable"] = (io,)
        start = time.monotonic()
        run_tests(source.env, workspace, box, timeout=1800, reverse=reverse, **kwargs)
        wall = time.monotonic() - start
        found: object = None
        if mode in ("coverage", "sysmon", "isolated"):
            found = kwargs["test_map"].read(workspace, source.baseline.tests)
        elif mode == "functions":
            found = {}
            root = os.path.realpath(workspace) + os.sep
            for test, files in json.loads((io / "calls.json").read_text()).items():
                for filename, lines in files.items():
                    rel = os.path.realpath(filename).removeprefix(root)
                    for line in lines:
                        found.setdefault((rel, line), set()).add(test)
    return wall, found


def covering(source, baseline: Baseline) -> dict[tuple[str, str], tuple[tuple, bool]]:
    """(strategy, candidate key) -> (covering tests, import time) for every candidate."""
    options = SelectOptions(min_covering_tests=0, min_body_lines=1)
    return {(name, c.key): (tuple(sorted(c.covering_tests)), c.import_time)
            for name in sorted(STRATEGIES)
            for c in get_strategy(name).candidates(source.project, baseline, options)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", default=None)
    parser.add_argument("--python", action="append", default=None)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = cache_root(args.cache)
    box = get_sandbox("none")
    pythons = args.python or [f"{sys.version_info.major}.{sys.version_info.minor}"]
    for package, python in [(p, v) for p in args.package or ["click==8.5.1"] for v in pythons]:
        measure(package, python, cache, box)


def measure(package: str, python: str, cache: Path, box: Sandbox) -> None:
    """Every figure of one package on one Python, printed."""
    source = ingest(SourceSpec(kind="pypi", location=package, python=python),
                    cache=cache, base_dir=Path.cwd(), sandbox=box, repeats=2, timeout=1800,
                    log=lambda m: print(f"# {m}", file=sys.stderr))
    monitoring = tracer_for(python) == "sysmon"
    plain, _ = timed_run(source, box, cache, "plain")
    cov, cov_map = timed_run(source, box, cache, "coverage")
    fun, calls = timed_run(source, box, cache, "functions")
    # Both orders, as the baseline records them, for each line tracer.
    maps = {"coverage": [cov_map, timed_run(source, box, cache, "coverage", True)[1]]}
    lines = None
    if monitoring:
        lines, lines_map = timed_run(source, box, cache, "sysmon")
        maps["sysmon"] = [lines_map, timed_run(source, box, cache, "sysmon", True)[1]]
    by_tracer = {}
    for tracer, pair in maps.items():
        coverage, by_subprocesses = merge_test_maps(pair)
        by_tracer[tracer] = covering(source, dataclasses.replace(
            source.baseline, coverage=coverage, subprocess_lines=by_subprocesses))
    reference = by_tracer["coverage"]
    stable = set(source.baseline.stable)
    stubs = get_strategy("stub-function").candidates(source.project, source.baseline,
                                                     SelectOptions(min_covering_tests=0))
    same_calls = 0
    for c in stubs:
        (path, line, _name), = c.targets
        by_calls = calls.get((path, line), set()) & stable
        if c.import_time:
            by_calls = stable  # as the strategy does for import-time code
        same_calls += set(c.covering_tests) == by_calls
    print(f"{package} on Python {python}: {len(source.baseline.tests)} tests")
    print(f"  plain suite                {plain:7.2f} s")
    print(f"  line coverage per test     {cov:7.2f} s  ({cov / plain:.2f}x plain)  coverage.py")
    if lines is not None:
        print(f"  line map per test          {lines:7.2f} s  ({lines / plain:.2f}x plain)"
              f"  sys.monitoring")
        same = sum(by_tracer["sysmon"].get(k) == v for k, v in reference.items())
        for k, v in reference.items():
            if by_tracer["sysmon"].get(k) != v:
                print(f"# differs {k}", file=sys.stderr)
        print(f"  identical covering tests   {same}/{len(reference)} candidates of "
              f"{len(STRATEGIES)} strategies (sys.monitoring lines vs coverage.py)")
    tracer = "sys.monitoring" if monitoring else "sys.setprofile"
    print(f"  function map per test      {fun:7.2f} s  ({fun / plain:.2f}x plain)  {tracer}")
    print(f"  identical covering tests   {same_calls}/{len(stubs)} stub-function candidates "
          f"(functions entered vs lines)")
    alone, alone_map = timed_run(source, box, cache, "isolated")
    ordered = by_tracer[source.baseline.tracer]
    coverage, by_subprocesses = merge_test_maps([*maps[source.baseline.tracer], alone_map])
    merged = covering(source, dataclasses.replace(
        source.baseline, coverage=coverage, subprocess_lines=by_subprocesses))
    grown = {k: set(merged[k][0]) - set(v[0]) for k, v in ordered.items()
             if set(merged[k][0]) != set(v[0])}
    print(f"  each test alone            {alone:7.2f} s  ({alone / plain:.2f}x plain)  "
          f"a fork per test, {source.baseline.tracer}")
    print(f"  candidates it adds to      {len(grown)}/{len(ordered)} "
          f"(+{sum(map(len, grown.values()))} covering tests; of which "
          f"{sum(bool(v & stable) for v in grown.values())} with a stable one)")
    for key, added in sorted(grown.items())[:10]:
        print(f"# adds {key}: {sorted(added)[:3]}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""What per-test V8 coverage costs on a JavaScript suite: the whole suite run plainly and with
the coverage preload (taskforge-node-coverage.mjs), alternated, `--runs` times each, in the
same sandbox; medians and their ratio.

    python bench/js_coverage_cost.py [--source sample_repos/jsdemo] [--runs 3] [--sandbox bwrap]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.languages import language_named
from taskforge.languages.javascript.testing import run_tests
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sources import ingest_source
from taskforge.workspace import scratch_copy, scratch_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="sample_repos/jsdemo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sandbox", default="bwrap")
    args = parser.parse_args()
    cache = cache_root()
    js = language_named("javascript")
    spec = SourceSpec(kind="path", location=args.source)
    snapshot = ingest_source(spec, cache, Path.cwd())
    env = js.prepare(spec, snapshot, cache, print).env
    box = get_sandbox(args.sandbox)
    seconds: dict[str, list[float]] = {"plain": [], "coverage": []}
    for _ in range(args.runs):
        for mode in ("plain", "coverage"):
            with scratch_copy(snapshot.root, cache, prefix="jscost-") as workspace, \
                    scratch_dir(cache, prefix="jscost-io-") as io:
                started = time.monotonic()
                run, _report = run_tests(env, workspace, box, timeout=600,
                                         coverage_dir=io if mode == "coverage" else None)
                seconds[mode].append(time.monotonic() - started)
                assert run.outcomes and not run.timed_out, run.log_tail
    plain, covered = (statistics.median(seconds[m]) for m in ("plain", "coverage"))
    print(f"{snapshot.name}: {len(run.outcomes)} tests, {args.runs} runs each ({box.name}): "
          f"plain {plain:.2f} s, per-test coverage {covered:.2f} s, {covered / plain:.2f}x "
          f"(runs: plain {', '.join(f'{s:.2f}' for s in seconds['plain'])}; coverage "
          f"{', '.join(f'{s:.2f}' for s in seconds['coverage'])})")


if __name__ == "__main__":
    main()

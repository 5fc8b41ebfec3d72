"""The environment index's sharded search against one shard (the search before shards), on
several packages' environments in one run.

    python bench/env_search.py [--source pypi:sqlparse==0.6.1 ...] [--tasks 10] [--cache DIR]

For each source (ingested with taskforge's own pipeline, cached), the `--tasks` longest
stub-function candidates get their task workspace and fingerprints (as bench/scan_speed.py
builds them), then each task's environment search, `scan(fingerprints, [env],
indexed=[env])`, is timed twice in alternation: with the index cut into shards of
`SHARD_BYTES`, and with one shard holding everything (a needle is then searched in the whole
corpus whenever every one of its word runs is somewhere in it, which is what the index did
before it had shards). Each way has its own index, built and searched once before the timing
(building is once a process, not a task's cost). Prints per source the sum of the tasks'
search seconds both ways and the ratio, and checks that both ways find the same hits.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from scan_speed import task_workspaces

from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sanitize import ScanStats, envindex, scan

DEFAULT_SOURCES = ("pypi:click==8.5.1", "pypi:attrs==26.1.0", "pypi:humanize==4.17.0",
                   "pypi:sqlparse==0.6.1", "pypi:boltons==26.2.0", "pypi:cachetools==8.0.1")
ONE_SHARD = 1 << 62


def index_with(env: Path, shard_bytes: int) -> envindex.TreeIndex:
    """A fresh index of `env` cut into shards of `shard_bytes`, its word index built."""
    envindex.SHARD_BYTES = shard_bytes
    index = envindex.TreeIndex(env)
    index.might_hold(b"x")  # builds the shards and their words now, outside the timing
    return index


def search(fingerprints, env: Path, index: envindex.TreeIndex) -> tuple[float, list]:
    envindex._indexes[str(env.resolve())] = index  # the index `scan` will take for `env`
    started = time.perf_counter()
    hits = scan(fingerprints, [env], ScanStats(), indexed=[env])
    return time.perf_counter() - started, hits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", default=None)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = cache_root(args.cache)
    sharded_bytes = envindex.SHARD_BYTES
    print(f"{'source':28} {'env MB':>7} {'shards':>6} {'tasks':>5} {'sharded s':>10} "
          f"{'one shard s':>12} {'ratio':>6}")
    for text in args.source or DEFAULT_SOURCES:
        kind, _, location = text.partition(":")
        source = ingest(SourceSpec(kind=kind, location=location), cache=cache,
                        base_dir=Path.cwd(), sandbox=get_sandbox("none"), repeats=2,
                        timeout=900, log=lambda m: print(f"# {m}", file=sys.stderr))
        env = source.env.venv
        sharded, whole = index_with(env, sharded_bytes), index_with(env, ONE_SHARD)
        times = [0.0, 0.0]
        with tempfile.TemporaryDirectory(prefix="env-search-bench-") as scratch:
            tasks = list(task_workspaces(source, args.tasks, Path(scratch)))
            for _candidate, _ws, fingerprints in tasks:
                a, hits_a = search(fingerprints, env, sharded)
                b, hits_b = search(fingerprints, env, whole)
                if hits_a != hits_b:
                    raise SystemExit(f"{text}: the two searches found different hits")
                times[0] += a
                times[1] += b
        print(f"{location:28} {len(sharded.corpus) / 1e6:7.1f} {len(sharded.spans):6} "
              f"{len(tasks):5} {times[0]:10.3f} {times[1]:12.3f} "
              f"{times[1] / max(times[0], 1e-9):5.1f}x")
    print(f"python {sys.version.split()[0]}; a shard: {sharded_bytes} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Leak-scan speed against `grep -rFf`, on a real package's task workspaces plus their environment.

    python bench/scan_speed.py [--source pypi:cachetools==8.0.1] [--tasks 5] [--repeat 5]
                               [--env PATH]

For each of the first N stub-function candidates of the source (ingested with taskforge's own
pipeline: sdist snapshot, uv environment, baseline; all cached), the bench builds the task
workspace (deletion applied, sanitized, fresh git), fingerprints the deletion, writes the text
fingerprints one a line (a multi-line block as its lines) to a file, then times, alternating
runs in the same process, `grep -rFf FILE WORKSPACE ENV` (which looks inside nothing) and
`taskforge.sanitize.scan(...)` over the same two roots (which also inflates the git objects and
decodes every other container it meets). Prints the best-of-N times, the ratio, and what the
scanner read. Needs network only the first time (pip download of the sdist, uv installs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.ingest import IngestedSource, ingest
from taskforge.languages.python.delete.stub_function import StubFunction
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Candidate, SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sanitize import ScanStats, fingerprint_workspace, sanitize_workspace, scan
from taskforge.sanitize.fingerprints import Fingerprints


def grep_patterns(fingerprints) -> list[str]:
    lines: list[str] = []
    for f in fingerprints.texts:
        lines += [ln.strip() for ln in f.text.splitlines() if ln.strip()] if f.kind == "block" \
            else [f.text]
    return sorted(set(lines))


def task_workspaces(source: IngestedSource, count: int, scratch: Path
                    ) -> Iterator[tuple[Candidate, Path, Fingerprints]]:
    """The `count` longest stub-function candidates of `source`, each with its task workspace
    under `scratch` (deletion applied, sanitized, fresh git) and its deletion's fingerprints."""
    strategy = StubFunction()
    candidates = strategy.candidates(source.project, source.baseline, SelectOptions())
    for n, candidate in enumerate(sorted(candidates, key=lambda c: -c.body_lines)[:count]):
        deletion = strategy.apply(source.project, candidate, TaskOptions())
        ws = scratch / f"ws{n}"
        shutil.copytree(source.snapshot.root, ws, symlinks=True)
        originals = {}
        for rel, text in deletion.new_texts.items():
            originals[rel] = (ws / rel).read_text()
            (ws / rel).write_text(text)
        sanitize_workspace(ws)
        yield candidate, ws, fingerprint_workspace(ws, originals)


def best(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="pypi:cachetools==8.0.1")
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--env", default=None,
                        help="scan this environment instead of the source's own (e.g. a big venv)")
    args = parser.parse_args()

    cache = cache_root(args.cache)
    kind, _, location = args.source.partition(":")
    spec = SourceSpec(kind=kind, location=location) if kind in ("pypi", "git") and location \
        else SourceSpec(kind="path", location=args.source)
    source = ingest(spec, cache=cache, base_dir=Path.cwd(), sandbox=get_sandbox("none"),
                    repeats=2, timeout=600, log=lambda m: print(f"  {m}", file=sys.stderr))
    env_dir = Path(args.env) if args.env else source.env.venv
    print(f"source {args.source}: snapshot {source.snapshot.id[:12]}, environment {env_dir}")
    print(f"{'task':44} {'fps':>4} {'pats':>4} {'grep s':>8} {'scan s':>8} {'ratio':>6}  "
          "files  MB  containers decodedMB")
    totals = [0.0, 0.0]
    ratios = []
    with tempfile.TemporaryDirectory(prefix="scan-bench-") as scratch:
        for n, (candidate, ws, fps) in enumerate(task_workspaces(source, args.tasks,
                                                                 Path(scratch))):
            pattern_file = Path(scratch) / f"fps{n}.txt"
            pattern_file.write_text("\n".join(grep_patterns(fps)) + "\n")
            roots = [ws, env_dir]

            def run_grep(pattern_file: Path = pattern_file, roots: list[Path] = roots) -> int:
                proc = subprocess.run(["grep", "-rFf", str(pattern_file), *map(str, roots)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                return proc.returncode

            stats = ScanStats()
            grep_times, scan_times = [], []
            for _ in range(args.repeat):  # alternate, so both see the same cache state
                g, _rc = best(run_grep, 1)
                s, hits = best(lambda fps=fps, roots=roots, stats=stats: scan(fps, roots, stats), 1)
                grep_times.append(g)
                scan_times.append(s)
            g, s = min(grep_times), min(scan_times)
            totals[0] += g
            totals[1] += s
            ratios.append(s / g)
            from taskforge.sanitize.scan import covering_patterns
            print(f"{candidate.symbol[-44:]:44} {len(fps):>4} "
                  f"{len(covering_patterns(fps.search_set)):>4} {g:8.4f} {s:8.4f} {s / g:6.2f}  "
                  f"{stats.files:5} {stats.bytes / 1e6:4.1f} {stats.containers:10} "
                  f"{stats.decoded_bytes / 1e6:9.2f}  hits={len(hits)}")
    print(f"total: grep {totals[0]:.4f} s, scan {totals[1]:.4f} s, ratio "
          f"{totals[1] / totals[0]:.2f} (median per task {statistics.median(ratios):.2f}); "
          f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Confirmations one at a time against two at once, on several packages in the same run.

`generate --workers 2` confirms two candidates at once, in threads of one process: while one
waits on its tests, the other does its bookkeeping (materializing, fingerprints, the record).
Per package: one screen of its first `--candidates` stub-function candidates, then the
confirmation phase (`make_task` for every candidate the screen kept) with 1 and with 2
threads, alternating, `--pairs` times, each pass with a fresh `Verifier` (nothing applied or
fingerprinted ahead). Printed: each pass's seconds, the ratio one/two by the mean, and
whether every pass gave the same statuses and labels.

First, what this machine's cores give: one CPU-bound Python loop alone, then two at once
(2.0 would be two whole cores).

    PYTHONPATH=. python bench/confirm_overlap.py --cache DIR [--packages ...]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.errors import Rejected
from taskforge.executors import LocalExecutor
from taskforge.ingest import ingest
from taskforge.languages.base import Screened
from taskforge.languages.strategy import TaskOptions
from taskforge.model import Candidate, SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.verify.confirm import Verifier, run_timeout

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verify_cost import candidate_strategy, choose_candidates, log

DEFAULT_PACKAGES = ("boltons==26.2.0", "sqlparse==0.6.1", "humanize==4.17.0")
LOOP = "import time\nt = time.perf_counter()\nx = 0\nfor i in range(20_000_000): x += i\n" \
       "print(time.perf_counter() - t)"


def loop_seconds(at_once: int) -> list[float]:
    """Each of `at_once` CPU-bound loops' seconds, started together."""
    loops = [subprocess.Popen([sys.executable, "-c", LOOP], stdout=subprocess.PIPE, text=True)
             for _ in range(at_once)]
    return [float(p.communicate()[0]) for p in loops]


def confirm_all(verifier: Verifier, items: list[tuple[Candidate, Screened]], threads: int
                ) -> tuple[float, list[tuple[str, str, list[str] | None]]]:
    """The confirmation phase with `threads` at once: its seconds, and each candidate's
    status and FAIL_TO_PASS."""
    def job(item: tuple[Candidate, Screened]) -> tuple[str, str, list[str] | None]:
        candidate, screened = item
        try:
            record = verifier.make_task(candidate_strategy(verifier.source, candidate),
                                        candidate, screened)
            return candidate.symbol, "task", sorted(record["FAIL_TO_PASS"])
        except Rejected as why:
            return candidate.symbol, why.reason, None

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        outcomes = list(pool.map(job, items))
    return time.monotonic() - started, outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--candidates", type=int, default=20, help="a package")
    parser.add_argument("--pairs", type=int, default=2, help="passes with 1 and 2 threads")
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache, box = cache_root(args.cache), get_sandbox("none")

    alone = loop_seconds(1)[0]
    together = loop_seconds(2)
    print(f"cores: one loop {alone:.2f} s alone; two at once "
          f"{' and '.join(f'{s:.2f}' for s in together)} s: "
          f"{2 * alone / max(together):.2f} cores' worth")
    rows = []
    for package in args.packages:
        source = ingest(SourceSpec(kind="pypi", location=package), cache=cache,
                        base_dir=Path.cwd(), sandbox=box, repeats=2, timeout=900, log=log)
        chosen, _found = choose_candidates(source, ["stub-function"], args.candidates)
        verifier = functools.partial(Verifier, source, box, cache, run_timeout(source, 900), 2,
                                     TaskOptions(), recipe_sha256="bench")
        verdicts = verifier().screen(chosen, LocalExecutor(1))
        items = [(c, verdicts[c.key]) for c in chosen if not verdicts[c.key].rejection]
        seconds: dict[int, list[float]] = {1: [], 2: []}
        outcomes = []
        for _ in range(args.pairs):
            for threads in (1, 2):
                took, got = confirm_all(verifier(), items, threads)
                seconds[threads].append(took)
                outcomes.append(got)
                log(f"{package}: {len(items)} confirmations, {threads} at once: {took:.2f} s")
        one, two = statistics.mean(seconds[1]), statistics.mean(seconds[2])
        same = all(o == outcomes[0] for o in outcomes)
        rows.append((package, len(items), seconds, one / two, same))
    print("| package | confirmations | 1 at once s | 2 at once s | one/two (mean) | same outcomes |")
    print("|---|---|---|---|---|---|")
    for package, count, seconds, ratio, same in rows:
        print(f"| {package} | {count} | {' / '.join(f'{s:.2f}' for s in seconds[1])} | "
              f"{' / '.join(f'{s:.2f}' for s in seconds[2])} | {ratio:.2f}x | "
              f"{'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()

"""A package's first screen with the snapshot's bytecode still to make (as before ce49404,
when the first screen built it and its candidates paid for it) against the same screen with
the bytecode made already (as the ingest makes it now), on several packages in one run.

    python bench/first_screen.py [--source pypi:boltons==26.2.0 ...] [--candidates 40]
        [--cache DIR]

For each source (ingested with taskforge's own pipeline, cached), the first `--candidates`
of the seeded stub-function order are screened three times by `Verifier.screen`, one worker,
sandbox none: with the bytecode there, with it removed (the screen builds it), with it there
again. The two screens with it bracket the one without, so the zygotes a process starts
first are started for both sides. Prints per source the seconds of each screen, the build's
share and the ratio without / with (the mean of the two).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.executors import LocalExecutor
from taskforge.generate import order_candidates
from taskforge.ingest import ingest
from taskforge.languages.python.testing.bytecode import snapshot_bytecode
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.verify.confirm import Verifier, run_timeout

DEFAULT_SOURCES = ("pypi:boltons==26.2.0", "pypi:humanize==4.17.0", "pypi:cachetools==8.0.1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", nargs="+", default=list(DEFAULT_SOURCES))
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = Path(args.cache) if args.cache else cache_root()
    box = get_sandbox("none")
    for location in args.source:
        kind, _, where = location.partition(":")
        source = ingest(SourceSpec(kind=kind, location=where), cache=cache, base_dir=Path.cwd(),
                        sandbox=box, repeats=2, timeout=900,
                        log=lambda m: print(m, file=sys.stderr))
        strategy = source.language.strategy("stub-function")
        assert strategy is not None
        found = strategy.candidates(source.project, source.baseline, SelectOptions())
        chosen = order_candidates(found, {"stub-function": 1.0}, 0,
                                  source.snapshot.id)[:args.candidates]
        verifier = Verifier(source, box, cache, run_timeout(source, 900), 2, TaskOptions(),
                            recipe_sha256="bench")
        bytecode = snapshot_bytecode(source.snapshot, verifier.runner)
        seconds = []
        for with_bytecode in (True, False, True):
            if not with_bytecode:
                shutil.rmtree(bytecode)  # the screen makes it again, as its first use
            started = time.monotonic()
            verifier.screen(chosen, LocalExecutor(1))
            seconds.append(time.monotonic() - started)
        with_it = (seconds[0] + seconds[2]) / 2
        print(f"{location}: {len(chosen)} candidates, screen {seconds[1]:.2f} s making the "
              f"bytecode, {seconds[0]:.2f} / {seconds[2]:.2f} s with it made "
              f"({seconds[1] / with_it:.2f}x; the build ~{seconds[1] - with_it:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The copy-in-tree check with each tree file's code lines memoized per process, against the
same check reducing every file again for each task (as before 594e5bb), on several packages
in one run.

    python bench/copy_check.py [--source pypi:boltons==26.2.0 ...] [--tasks 40] [--cache DIR]

For each source (ingested with taskforge's own pipeline, cached), the first `--tasks`
stub-function candidates are applied and fingerprinted against the snapshot's tree with the
deletion in place, as `Verifier.make_task` does (`fingerprint_deletion`). Then the seconds
in `copied_in_tree`, summed over those tasks, are timed both ways, memo cleared at the start
of each pass. Prints per source both sums, their ratio, and whether both ways found the same
copies.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.languages.python.delete.stub_function import StubFunction
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.sanitize import fingerprints as fp

DEFAULT_SOURCES = ("pypi:boltons==26.2.0", "pypi:humanize==4.17.0", "pypi:cachetools==8.0.1",
                   "pypi:sqlparse==0.6.1")


def reduced_each_time(text: str | bytes) -> tuple[str, ...]:
    """What the check did before the memo: every file reduced again for each task."""
    return tuple(fp._code_lines(fp._as_text(text).splitlines()))


def timed_checks(tasks: list[tuple[list, dict[str, bytes]]], reduce) -> tuple[float, list]:
    """Seconds in `copied_in_tree` over `tasks` with each file reduced by `reduce` (the memo
    cleared first), and what it found."""
    fp._file_code_lines.cache_clear()
    memoized, fp._file_code_lines = fp._file_code_lines, reduce
    found, seconds = [], 0.0
    try:
        for runs, tree in tasks:
            start = time.perf_counter()
            found.append(fp.copied_in_tree(runs, tree))
            seconds += time.perf_counter() - start
    finally:
        fp._file_code_lines = memoized
    return seconds, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", nargs="+", default=list(DEFAULT_SOURCES))
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = Path(args.cache) if args.cache else cache_root()
    box = get_sandbox("none")
    strategy = StubFunction()
    for location in args.source:
        kind, _, where = location.partition(":")
        source = ingest(SourceSpec(kind=kind, location=where), cache=cache, base_dir=Path.cwd(),
                        sandbox=box, repeats=2, timeout=900,
                        log=lambda m: print(m, file=sys.stderr))
        tree = fp.read_tree(source.snapshot.root)
        tasks = []
        for candidate in strategy.candidates(source.project, source.baseline,
                                             SelectOptions())[:args.tasks]:
            deletion = strategy.apply(source.project, candidate, TaskOptions())
            originals = {p: source.project.text(p) for p in deletion.new_texts}
            task_tree = {**tree, **{p: t.encode("utf-8", "surrogatepass")
                                    for p, t in deletion.new_texts.items()}}
            runs = [run for p in sorted(originals)
                    for run in fp.deleted_runs(originals[p], deletion.new_texts[p])]
            tasks.append((runs, task_tree))
        again, found_again = timed_checks(tasks, reduced_each_time)
        memo, found = timed_checks(tasks, fp._file_code_lines)
        print(f"{location}: {len(tasks)} tasks, copy-in-tree check {again * 1000:.1f} ms "
              f"reduced each time, {memo * 1000:.1f} ms memoized ({again / max(memo, 1e-9):.1f}x); "
              f"same copies: {found == found_again}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

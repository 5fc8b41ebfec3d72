"""What applying a package's deletions costs: the first `--candidates` of `verify_cost.py`'s
seeded candidate order, applied on a fresh project (positions computed as candidate discovery
leaves them), three ways, alternating, `--rounds` each: cutting the whole file at every
statement (both splices turned off), cutting out only the changed top-level statements
(`PythonProject._splice`; the nested splice off), and cutting out only the changed nodes
inside them (`PythonProject._splice_nested`, a method and not its class: taskforge's way);
the texts must be identical. Prints per package the median seconds of each way and the
ratios whole-file cut / nested and top-level splice / nested.

    python bench/apply_cost.py [--packages boltons==26.2.0 ...] [--candidates 40] [--rounds 3]
        [--cache DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_cost import DEFAULT_PACKAGES, candidate_strategy, choose_candidates, log

from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.languages.python.delete import PythonProject
from taskforge.languages.strategy import TaskOptions
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache, box = cache_root(args.cache), get_sandbox("none")
    print("package                 files  whole-file cut s  splice s  nested s  "
          "whole/nested  splice/nested")
    for package in args.packages:
        source = ingest(SourceSpec(kind="pypi", location=package), cache=cache,
                        base_dir=Path.cwd(), sandbox=box, repeats=2, timeout=900, log=log)
        chosen, _found = choose_candidates(source, ["stub-function"], args.candidates)
        ways = ("whole", "splice", "nested")
        seconds: dict[str, list[float]] = {way: [] for way in ways}
        texts: dict[str, list[dict[str, str]]] = {}
        for _ in range(args.rounds):
            for way in ways:
                project = PythonProject(source.snapshot.root, source.env.pythonpath)
                if way in ("whole", "splice"):
                    project._splice_nested = lambda *_args: None  # type: ignore[method-assign]
                if way == "whole":
                    project._splice = lambda *_args: None  # type: ignore[method-assign]
                for candidate in chosen:
                    project.positions(candidate.path)
                started = time.perf_counter()
                texts[way] = [candidate_strategy(source, c).apply(project, c, TaskOptions())
                              .new_texts for c in chosen]
                seconds[way].append(time.perf_counter() - started)
        if not texts["whole"] == texts["splice"] == texts["nested"]:
            sys.exit(f"{package}: the three ways gave different texts")
        whole, splice, nested = (statistics.median(seconds[w]) for w in ways)
        print(f"{package:22s} {len({c.path for c in chosen}):6d}  {whole:16.3f}  "
              f"{splice:8.3f}  {nested:8.3f}  {whole / nested:11.2f}x  {splice / nested:12.2f}x")


if __name__ == "__main__":
    main()

"""Which strategies a source's capped selection tries: the stratified order against the
previous one (Efraimidis-Spirakis keys per candidate, kept here as the baseline), in the same
run, on the same candidates.

For each source (default: the bundled sample repositories, or --pypi pins) it prints the
candidates per strategy, then for each cap the mean over seeds of how many of the strategies
that have candidates appear among the selected, and the share of the selection the smallest
strategy gets, for both orders.

    python bench/strategy_mix.py [--pypi attrs==25.3.0 ...] [--caps 6 7 20] [--seeds 20]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
from collections import Counter
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.generate import select_candidates
from taskforge.ingest import ingest
from taskforge.languages.python.delete import get_strategy
from taskforge.languages.strategy import SelectOptions
from taskforge.model import Candidate, SourceSpec
from taskforge.sandbox import get_sandbox

STRATEGIES = ("stub-function", "remove-function", "remove-method", "stub-class",
              "feature-cluster", "remove-branch", "remove-module")
SAMPLES = Path(__file__).resolve().parent.parent / "sample_repos"


def _unit(*parts: str) -> float:
    h = hashlib.sha256("\0".join(parts).encode()).digest()
    return (int.from_bytes(h[:8], "big") + 0.5) / 2**64


def per_candidate_order(candidates: list[Candidate], weights: dict[str, float], seed: int,
                        snapshot_id: str, cap: int) -> list[Candidate]:
    """The previous selection: each candidate's key drawn alone, so a strategy's chance of
    a place follows its number of candidates."""
    def key(c: Candidate) -> tuple[float, str]:
        return (-(_unit(str(seed), snapshot_id, c.key) ** (1.0 / weights[c.strategy])), c.key)
    return sorted(candidates, key=key)[:cap]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pypi", nargs="*", default=[])
    parser.add_argument("--caps", nargs="*", type=int, default=[6, 7, 20])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    specs = [SourceSpec(kind="pypi", location=p) for p in args.pypi] or \
        [SourceSpec(kind="path", location=str(p)) for p in sorted(SAMPLES.iterdir())]
    cache = cache_root(None)
    weights = dict.fromkeys(STRATEGIES, 1.0)
    select = SelectOptions(min_covering_tests=1, min_body_lines=3)
    print(f"{'source':<22}{'cap':>4}  {'strategies tried (per-candidate -> stratified)':>48}"
          f"  {'smallest strategy share':>28}")
    for spec in specs:
        src = ingest(spec, cache=cache, base_dir=Path.cwd(), sandbox=get_sandbox("none"),
                     repeats=2, timeout=900)
        found = [c for name in STRATEGIES
                 for c in get_strategy(name).candidates(src.project, src.baseline, select)]
        sizes = Counter(c.strategy for c in found)
        print(f"{src.snapshot.name}: {len(found)} candidates: "
              + ", ".join(f"{n} {sizes[n]}" for n in STRATEGIES))
        present = len(sizes)
        for cap in args.caps:
            figures = {}
            for label, pick in (("old", per_candidate_order), ("new", select_candidates)):
                kinds, smallest = [], []
                for seed in range(args.seeds):
                    chosen = Counter(c.strategy for c in pick(found, weights, seed,
                                                              src.snapshot.id, cap))
                    kinds.append(len(chosen))
                    smallest.append(min(chosen.get(n, 0) for n in sizes) / max(1, cap))
                figures[label] = (statistics.mean(kinds), statistics.mean(smallest))
            (old_k, old_s), (new_k, new_s) = figures["old"], figures["new"]
            print(f"{'':<22}{cap:>4}  {old_k:>14.2f} -> {new_k:.2f} of {present} "
                  f"(x{new_k / old_k:.2f}){'':>12}  {old_s:>10.3f} -> {new_s:.3f}")


if __name__ == "__main__":
    main()

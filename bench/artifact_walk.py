"""What the artifact walk costs each materialization: `remove_artifacts` over a fresh copy
of each package's snapshot, as `materialize` calls it (the snapshot's files kept), median of
N rounds, against the same function at an earlier commit (`--baseline`, loaded from git: the
walk it replaced), in the same run, alternating.

    PYTHONPATH=. python bench/artifact_walk.py [--packages humanize==4.17.0 ...]
        [--baseline 8c5c6a7] [--rounds 21] [--cache DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

from taskforge.artifacts import remove_artifacts, tracked_paths
from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox
from taskforge.workspace import copy_tree, scratch_parent

PACKAGES = ["click==8.5.1", "attrs==26.1.0", "humanize==4.17.0", "sqlparse==0.6.1",
            "boltons==26.2.0", "cachetools==8.0.1"]


def at_commit(commit: str) -> Callable:
    """`remove_artifacts` as `taskforge/artifacts.py` was at `commit`."""
    text = subprocess.run(["git", "show", f"{commit}:taskforge/artifacts.py"], check=True,
                          capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent).stdout
    module = types.ModuleType(f"artifacts_at_{commit}")
    sys.modules[module.__name__] = module  # its dataclasses look themselves up there
    exec(compile(text, f"{commit}:taskforge/artifacts.py", "exec"), module.__dict__)
    return module.remove_artifacts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=PACKAGES)
    parser.add_argument("--baseline", default="8c5c6a7")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = cache_root(args.cache)
    walks = {"now": remove_artifacts, args.baseline: at_commit(args.baseline)}
    print(f"remove_artifacts on a fresh copy, median of {args.rounds} rounds (ms); "
          f"the baseline is {args.baseline}'s")
    for package in args.packages:
        source = ingest(SourceSpec(kind="pypi", location=package), cache=cache,
                        base_dir=Path.cwd(), sandbox=get_sandbox("none"), repeats=2,
                        timeout=900, log=lambda m: print(f"# {m}", file=sys.stderr))
        root = source.snapshot.root
        keep = tracked_paths(root)
        dirs = sum(1 for p in root.rglob("*") if p.is_dir())
        seconds: dict[str, list[float]] = {name: [] for name in walks}
        with tempfile.TemporaryDirectory(dir=scratch_parent(cache), prefix="walkbench-") as d:
            copy_tree(root, Path(d) / "expected")
            expected = remove_artifacts(Path(d) / "expected", keep)
            for i in range(args.rounds):
                for name, walk in walks.items():  # alternating: one copy each a round
                    copy = Path(d) / f"{name}-{i}"
                    copy_tree(root, copy)
                    started = time.perf_counter()
                    removed = walk(copy, keep)
                    seconds[name].append(time.perf_counter() - started)
                    assert removed == expected, (name, package)  # both remove the same
        now, then = (statistics.median(seconds[n]) for n in walks)
        print(f"  {package:20} {len(keep):5d} files {dirs:4d} dirs  now {1000 * now:6.2f}  "
              f"{args.baseline} {1000 * then:6.2f}  ({then / now:.1f}x)")


if __name__ == "__main__":
    main()

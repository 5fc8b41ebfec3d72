"""What a workspace's fresh `.git` costs to write and to remove: taskforge's in-process writer
(`gitcmd.fresh_repository`: git's objects and commit id, the objects in one pack) against
git's own `init`, `add` and `commit` (`gitcmd.commit_tree`: the same commit, each object a
loose file), on several trees in one run, the two ways alternating, median of N rounds.

    python bench/fresh_git.py [--rounds 15] [TREE ...]

Without TREE: every tree of `sample_repos/` and every snapshot in the cache (`--cache`).
The in-process writer keeps each object's compressed entry by id, so its rounds after the
first measure what every workspace but a snapshot's first pays.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.gitcmd import commit_tree, fresh_repository
from taskforge.workspace import warm_dir

ROOT = Path(__file__).resolve().parent.parent


def default_trees(cache: Path) -> list[Path]:
    samples = sorted(p for p in (ROOT / "sample_repos").iterdir() if p.is_dir())
    snapshots = sorted(p / "tree" for p in (cache / "snapshots").glob("*") if (p / "tree").is_dir())
    return samples + snapshots


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(tree: Path, rounds: int, scratch: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"pack write": [], "pack remove": [],
                                     "git write": [], "git remove": []}
    for i in range(rounds):
        for way in ("pack", "git"):
            workspace = scratch / f"{way}-{i}"
            shutil.copytree(tree, workspace, symlinks=True)
            shutil.rmtree(workspace / ".git", ignore_errors=True)
            write = (lambda w=workspace: fresh_repository(w)) if way == "pack" else \
                (lambda w=workspace: commit_tree(w, w / ".git", "task workspace"))
            times[f"{way} write"].append(timed(write))
            times[f"{way} remove"].append(timed(lambda w=workspace: shutil.rmtree(w / ".git")))
            shutil.rmtree(workspace)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    cache = cache_root(args.cache)
    trees = args.trees or default_trees(cache)
    print(f"{'tree':58s} {'files':>6s} {'pack w/rm ms':>13s} {'git w/rm ms':>12s} "
          f"{'write x':>8s} {'remove x':>9s}")
    # where task workspaces are made (the cache's scratch place)
    with warm_dir(cache, prefix="fresh-git-") as scratch:
        for tree in trees:
            t = {k: 1000 * statistics.median(v)
                 for k, v in measure(tree, args.rounds, Path(scratch)).items()}
            files = sum(1 for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts)
            name = str(tree.relative_to(ROOT) if tree.is_relative_to(ROOT) else tree)[-58:]
            print(f"{name:58s} {files:6d} {t['pack write']:6.1f}/{t['pack remove']:<6.1f}"
                  f" {t['git write']:5.1f}/{t['git remove']:<6.1f}"
                  f" {t['git write'] / t['pack write']:7.1f}x"
                  f" {t['git remove'] / t['pack remove']:8.1f}x")


if __name__ == "__main__":
    main()

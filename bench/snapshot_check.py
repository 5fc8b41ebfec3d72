"""What checking a snapshot archive against its id costs a loader, once per snapshot and cache.

    python bench/snapshot_check.py [--repeat 5] [TREE ...]

For each tree (default: the bundled sample repositories and this repository's own taskforge/
package), in one process: snapshot it, write its archive as `generate` does, then time
`snapshot_root` into a fresh cache (unpack + tree hash check, what a loader on another
machine pays) against a bare unpack of the same archive (what it paid before the check).
Prints the median of N runs of each and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from taskforge.sources.store import snapshot_from_tree
from taskforge.store.snapshots import export_snapshot, snapshot_root

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TREES = [REPO / "sample_repos" / name for name in ("textkit", "spans", "exprcalc")] \
    + [REPO / "taskforge"]


def median_seconds(action, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            action(Path(scratch))
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path, default=DEFAULT_TREES)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'tree':12s} {'files':>6s} {'unpack s':>9s} {'checked s':>10s} {'ratio':>6s}")
    with tempfile.TemporaryDirectory() as work:
        cache, out = Path(work) / "cache", Path(work) / "out"
        for tree in args.trees:
            snapshot = snapshot_from_tree(tree, name=tree.name, source=str(tree), cache=cache)
            archive = export_snapshot(snapshot.root, snapshot.id, out)
            files = sum(1 for p in snapshot.root.rglob("*") if p.is_file())

            def bare(scratch: Path, archive: Path = archive) -> None:
                with tarfile.open(archive, "r:gz") as tar:
                    tar.extractall(scratch / "tree", filter="data")

            def checked(scratch: Path, snapshot_id: str = snapshot.id) -> None:
                snapshot_root(out, snapshot_id, scratch)

            plain = median_seconds(bare, args.repeat)
            full = median_seconds(checked, args.repeat)
            print(f"{tree.name:12s} {files:6d} {plain:9.3f} {full:10.3f} {full / plain:6.2f}x")


if __name__ == "__main__":
    main()

"""What a candidate's private workspace costs: each way of copying a snapshot tree that keeps
the original safe from a test rewriting a file in place (hardlinks do not), made and removed,
on disk and in memory (/dev/shm), median of N rounds in the same run. taskforge uses
`shutil.copytree` into /dev/shm (`taskforge/workspace.py`).

    python bench/workspace_copy.py [--package click==8.5.1] [--rounds 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from taskforge.cache import cache_root
from taskforge.ingest import ingest
from taskforge.model import SourceSpec
from taskforge.sandbox import get_sandbox


def copytree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True)


def cp_a(src: Path, dest: Path) -> None:
    subprocess.run(["cp", "-a", str(src), str(dest)], check=True)


def tar_pipe(src: Path, dest: Path) -> None:
    dest.mkdir()
    subprocess.run(f"tar -C '{src}' -cf - . | tar -C '{dest}' -xf -", shell=True, check=True)


def overlay(src: Path, dest: Path) -> None:
    upper, work = dest.with_name(dest.name + "-upper"), dest.with_name(dest.name + "-work")
    for d in (dest, upper, work):
        d.mkdir()
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    f"lowerdir={src},upperdir={upper},workdir={work}", str(dest)],
                   check=True, capture_output=True)


def remove(dest: Path) -> None:
    if dest.is_mount():
        subprocess.run(["umount", str(dest)], check=True)
        for suffix in ("-upper", "-work"):
            shutil.rmtree(dest.with_name(dest.name + suffix))
        dest.rmdir()
    else:
        shutil.rmtree(dest)


def measure(make: Callable[[Path, Path], None], src: Path, parent: Path,
            rounds: int) -> tuple[float, float] | str:
    """Median seconds to make and to remove one copy, or why the method is unavailable."""
    made, removed = [], []
    with tempfile.TemporaryDirectory(dir=parent, prefix="copybench-") as scratch:
        for i in range(rounds):
            dest = Path(scratch) / f"ws{i}"
            t0 = time.perf_counter()
            try:
                make(src, dest)
            except subprocess.CalledProcessError as why:
                return f"unavailable ({(why.stderr or b'').decode().strip()[:60]})"
            t1 = time.perf_counter()
            remove(dest)
            made.append(t1 - t0)
            removed.append(time.perf_counter() - t1)
    return statistics.median(made), statistics.median(removed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="click==8.5.1")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    source = ingest(SourceSpec(kind="pypi", location=args.package), cache=cache_root(args.cache),
                    base_dir=Path.cwd(), sandbox=get_sandbox("none"), repeats=2, timeout=900,
                    log=lambda m: print(f"# {m}", file=sys.stderr))
    src = source.snapshot.root
    files = sum(1 for p in src.rglob("*") if p.is_file())
    print(f"{args.package}: {files} files, median of {args.rounds} rounds (make / remove, s)")
    methods = {"copytree": copytree, "cp -a": cp_a, "tar pipe": tar_pipe, "overlayfs": overlay}
    for where in (Path("/dev/shm"), cache_root(args.cache)):
        for name, make in methods.items():
            result = measure(make, src, where, args.rounds)
            figures = result if isinstance(result, str) else \
                f"{result[0]:.4f} / {result[1]:.4f}"
            print(f"  {str(where)[:24]:24} {name:10} {figures}")


if __name__ == "__main__":
    main()

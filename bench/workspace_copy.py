"""What a candidate's private workspace costs: each way of copying a snapshot tree that keeps
the original safe from a test rewriting a file in place (hardlinks do not), made and removed,
on disk and in memory (/dev/shm), median of N rounds in the same run. taskforge uses
`copy_tree` (`taskforge/workspace.py`: the system calls alone) into /dev/shm; `shutil.copytree`
is the baseline it replaced.

    python bench/workspace_copy.py [--packages click==8.5.1 boltons==26.2.0 ...] [--rounds 15]
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
from taskforge.workspace import copy_tree


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
    parser.add_argument("--packages", nargs="+",
                        default=["click==8.5.1", "boltons==26.2.0", "sqlparse==0.6.1"])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    for package in args.packages:
        source = ingest(SourceSpec(kind="pypi", location=package), cache=cache_root(args.cache),
                        base_dir=Path.cwd(), sandbox=get_sandbox("none"), repeats=2,
                        timeout=900, log=lambda m: print(f"# {m}", file=sys.stderr))
        src = source.snapshot.root
        files = sum(1 for p in src.rglob("*") if p.is_file())
        print(f"{package}: {files} files, median of {args.rounds} rounds (make / remove, s;"
              " make against copytree's, the baseline)")
        methods = {"copy_tree": copy_tree, "copytree": copytree, "cp -a": cp_a,
                   "tar pipe": tar_pipe, "overlayfs": overlay}
        for where in (Path("/dev/shm"), cache_root(args.cache)):
            results = {name: measure(make, src, where, args.rounds)
                       for name, make in methods.items()}
            base = results["copytree"]
            for name, result in results.items():
                if isinstance(result, str):
                    figures = result
                else:
                    ratio = f"  ({base[0] / result[0]:.2f}x)" if not isinstance(base, str) else ""
                    figures = f"{result[0]:.4f} / {result[1]:.4f}{ratio}"
                print(f"  {str(where)[:24]:24} {name:10} {figures}")


if __name__ == "__main__":
    main()

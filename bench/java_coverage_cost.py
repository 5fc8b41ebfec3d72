"""Per-test JaCoCo coverage (agent + listener + reader) against the plain suite on a Java
sample, N interleaved runs each, through the sandbox taskforge uses: the figure the README
quotes (Java, "Per-test coverage").

usage: python bench/java_coverage_cost.py [sample_repos/javademo] [--runs 3] [--sandbox none]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from taskforge.languages import language_named
from taskforge.languages.java import testing
from taskforge.model import Snapshot, SourceSpec
from taskforge.sandbox import get_sandbox


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("project", nargs="?", default="sample_repos/javademo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sandbox", default="none")
    args = parser.parse_args()
    root = Path(args.project).resolve()
    java = language_named("java")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        snapshot = Snapshot(id="b" * 40, name=root.name, source=str(root), commit="0" * 40,
                            root=root, license=None)
        env = java.prepare(SourceSpec(kind="path", location=str(root)), snapshot,
                           scratch / "cache", lambda _m: None).env
        sandbox = get_sandbox(args.sandbox)
        plain, covered = [], []
        for i in range(args.runs):
            for kind, times in (("plain", plain), ("coverage", covered)):
                workspace = scratch / f"ws-{kind}-{i}"
                shutil.copytree(root, workspace)
                coverage = scratch / f"cov-{i}" if kind == "coverage" else None
                if coverage is not None:
                    coverage.mkdir()
                start = time.monotonic()
                run, _entries = testing._run(env, workspace, sandbox, timeout=1800,
                                             coverage_dir=coverage)
                times.append(time.monotonic() - start)
                print(f"{kind} run {i}: {times[-1]:.1f}s, {len(run.outcomes)} tests")
        ratio = statistics.median(covered) / statistics.median(plain)
        print(f"plain {', '.join(f'{t:.1f}' for t in plain)} s; per-test coverage "
              f"{', '.join(f'{t:.1f}' for t in covered)} s (compile, run and, with coverage, "
              f"the reader); median ratio {ratio:.2f}")


if __name__ == "__main__":
    main()

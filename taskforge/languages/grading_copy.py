"""What every language's grader does to its copy of a solution beside its own rules: links
that leave the copy are taken out before the tests run, and the test code is compared
afterwards with what ran.

A symlink the solution brings that points outside its workspace reads the host where the
sandbox shows it (under `none`, the cache's snapshot of the original code: a link to it scored
1.0 in session 64's red team), and one that points nowhere makes reading the copy fail. Both
are removed from the copy and named; links within the copy stay (projects have them).

The test files are restored before the run, but the copy is writable while the tests run:
code of the solution that rewrites a test file not loaded yet (node's runner starts a
process per file; vitest imports each when it runs it; pytest imports a test helper after
the module that imports the solution) had every test of it pass with the feature still
missing (the same red team). So the restored test code is bound read-only where the sandbox
binds (bwrap, docker: `read_only_binds`), and under any sandbox the grader keeps the digest
of each such file and compares after the run: a file changed or gone disqualifies. (The
comparison alone misses a file put back before the run ends: read-only binds do not.)
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterable
from pathlib import Path

from taskforge.model import Finding
from taskforge.workspace import copy_tree


def remove_escaping_links(copy: Path) -> list[str]:
    """Remove every symlink under `copy` that resolves outside it or to nothing; return what
    was removed, a line each ("removed link X -> T: ...")."""
    removed = []
    root = os.path.realpath(copy)
    for directory, dirs, files in os.walk(copy):
        for name in [*dirs, *files]:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                continue
            target = os.readlink(path)
            resolved = os.path.realpath(path)
            rel = Path(path).relative_to(copy).as_posix()
            if resolved != root and not resolved.startswith(root + os.sep):
                why = "it points outside the workspace"
            elif not os.path.exists(resolved):
                why = "it points to nothing"
            else:
                continue
            os.unlink(path)
            removed.append(f"removed link {rel} -> {target}: {why}")
        # (os.walk does not descend into linked directories: they are judged above)
    return sorted(removed)


# Bound read-only one by one: past this many test-code files, the rest rely on the comparison
# after the run (a mount a file: thousands would slow every grading run).
MOST_READ_ONLY = 512


def read_only_binds(copy: Path, paths: Iterable[str]) -> tuple[tuple[Path, ...],
                                                               tuple[Path, ...]]:
    """What the sandbox binds for the test code of `paths` (relative to `copy`): the files
    read-only (regular files, links within the copy staying writable through their target;
    at most MOST_READ_ONLY), and the directories that hold them, each bound writable onto
    itself. A mount point cannot be renamed: without those binds a test directory moved
    aside and made anew held forged test files in place of the bound ones (the review of
    session 64's change did it under bwrap)."""
    files = tuple(p for p in (copy / rel for rel in sorted(paths))
                  if p.is_file() and not p.is_symlink())[:MOST_READ_ONLY]
    directories = {parent for file in files for parent in file.parents
                   if parent != copy and parent.is_relative_to(copy)}
    return files, tuple(sorted(directories))


def digests(copy: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """The sha256 of each of `paths` (relative to `copy`) as it is now; None where missing."""
    found: dict[str, str | None] = {}
    for rel in paths:
        try:
            found[rel] = hashlib.sha256((copy / rel).read_bytes()).hexdigest()
        except OSError:
            found[rel] = None
    return found


def rewritten_during_run(copy: Path, before: dict[str, str | None]) -> list[Finding]:
    """Test-code files the run changed or removed (`before`: their `digests` just before it).
    Disqualifying: the tests that ran may not be the ones restored."""
    after = digests(copy, before)
    changed = sorted(rel for rel, digest in before.items() if after[rel] != digest)
    if not changed:
        return []
    return [Finding(f"test files were rewritten while the tests ran: {', '.join(changed[:3])}"
                    f"{', ...' if len(changed) > 3 else ''}", True)]


def linked(root: Path, rel: str) -> bool:
    """Whether `rel` or a directory on its way is a symbolic link."""
    parts = Path(rel).parts
    return any(root.joinpath(*parts[:n]).is_symlink() for n in range(1, len(parts) + 1))


def suffix(rng: random.Random) -> str:
    """The random word that ends a canary's name (and an expectation copy's)."""
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


def original_with(original: Path, graded: Path, files: Iterable[str], dest: Path) -> list[str]:
    """`original` (the snapshot) copied to `dest` with `graded`'s versions of `files` (the
    test files expectation copies were planted in), where the second run of a passing copy
    runs; the files written: never one through a link (the snapshot's `tests/` may be one),
    whose copies are then not run again, so not forgiven."""
    copy_tree(original, dest)
    written = [rel for rel in files if not linked(dest, rel)]
    for rel in written:
        (dest / rel).unlink(missing_ok=True)
        (dest / rel).write_bytes((graded / rel).read_bytes())
    return written

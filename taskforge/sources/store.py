"""Turn a tree on disk or a git commit into a cached, content-addressed snapshot."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from taskforge.artifacts import VCS_DIRS, git_exclude_lines, rule_for
from taskforge.cache import build_once, digest, read_json, write_json
from taskforge.errors import UserError
from taskforge.gitcmd import FIXED_ENV, commit_tree, git
from taskforge.leftovers import owned
from taskforge.model import Snapshot
from taskforge.sources.license import detect_license
from taskforge.store.outdir import JOURNALS, is_output_dir
from taskforge.store.written import EXPORT_MARKER, export_dir_format, written_file


def check_symlinks(root: Path) -> None:
    """Refuse a tree with a symlink that leads outside it: following it would read the host."""
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in VCS_DIRS and not rule_for(d, True)]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                try:
                    target = Path(os.path.realpath(path, strict=True))
                except FileNotFoundError:  # dangling: judged by where it would lead
                    target = Path(os.path.realpath(path))
                except (OSError, RuntimeError):
                    raise UserError(f"{path}: symlink loop (-> {os.readlink(path)})") from None
                if target != real_root and real_root not in target.parents:
                    raise UserError(
                        f"{path}: symlink points outside the source tree (-> {os.readlink(path)})"
                    )


# `git archive` obeys the tree's .gitattributes: `export-ignore` leaves files out (projects
# mark tests/ or .github/ so), `export-subst` fills in placeholders (.git_archival.txt gets
# the snapshot's commit and no tag, and setuptools-scm then reads version 0.0 from it). A
# snapshot is the files as committed: the repository's own info/attributes (taskforge's
# mirror or scratch repository) turns both off, and it overrides any .gitattributes.
_ARCHIVE_AS_COMMITTED = "* -export-ignore -export-subst\n"


def taskforge_paths(root: Path, cache: Path) -> list[tuple[str, str]]:
    """What taskforge wrote under `root` (output directories, the cache, exports, reports:
    see store/written.py), each relative to it (a directory's with a trailing "/") and what
    it is. None of it enters a snapshot, or a task's workspace would hold other tasks'
    patches and every run would change the snapshot it reads."""
    if root == cache or is_output_dir(root):
        raise UserError(f"{root}: a taskforge output directory or cache, not a source")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        what = _written_dir(here, cache, dirnames, filenames) if here != root else None
        if what:
            found.append((here.relative_to(root).as_posix() + "/", what))
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if d not in VCS_DIRS and not rule_for(d, True)]
        found += [((here / name).relative_to(root).as_posix(), what) for name in filenames
                  if (what := written_file(here / name))]
    return found


def _written_dir(here: Path, cache: Path, dirnames: list[str], filenames: list[str]) -> str | None:
    """What taskforge directory `here` is (its entries given), or None."""
    if here == cache:
        return "cache"
    if (JOURNALS in dirnames or any(n.startswith("manifest-") for n in filenames)) \
            and is_output_dir(here):
        return "output directory"
    fmt = export_dir_format(here) if EXPORT_MARKER in filenames else None
    return f"{fmt} export" if fmt else None


def _gitignore_literal(rel: str) -> str:
    """`rel` (a directory's ending in "/") as an anchored gitignore pattern matching it only."""
    directory = rel.endswith("/")
    rel = rel.rstrip("/")
    return "/" + re.sub(r"([\\*?\[\]!# ])", r"\\\1", rel) + ("/" if directory else "")


def archive_commit(git_dir: Path, commit: str, dest: Path) -> None:
    """Extract the files of `commit` into `dest` (no .git), refusing unsafe members."""
    attributes = git_dir / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    attributes.write_text(_ARCHIVE_AS_COMMITTED)
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit],
                          capture_output=True, check=True, env={**os.environ, **FIXED_ENV})
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
            tar.extractall(dest, filter="data")
    except tarfile.FilterError as e:
        member = e.tarinfo.name
        raise UserError(f"{member}: symlink to an absolute path or out of the tree "
                        f"(-> {e.tarinfo.linkname}); a snapshot holds relative links within "
                        "itself only") from None
    check_symlinks(dest)  # loops: tarfile extracts them, every walk that follows one fails


# Git LFS replaces a file by a small pointer whose first line is this.
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
_LFS_POINTER_MAX = 1024  # pointer files are ~130 bytes


def lfs_pointers(git_dir: Path, commit: str) -> list[str]:
    """Paths of the files of `commit` that are Git LFS pointers, not the files' content."""
    small = []
    for line in git("ls-tree", "-r", "-l", commit, git_dir=git_dir).splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit() \
                and int(parts[3]) <= _LFS_POINTER_MAX:
            small.append((parts[2], path))
    if not small:
        return []
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                          input="".join(f"{sha}\n" for sha, _ in small).encode(),
                          capture_output=True, check=True, env={**os.environ, **FIXED_ENV})
    out, pos, found = proc.stdout, 0, []
    for _sha, path in small:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        body = out[header_end + 1:header_end + 1 + size]
        pos = header_end + 1 + size + 1
        if body.startswith(LFS_POINTER):
            found.append(path)
    return found


def snapshot_from_git(git_dir: Path, commit: str, *, name: str, source: str,
                      cache: Path) -> Snapshot:
    tree = git("rev-parse", f"{commit}^{{tree}}", git_dir=git_dir)
    if not git("ls-tree", "-r", "--name-only", commit, git_dir=git_dir):
        raise UserError(f"{source}: commit {commit[:12]} has no files")
    pointers = lfs_pointers(git_dir, commit)
    if pointers:
        raise UserError(f"{source}: {len(pointers)} Git LFS pointer file(s) ({pointers[0]}"
                        f"{', ...' if len(pointers) > 1 else ''}): their content lives in LFS "
                        "storage, not in the repository, and taskforge does not fetch it")
    final = cache / "snapshots" / tree
    final.parent.mkdir(parents=True, exist_ok=True)
    build_once(final, lambda staging: archive_commit(git_dir, commit, staging / "tree"))
    root = final / "tree"
    return Snapshot(id=tree, name=name, source=source, commit=commit, root=root,
                    license=detect_license(root))


def prune_artifacts(root: Path) -> None:
    """Delete VCS dirs and snapshot-rule artifacts from a tree taskforge owns (an unpacked
    archive), so it can be committed whole, its .gitignore files notwithstanding."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in list(dirnames):
            if name in VCS_DIRS or rule_for(name, True):
                shutil.rmtree(Path(dirpath) / name)
                dirnames.remove(name)
        for name in filenames:
            if rule_for(name, False):
                (Path(dirpath) / name).unlink()


def snapshot_from_tree(tree_root: Path, *, name: str, source: str, cache: Path,
                       archive: bool = False, prune: bool | None = None) -> Snapshot:
    """Hash `tree_root` (artifacts and VCS dirs excluded) and store it unless already cached.

    A checkout honours its .gitignore (what it ignores is local junk); an `archive` (an
    unpacked sdist, pruned here unless `prune` is False) does not: every file in it was
    shipped on purpose, such as the version module a build wrote and the project's
    .gitignore names.
    """
    if not tree_root.is_dir():
        raise UserError(f"{tree_root}: source path does not exist or is not a directory")
    check_symlinks(tree_root)
    if archive if prune is None else prune:
        prune_artifacts(tree_root)
    left_out = [] if archive else taskforge_paths(tree_root.resolve(), cache.resolve())
    if not archive:  # the output directory and the cache: generate warns of those
        others = [f"{rel} ({what})" for rel, what in left_out
                  if what not in ("output directory", "cache")]
        write_notes(cache, source, [f"left out of the snapshot, as taskforge wrote them: "
                                    f"{', '.join(others)}"] if others else [])
    tmp = cache / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmp, prefix=owned("hash-")) as scratch:
        git_dir = Path(scratch) / "git"
        commit = commit_tree(tree_root, git_dir, f"snapshot of {name}",
                             exclude=None if archive else
                             git_exclude_lines() + [_gitignore_literal(p) for p, _ in left_out])
        if not git("ls-tree", "-r", "--name-only", commit, git_dir=git_dir):
            raise UserError(f"{tree_root}: source has no files")
        return snapshot_from_git(git_dir, commit, name=name, source=source, cache=cache)


def remember(cache: Path, key: str, snapshot: Snapshot) -> None:
    write_json(cache / "sources" / f"{key}.json",
               {"id": snapshot.id, "name": snapshot.name, "source": snapshot.source,
                "commit": snapshot.commit, "license": snapshot.license,
                "describe": snapshot.describe})


def recall(cache: Path, key: str) -> Snapshot | None:
    """A snapshot an earlier run made from the same immutable source, if it is still cached."""
    index = cache / "sources" / f"{key}.json"
    if not index.is_file():
        return None
    meta = read_json(index)
    root = cache / "snapshots" / meta["id"] / "tree"
    if not root.is_dir():
        return None
    return Snapshot(id=meta["id"], name=meta["name"], source=meta["source"],
                    commit=meta["commit"], root=root, license=meta["license"],
                    describe=meta.get("describe"))


def write_notes(cache: Path, source: str, notes: list[str]) -> None:
    """What fetching `source` found worth telling (how it was fetched, what was left out)."""
    write_json(cache / "sources" / f"notes-{digest('notes', source)}.json", {"notes": notes})


def read_notes(cache: Path, source: str) -> list[str]:
    path = cache / "sources" / f"notes-{digest('notes', source)}.json"
    return list(read_json(path)["notes"]) if path.is_file() else []

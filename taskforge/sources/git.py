"""A git source (URL or local repository path) at a ref, fetched with gitpython into a cached
bare repository: shallow (depth 1) where the ref allows it, in full where it does not (a short
sha), with the submodules it leaves out reported.

A project that reads its version from git (setuptools-scm, hatch-vcs, pdm-backend, no
fallback) gets it from `git describe --tags`, as a maintainer's CI checkout does; a shallow
fetch has no tags, so for such a project alone the source asks for them: the tag on the
commit (listed by the remote, one fetch of that ref), else the history and tags without file
contents (a `blob:none` filter; a server that ignores filters sends them whole), fetched into
a scratch repository: a filter would make the cached mirror a partial clone, whose later
fetches leave files out.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import git as gitpython

from taskforge.cache import digest, file_lock
from taskforge.errors import UserError
from taskforge.gitcmd import GitError, git_env
from taskforge.gitcmd import git as run_git
from taskforge.model import Snapshot
from taskforge.sources.store import recall, remember, snapshot_from_git, write_notes

_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def _last_fatal(error: gitpython.GitCommandError) -> str:
    lines = [ln.strip() for ln in str(error.stderr).splitlines() if ln.strip()]
    fatal = [ln for ln in lines if "fatal:" in ln]
    text = (fatal or lines or [str(error)])[-1]
    return text.split("fatal:", 1)[-1].strip().strip("'")


def repo_name(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return tail.removesuffix(".git") or "repo"


def fetch_url(url: str) -> str:
    """A local repository path as a file:// URL: git ignores --depth for plain local paths."""
    if "://" in url or url.startswith("git@"):
        return url
    path = Path(url).expanduser()
    return path.resolve().as_uri() if path.exists() else url


def _bare_repo(clone: Path, url: str) -> gitpython.Repo:
    if clone.exists():
        repo = gitpython.Repo(clone)
        repo.git.remote("set-url", "origin", url)
        return repo
    repo = gitpython.Repo.init(clone, bare=True)
    repo.git.remote("add", "origin", url)
    return repo


def _fetch(repo: gitpython.Repo, url: str, ref: str | None) -> tuple[str, str]:
    """Fetch `ref` (HEAD when None); return its commit and how it was fetched."""
    wanted = ref or "HEAD"
    env = git_env()
    try:
        # A name or a full sha: one commit, no history (the tree is all a snapshot needs).
        repo.git.fetch("--depth=1", "--no-tags", "origin", wanted, env=env)
        return repo.git.rev_parse("--verify", "FETCH_HEAD^{commit}"), \
            f"shallow fetch (depth 1) of {wanted}"
    except gitpython.GitCommandError:
        pass  # a short sha, or a server that refuses a sha: fetch everything
    args = ["origin", "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "--prune"]
    if (Path(repo.git_dir) / "shallow").exists():
        args.insert(0, "--unshallow")
    try:
        repo.git.fetch(*args, env=env)
    except gitpython.GitCommandError as e:
        raise UserError(f"{url}: cannot clone: {_last_fatal(e)}") from None
    try:
        commit = run_git("rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}",
                         git_dir=Path(repo.git_dir))
    except GitError:
        raise UserError(f"{url}: ref {ref!r} does not exist") from None
    return commit, f"full fetch ({wanted} cannot be fetched shallow)"


def submodules(git_dir: Path, commit: str) -> list[str]:
    """The submodules of `commit` (gitlinks), with their URLs from .gitmodules when given."""
    paths = [line.split("\t", 1)[1] for line in run_git("ls-tree", "-r", commit,
                                                        git_dir=git_dir).splitlines()
             if line.startswith("160000 ")]
    urls: dict[str, str] = {}
    if paths:
        try:
            config = run_git("config", "--blob", f"{commit}:.gitmodules", "--get-regexp",
                             r"submodule\..*\.(path|url)", git_dir=git_dir)
        except GitError:
            config = ""
        by_name: dict[str, dict[str, str]] = {}
        for line in config.splitlines():
            key, _, value = line.partition(" ")
            name, _, field = key.removeprefix("submodule.").rpartition(".")
            by_name.setdefault(name, {})[field] = value
        urls = {v["path"]: v.get("url", "") for v in by_name.values() if "path" in v}
    return [f"{p} ({urls[p]})" if urls.get(p) else p for p in paths]


def _describe(git_dir: Path, commit: str) -> str | None:
    try:  # setuptools-scm's own describe: tags that hold a digit, always in the long form
        return run_git("describe", "--tags", "--long", "--match", "*[0-9]*", commit,
                       git_dir=git_dir) or None
    except GitError:
        return None


def _shallow(repo: gitpython.Repo) -> bool:
    return (Path(repo.git_dir) / "shallow").exists()


def describe_commit(repo: gitpython.Repo, url: str, wanted: str, commit: str,
                    scratch_dir: Path) -> tuple[str | None, str]:
    """`git describe --tags --long` of `commit` (fetched as `wanted` from `url` into `repo`),
    fetching the tags it needs; with a note on what was found (or why nothing was)."""
    git_dir = Path(repo.git_dir)
    found = _describe(git_dir, commit) if not _shallow(repo) else None
    if found:
        return found, f"version tag: {found} (git describe)"
    env = git_env()
    try:
        listing = repo.git.ls_remote("--tags", "origin", env=env)
    except gitpython.GitCommandError as e:
        return None, f"version tag: the remote's tags cannot be listed: {_last_fatal(e)}"
    # `refs/tags/v1^{}` is the commit an annotated tag points at; a light tag points at it.
    tags = {}
    for line in listing.splitlines():
        sha, _, ref = line.partition("\t")
        tags.setdefault(ref.removeprefix("refs/tags/").removesuffix("^{}"), set()).add(sha)
    if not tags:
        return None, "version tag: none (the repository has no tags)"
    on_commit = sorted(name for name, shas in tags.items() if commit in shas)
    try:
        if on_commit:  # the commit is here already: only the tag refs are fetched
            repo.git.fetch("--depth=1", "--no-tags", "origin",
                           *[f"+refs/tags/{t}:refs/tags/{t}" for t in on_commit], env=env)
            found = _describe(git_dir, commit)
        else:
            # git describe walks the history back to a tag: commits and trees, not files.
            scratch_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=scratch_dir, prefix="describe-") as scratch:
                history = gitpython.Repo.init(scratch, bare=True)
                history.git.fetch("--filter=blob:none", "--no-tags", fetch_url(url), wanted,
                                  "+refs/tags/*:refs/tags/*", env=env)
                found = _describe(Path(scratch), commit)
    except gitpython.GitCommandError as e:
        return None, f"version tag: the tags cannot be fetched: {_last_fatal(e)}"
    if found:
        return found, f"version tag: {found} (git describe)"
    return None, "version tag: none reachable from the commit"


def ingest_git(url: str, ref: str | None, cache: Path,
               describe_if: Callable[[Path], bool] = lambda _root: False) -> Snapshot:
    """The snapshot of `ref` (HEAD when None) of the repository at `url`. `describe_if(root)`:
    whether the snapshot's build reads its version from git (the language's answer), so the
    commit is described by its tags (`Snapshot.describe`)."""
    key = digest("git", url, ref)
    if ref and _FULL_SHA.match(ref):
        known = recall(cache, key)
        if known:  # a pinned commit never changes: no fetch needed
            return known
    clone = cache / "git" / digest("clone", url)[:24]
    clone.parent.mkdir(parents=True, exist_ok=True)
    source = f"{url}@{ref}" if ref else url
    with file_lock(clone.with_name(clone.name + ".lock")):
        try:
            repo = _bare_repo(clone, fetch_url(url))
        except gitpython.GitCommandError as e:
            raise UserError(f"{url}: cannot clone: {_last_fatal(e)}") from None
        commit, how = _fetch(repo, url, ref)
        notes = [how]
        left_out = submodules(clone, commit)
        if left_out:
            notes.append(f"submodules not fetched, their files are not in the snapshot: "
                         f"{', '.join(left_out)}")
        snapshot = snapshot_from_git(clone, commit, name=repo_name(url), source=source,
                                     cache=cache)
        if describe_if(snapshot.root):
            describe, note = describe_commit(repo, url, ref or "HEAD", commit, cache / "tmp")
            notes.append(note)
            snapshot = dataclasses.replace(snapshot, describe=describe)
    write_notes(cache, source, notes)
    remember(cache, key, snapshot)
    return snapshot

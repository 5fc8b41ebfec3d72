"""A git URL (or bare repository path) at a ref, cloned with gitpython into a cached bare repo."""

from __future__ import annotations

import re
from pathlib import Path

import git as gitpython

from taskforge.cache import digest, file_lock
from taskforge.errors import UserError
from taskforge.gitcmd import GitError
from taskforge.gitcmd import git as run_git
from taskforge.model import Snapshot
from taskforge.sources.store import recall, remember, snapshot_from_git

_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def _last_fatal(error: gitpython.GitCommandError) -> str:
    lines = [ln.strip() for ln in str(error.stderr).splitlines() if ln.strip()]
    fatal = [ln for ln in lines if "fatal:" in ln]
    text = (fatal or lines or [str(error)])[-1]
    return text.split("fatal:", 1)[-1].strip().strip("'")


def repo_name(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return tail.removesuffix(".git") or "repo"


def ingest_git(url: str, ref: str | None, cache: Path) -> Snapshot:
    key = digest("git", url, ref)
    if ref and _FULL_SHA.match(ref):
        known = recall(cache, key)
        if known:  # a pinned commit never changes: no fetch needed
            return known
    clone = cache / "git" / digest("clone", url)[:24]
    with file_lock(clone.with_name(clone.name + ".lock")):
        try:
            if clone.exists():
                gitpython.Repo(clone).git.fetch("origin", "+refs/heads/*:refs/heads/*",
                                                "+refs/tags/*:refs/tags/*", "--prune")
            else:
                gitpython.Repo.clone_from(url, clone, bare=True)
        except gitpython.GitCommandError as e:
            raise UserError(f"{url}: cannot clone: {_last_fatal(e)}") from None
        try:
            commit = run_git("rev-parse", "--verify", "--quiet", f"{ref or 'HEAD'}^{{commit}}",
                             git_dir=clone)
        except GitError:
            raise UserError(f"{url}: ref {ref!r} does not exist") from None
        snapshot = snapshot_from_git(clone, commit, name=repo_name(url),
                                     source=f"{url}@{ref}" if ref else url, cache=cache)
    remember(cache, key, snapshot)
    return snapshot

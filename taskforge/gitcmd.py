"""Plain git plumbing with a fixed identity and clock, so the same tree gives the same commit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

FIXED_ENV = {
    "GIT_AUTHOR_NAME": "taskforge",
    "GIT_AUTHOR_EMAIL": "taskforge@localhost",
    "GIT_COMMITTER_NAME": "taskforge",
    "GIT_COMMITTER_EMAIL": "taskforge@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class GitError(RuntimeError):
    pass


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None,
        work_tree: Path | None = None, input: bytes | None = None) -> str:
    cmd = ["git"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        cmd.append(f"--work-tree={work_tree}")
    env = {**os.environ, **FIXED_ENV}
    proc = subprocess.run([*cmd, *args], cwd=cwd, env=env, input=input, capture_output=True)
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return proc.stdout.decode(errors="replace").strip()


def commit_tree(work_tree: Path, git_dir: Path, message: str, exclude: list[str] | None = None) -> str:
    """Commit every file of `work_tree` into a new repository at `git_dir`; return the commit."""
    if git_dir == work_tree / ".git":
        git("init", "-q", "--template=", "-b", "main", cwd=work_tree)
    else:  # a repository kept apart from the tree it records
        git("init", "-q", "--bare", "--template=", "-b", "main", str(git_dir))
    git("config", "core.autocrlf", "false", git_dir=git_dir)
    git("config", "core.logAllRefUpdates", "false", git_dir=git_dir)  # no reflog to read
    if exclude:
        info = git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text("\n".join(exclude) + "\n")
    # With exclude rules, honour them and the tree's .gitignore; without, take every file.
    git("add", "-A", *([] if exclude else ["--force"]), git_dir=git_dir, work_tree=work_tree)
    git("commit", "-q", "--no-verify", "--allow-empty", "-m", message,
        git_dir=git_dir, work_tree=work_tree)
    return git("rev-parse", "HEAD", git_dir=git_dir)


def fresh_repository(workspace: Path, message: str = "task workspace") -> str:
    """Give `workspace` a brand-new .git holding exactly one commit of its files."""
    return commit_tree(workspace, workspace / ".git", message)

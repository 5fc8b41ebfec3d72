"""Fresh git: one commit and nothing else, whatever the workspace's old repository held."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from taskforge.gitcmd import fresh_repository, fresh_repository_problems
from taskforge.sanitize import sanitize_workspace

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}
SECRET = "def deleted_body():\n    return 'only the old history knows this line'\n"


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", *args], cwd=cwd, env={**env, **GIT_ENV}, input=input,
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg/mod.py").write_text("def deleted_body():\n    raise NotImplementedError\n")
    (ws / "README.md").write_text("readme\n")
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "run.log").write_text("ignored by the project, still part of the workspace\n")
    return ws


def all_objects(git_dir: Path) -> set[str]:
    return set(git(git_dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
               .split())


def test_one_commit_and_nothing_else(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    commit = fresh_repository(ws)
    git_dir = ws / ".git"
    assert sorted(os.listdir(git_dir)) == ["HEAD", "config", "index", "objects", "refs"]
    assert git(ws, "for-each-ref", "--format=%(refname)") == "refs/heads/main"
    assert git(ws, "rev-list", "--all") == commit
    assert git(ws, "fsck", "--unreachable", "--no-reflogs", "--no-progress") == ""
    assert git(ws, "stash", "list") == ""
    assert git(ws, "reflog") == ""
    assert git(ws, "status", "--porcelain", "--ignored") == ""  # everything is committed
    assert git(ws, "ls-files").split() == [".gitignore", "README.md", "pkg/mod.py", "run.log"]
    reachable = {ln.split()[0] for ln in git(ws, "rev-list", "--objects", "--all").splitlines()}
    assert all_objects(git_dir) == reachable
    assert not (git_dir / "hooks").exists()
    assert fresh_repository_problems(git_dir, full=True) == []


def test_same_tree_same_commit(tmp_path: Path) -> None:
    a = fresh_repository(workspace(tmp_path / "a"))
    b = fresh_repository(workspace(tmp_path / "b"))
    assert a == b


def dirty_repository(ws: Path) -> dict[str, str]:
    """A repository holding the secret every way git can: history, reflog, stash, tag,
    note, packed and loose refs, ORIG_HEAD, FETCH_HEAD, a remote, hooks, dangling objects."""
    git(ws, "init", "-q", "-b", "main")
    (ws / "pkg/secret.py").write_text(SECRET)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "with the secret")
    old = git(ws, "rev-parse", "HEAD")
    git(ws, "tag", "-a", "v1", "-m", SECRET)
    git(ws, "notes", "add", "-m", SECRET)
    git(ws, "branch", "old")
    (ws / "pkg/secret.py").unlink()
    git(ws, "commit", "-q", "-am", "secret removed")
    (ws / "pkg/mod.py").write_text(SECRET)
    git(ws, "stash", "-q")
    blob = git(ws, "hash-object", "-w", "--stdin", input=SECRET.encode() + b"# dangling\n")
    git(ws, "remote", "add", "origin", "https://example.com/repo.git")
    git(ws, "pack-refs", "--all")
    git(ws, "update-ref", "refs/remotes/origin/main", old)
    (ws / ".git/ORIG_HEAD").write_text(old + "\n")
    (ws / ".git/FETCH_HEAD").write_text(f"{old}\t\tbranch 'main' of origin\n")
    hook = ws / ".git/hooks/post-checkout"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho hooked\n")
    hook.chmod(0o755)
    secret_blob = git(ws, "rev-parse", f"{old}:pkg/secret.py")
    return {"commit": old, "blob": secret_blob, "dangling": blob}


def test_sanitize_replaces_a_dirty_repository(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    old = dirty_repository(ws)
    assert fresh_repository_problems(ws / ".git")  # the old repository is far from fresh
    sanitize_workspace(ws)
    git_dir = ws / ".git"
    assert fresh_repository_problems(git_dir, full=True) == []
    objects = all_objects(git_dir)
    assert not objects & set(old.values())
    for ref_file in ("packed-refs", "ORIG_HEAD", "FETCH_HEAD", "logs", "hooks", "info"):
        assert not (git_dir / ref_file).exists()
    assert "remote" not in (git_dir / "config").read_text()
    raw = b"".join(p.read_bytes() for p in git_dir.rglob("*") if p.is_file())
    assert b"only the old history" not in raw


def test_git_variables_cannot_redirect_the_fresh_repository(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ws = workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    monkeypatch.setenv("GIT_DIR", str(elsewhere))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(elsewhere / "objects"))
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", str(elsewhere / "objects"))
    fresh_repository(ws)
    assert (ws / ".git/objects").is_dir()
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_OBJECT_DIRECTORY")
    monkeypatch.delenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")
    assert all_objects(elsewhere) == set()


@pytest.mark.parametrize("damage", ["tag", "dangling", "reflog", "alternates", "second-commit"])
def test_problems_are_reported(tmp_path: Path, damage: str) -> None:
    ws = workspace(tmp_path)
    fresh_repository(ws)
    git_dir = ws / ".git"
    if damage == "tag":
        git(ws, "tag", "v0")
    elif damage == "dangling":
        git(ws, "hash-object", "-w", "--stdin", input=SECRET.encode())
    elif damage == "reflog":
        (git_dir / "logs").mkdir()
        (git_dir / "logs/HEAD").write_text("x\n")
    elif damage == "alternates":
        (git_dir / "objects/info").mkdir(exist_ok=True)
        (git_dir / "objects/info/alternates").write_text("/elsewhere/objects\n")
    else:
        git(ws, "commit", "-q", "--allow-empty", "-m", "second")
    assert fresh_repository_problems(git_dir, full=True)


def test_a_git_file_is_replaced(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / ".git").write_text("gitdir: /some/worktree\n")
    fresh_repository(ws)
    assert (ws / ".git").is_dir()
    assert fresh_repository_problems(ws / ".git") == []

"""An interrupted git leaves nothing running that could still write into the repository its
caller is about to remove (a Ctrl-C during a snapshot's commit)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from taskforge import gitcmd
from taskforge.gitcmd import (
    GitError,
    commit_tree,
    fresh_repository,
    fresh_repository_problems,
    git,
    git_env,
)
from taskforge.sanitize.containers import FILE_BYTES, pack_objects


def alive_with(token: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def alive_after(token: str, seconds: float) -> list[int]:
    """`alive_with(token)` once none is left or `seconds` passed: a process killed with
    SIGKILL is gone once the kernel has run it again (git, the leader, is reaped already)."""
    deadline = time.monotonic() + seconds
    while alive_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive_with(token)


def interrupt_after(seconds: float) -> threading.Timer:
    main = threading.main_thread().ident
    timer = threading.Timer(seconds, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    return timer


def slow_alias(token: str) -> list[str]:
    # git runs the alias through a shell: git, a shell and a sleep, like a clone's helpers
    return ["-c", f"alias.slow=!sleep 30 # {token}", "slow"]


def test_an_interrupted_git_is_gone_with_what_it_started_when_the_interrupt_arrives(
        tmp_path: Path) -> None:
    token = f"taskforge-git-{os.getpid()}-{time.monotonic_ns()}"
    timer = interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            git(*slow_alias(token), cwd=tmp_path)
    finally:
        timer.cancel()
    assert alive_after(token, 2) == []


def test_positive_control_subprocess_run_leaves_git_s_children_running(tmp_path: Path) -> None:
    """What `git` did before: subprocess.run kills git alone, without waiting."""
    token = f"taskforge-git-{os.getpid()}-{time.monotonic_ns()}"
    timer = interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            subprocess.run(["git", *slow_alias(token)], cwd=tmp_path, env=git_env(),
                           capture_output=True)
        assert alive_after(token, 2) != []  # the `sleep 30` git's shell started
    finally:
        timer.cancel()
        for pid in alive_with(token):
            os.kill(pid, signal.SIGKILL)


def awkward_tree(root: Path) -> Path:
    """Nested and empty directories, an executable, symlinks (one dangling), an empty file,
    names with spaces, non-ASCII and a leading dash, and names that sort differently as a
    file and as a directory (`a.txt`, `a/`, `a-b`)."""
    for rel, text in {"a.txt": "1\n", "a/b.py": "print(1)\n", "a-b": "", "dir x/ü.txt": "ü\n",
                      "-lead": "x\n", "deep/er/still/f.py": "x = 1\n", "run.sh": "#!/bin/sh\n",
                      ".gitignore": "*.py\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "run.sh").chmod(0o755)
    (root / "empty/dir").mkdir(parents=True)
    os.symlink("a.txt", root / "link")
    os.symlink("nowhere", root / "dangling")
    return root


# A PNG's first bytes: its signature holds CRLF, its first chunk's length NUL bytes.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"


def by_git(tree: Path, into: Path) -> str:
    shutil.copytree(tree, into, symlinks=True)
    return commit_tree(into, into / ".git", "task workspace")


def test_a_fresh_repository_written_in_process_is_the_one_git_writes(tmp_path: Path) -> None:
    tree = awkward_tree(tmp_path / "tree")
    expected = by_git(tree, tmp_path / "git")
    ours = tmp_path / "ours"
    shutil.copytree(tree, ours, symlinks=True)
    assert fresh_repository(ours) == expected  # the same objects, down to the commit id
    assert not (ours / ".git/objects" / expected[:2]).exists()  # ours (one pack), not git's
    packs = sorted(os.listdir(ours / ".git/objects/pack"))
    assert len(packs) == 2 and packs[1] == packs[0][:-len("idx")] + "pack"
    assert git("verify-pack", str(ours / ".git/objects/pack" / packs[0]), cwd=ours) == ""
    assert fresh_repository_problems(ours / ".git", full=True) == []
    assert git("fsck", "--full", "--strict", cwd=ours) == ""
    assert git("status", "--porcelain", "--ignored", cwd=ours) == ""  # the index matches
    assert git("ls-files", "-s", cwd=ours) == git("ls-files", "-s", cwd=tmp_path / "git")
    assert (ours / ".git/config").read_text() == (tmp_path / "git/.git/config").read_text()


def test_objects_past_the_pack_limit_are_left_to_git(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree of more objects than the leak scan decodes from one file is committed by git,
    its objects loose: the same commit."""
    tree = awkward_tree(tmp_path / "tree")
    expected = by_git(tree, tmp_path / "git")
    packed, loose = tmp_path / "packed", tmp_path / "loose"
    for copy in (packed, loose):
        shutil.copytree(tree, copy, symlinks=True)
    assert fresh_repository(packed) == expected
    monkeypatch.setattr(gitcmd, "PACK_LIMIT", 100)
    assert fresh_repository(loose) == expected
    assert os.listdir(loose / ".git/objects/pack") == []  # git's own, loose
    assert (loose / ".git/objects" / expected[:2] / expected[2:]).is_file()
    assert len(os.listdir(packed / ".git/objects/pack")) == 2  # positive control: in process
    assert git("fsck", "--full", "--strict", cwd=loose) == ""


def test_a_second_pack_or_a_stray_file_beside_the_pack_is_a_problem(tmp_path: Path) -> None:
    tree = awkward_tree(tmp_path / "tree")
    for extra in ("pack-0.pack", "pack-0.idx", "tmp_pack_1"):
        ours = tmp_path / extra
        shutil.copytree(tree, ours, symlinks=True)
        fresh_repository(ours)
        assert fresh_repository_problems(ours / ".git") == []  # positive control
        (ours / ".git/objects/pack" / extra).write_bytes(b"")
        assert any("pack files present" in p for p in fresh_repository_problems(ours / ".git"))


def test_objects_compressed_once_are_written_again_as_git_reads_them(tmp_path: Path) -> None:
    """The second repository of a tree takes its objects' compressed bytes from the first
    (`gitcmd._COMPRESSED`); a changed file still gets its own object, and git reads every
    object of both as it wrote them."""
    tree = awkward_tree(tmp_path / "tree")
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(tree, first, symlinks=True)
    shutil.copytree(tree, second, symlinks=True)
    (second / "a.txt").write_text("2\n")
    expected = by_git(second, tmp_path / "git")
    fresh_repository(first)
    assert fresh_repository(second) == expected
    for workspace in (first, second):
        assert git("fsck", "--full", "--strict", cwd=workspace) == ""
    assert git("show", "HEAD:a.txt", cwd=second) == "2"
    # positive control: fsck would tell a wrong cached object (the blob of `a/b.py` made to
    # hold other bytes)
    oid = git("rev-parse", "HEAD:a/b.py", cwd=first)
    kept = gitcmd._COMPRESSED._kept
    saved = kept[bytes.fromhex(oid)]
    kept[bytes.fromhex(oid)] = gitcmd._pack_entry(b"blob", b"bad")
    try:
        third = tmp_path / "third"
        shutil.copytree(tree, third, symlinks=True)
        fresh_repository(third)
        assert git("cat-file", "-p", oid, cwd=third) == "bad"
        with pytest.raises(GitError):
            git("fsck", "--full", "--strict", cwd=third)
    finally:
        kept[bytes.fromhex(oid)] = saved


def test_line_end_and_tool_attributes_still_write_in_process(tmp_path: Path) -> None:
    """A .gitattributes naming only line-end rules and what diff, merge, archive and hosting
    tools read (attrs' `* text=auto eol=lf`, `export-subst`) leaves a tree without a CR byte
    stored as it is: written here, the repository git writes."""
    tree = awkward_tree(tmp_path / "tree")
    (tree / ".gitattributes").write_text("# line ends\n* text=auto eol=lf\n"
                                         ".git_archival.txt export-subst\n*.png binary -diff\n")
    (tree / "a/.gitattributes").write_text("*.py diff=python linguist-generated=true !merge\n")
    # CRLF in a file git's `text=auto` finds binary (a NUL byte): stored as it is
    (tree / "logo.png").write_bytes(PNG)
    expected = by_git(tree, tmp_path / "git")
    ours = tmp_path / "ours"
    shutil.copytree(tree, ours, symlinks=True)
    assert gitcmd._commit_in_process(ours, ours / ".git", "task workspace") == expected
    assert git("fsck", "--full", "--strict", cwd=ours) == ""
    assert git("status", "--porcelain", "--ignored", cwd=ours) == ""


@pytest.mark.parametrize("attributes, text", [
    ("*.txt ident\n", b"$Id: 0123 $\n"),  # git stores `$Id$`
    ("*.txt filter=upper\n", b"a\n"),  # a filter (configured or not: git decides)
    ("x.txt working-tree-encoding=UTF-16\n", "a\n".encode("utf-16")),  # stored as UTF-8
    ("[attr]mine text\n*.txt mine\n", b"a\n"),  # a macro of its own
    ("*.txt eol=lf\n", b"one\r\ntwo\r\n"),  # CRLF under a rule that forces text
    ("* text=auto eol=lf\n", b"one\r\ntwo\r\n"),  # CRLF in a file git finds to be text
    ("* text=auto\n*.txt text\n", PNG),  # text forced on a binary file
    ("* text=auto eol=lf\n*.txt !text\n", PNG),  # unspecified again: eol forces text
], ids=["ident", "filter", "encoding", "macro", "crlf", "auto-crlf", "forced", "unspecified"])
def test_attributes_that_may_change_what_is_stored_are_left_to_git(
        tmp_path: Path, attributes: str, text: bytes) -> None:
    tree = awkward_tree(tmp_path / "tree")
    (tree / ".gitattributes").write_text(attributes)
    (tree / "x.txt").write_bytes(text)
    expected = by_git(tree, tmp_path / "git")
    ours = tmp_path / "ours"
    shutil.copytree(tree, ours, symlinks=True)
    assert gitcmd._commit_in_process(ours, ours / ".git", "task workspace") is None
    assert not (ours / ".git").exists()  # nothing written
    assert fresh_repository(ours) == expected


def test_positive_control_ident_and_crlf_change_the_stored_blob(tmp_path: Path) -> None:
    """Why those trees go to git: the blob it stores is not the file's bytes."""
    for attributes, text in (("*.txt ident\n", b"$Id: 0123 $\n"),
                             ("*.txt eol=lf\n", b"one\r\ntwo\r\n"),
                             ("* text=auto eol=lf\n*.txt !text\n", PNG)):
        tree = tmp_path / attributes.split()[-1].replace("=", "-")
        tree.mkdir()
        (tree / ".gitattributes").write_text(attributes)
        (tree / "x.txt").write_bytes(text)
        commit_tree(tree, tree / ".git", "task workspace")
        stored = git("rev-parse", "HEAD:x.txt", cwd=tree)
        assert git("hash-object", "--no-filters", "x.txt", cwd=tree) != stored


def test_a_tree_git_treats_otherwise_is_left_to_git(tmp_path: Path) -> None:
    """With a .gitattributes, git may store other bytes than the file's (here: CRLF line
    ends, normalized); a `.GIT` directory, or NTFS's names for it, git refuses."""
    tree = awkward_tree(tmp_path / "tree")
    (tree / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (tree / ".gitattributes").write_text("*.txt text\n")
    expected = by_git(tree, tmp_path / "git")
    ours = tmp_path / "ours"
    shutil.copytree(tree, ours, symlinks=True)
    assert fresh_repository(ours) == expected
    # positive control: the file's bytes as they are (what the writer stores) are not the
    # blob git stored
    stored = git("rev-parse", "HEAD:crlf.txt", cwd=ours)
    assert git("hash-object", "--no-filters", "crlf.txt", cwd=ours) != stored
    for name in (".GIT", "git~1", ".git. "):  # refused by git (core.protectNTFS)
        refused = tmp_path / f"refused{len(name)}"
        shutil.copytree(tree, refused, symlinks=True)
        (refused / ".gitattributes").unlink()
        (refused / "x" / name).mkdir(parents=True)
        (refused / "x" / name / "f").write_text("a\n")
        with pytest.raises(GitError, match="adding files failed"):  # as git said before
            fresh_repository(refused)


def test_the_leak_scan_reads_every_object_of_a_fresh_pack(tmp_path: Path) -> None:
    """What `taskforge scan` meets in a workspace's `.git`: the pack's objects, each as git
    stores it, and a pack never past what the scan decodes of one file."""
    tree = awkward_tree(tmp_path / "tree")
    (tree / "a/secret.py").write_text("def answer():\n    return 'only this blob holds it'\n")
    fresh_repository(tree)
    pack = next((tree / ".git/objects/pack").glob("*.pack")).read_bytes()
    ours = {oid: content for oid, _kind, content in pack_objects(pack)}
    listing = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=tree)
    assert set(ours) == set(listing.split())
    assert any(b"only this blob holds it" in content for content in ours.values())
    assert gitcmd.PACK_LIMIT < FILE_BYTES  # else a large tree's pack would be undecided

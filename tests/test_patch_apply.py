"""`apply_patch` applies `diff_texts`'s patches in process: what it writes must be what
`git apply` writes, file for file (bytes, mode, what exists), and whatever git might decide
otherwise must go to git."""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from taskforge.errors import Rejected
from taskforge.patches import _apply_plain, apply_patch, diff_texts

SAMPLES = REPO_ROOT / "sample_repos"


def _tree_state(root: Path) -> dict[str, tuple]:
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        rel = path.relative_to(root).as_posix()
        if stat.S_ISDIR(info.st_mode):
            state[rel] = ("dir",)
        elif stat.S_ISLNK(info.st_mode):
            state[rel] = ("link", os.readlink(path))
        else:
            state[rel] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return state


def _git_apply(workspace: Path, patch: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=workspace,
                          input=patch.encode(), capture_output=True)


def _both(tmp_path: Path, tree: Path, patch: str) -> tuple[bool, dict, dict]:
    """(whether it was applied in process, our tree, git's tree)."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for path in (ours, theirs):
        if path.exists():
            shutil.rmtree(path)
        shutil.copytree(tree, path, symlinks=True)
    in_process = _apply_plain(ours, patch)
    if not in_process:
        apply_patch(ours, patch)
    assert _git_apply(theirs, patch).returncode == 0
    return in_process, _tree_state(ours), _tree_state(theirs)


def _edited(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(lines) + 1)
        choice = rng.random()
        if choice < 0.4 and lines:
            del lines[min(at, len(lines) - 1):min(at, len(lines) - 1) + rng.randint(1, 5)]
        elif choice < 0.8:
            lines[at:at] = [f"    added_{rng.randrange(1000)} = {at}" for _ in range(rng.randint(1, 3))]
        elif lines:
            lines[min(at, len(lines) - 1)] = "    pass  # replaced"
    new = "\n".join(lines)
    return new.rstrip("\n") if rng.random() < 0.15 else new


def test_in_process_writes_what_git_writes_on_many_real_patches(tmp_path: Path) -> None:
    rng = random.Random(7)
    tree = tmp_path / "tree"
    files = sorted(p for p in SAMPLES.rglob("*.py") if "__pycache__" not in p.parts)[:60]
    for file in files:
        target = tree / file.relative_to(SAMPLES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)
    (tree / files[0].relative_to(SAMPLES)).chmod(0o755)
    (tree / "no-newline.py").write_text("a = 1\nb = 2\nc = 3")
    (tree / "tiny.py").write_text("x = 1\n")
    (tree / "lonely" / "deeper").mkdir(parents=True)
    (tree / "lonely" / "deeper" / "only.py").write_text("alone = True\n")
    texts = {p.relative_to(tree).as_posix(): p.read_text() for p in sorted(tree.rglob("*.py"))}
    paths = sorted(texts)
    applied = 0
    for round_ in range(40):
        chosen = rng.sample(paths, rng.randint(1, 4))
        changes: dict[str, tuple[str | None, str | None]] = {}
        for path in chosen:
            kind = rng.random()
            if kind < 0.15:
                changes[path] = (texts[path], None)  # deleted (its directory may empty)
            else:
                changes[path] = (texts[path], _edited(texts[path], rng))
        if round_ % 3 == 0:
            changes[f"new_pkg_{round_}/deep/created.py"] = (None, "def made():\n    return 1\n")
        if round_ % 7 == 0:  # its directories emptied: git removes them
            changes["lonely/deeper/only.py"] = (texts["lonely/deeper/only.py"], None)
        if round_ % 5 == 0:
            changes["no-newline.py"] = (texts["no-newline.py"], "a = 1\nb = 20\nc = 3\n")
        modes = {f"new_pkg_{round_}/deep/created.py": "100755"} if round_ % 2 else {}
        patch = diff_texts(changes, modes)
        in_process, ours, theirs = _both(tmp_path, tree, patch)
        assert ours == theirs, patch[:2000]
        applied += in_process
    assert applied >= 35  # nearly all of diff_texts' own patches are applied in process


def _offset_patch(tree: Path) -> str:
    """A patch whose hunk matches 2 lines below where it says (git applies it there)."""
    (tree / "m.py").write_text("".join(f"line {i}\n" for i in range(30)))
    patch = diff_texts({"m.py": ((tree / "m.py").read_text(),
                                 (tree / "m.py").read_text().replace("line 15\n", "LINE 15\n"))})
    (tree / "m.py").write_text("extra\nextra\n" + (tree / "m.py").read_text())
    return patch


def test_what_git_would_decide_goes_to_git(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    offset = _offset_patch(tree)
    in_process, ours, theirs = _both(tmp_path, tree, offset)
    assert not in_process and ours == theirs
    assert "LINE 15" in ours["m.py"][2].decode()
    # Positive control: applied where the hunk says, the offset patch changes another line.
    lines = (tree / "m.py").read_text().split("\n")
    assert lines[14] != "line 15"

    # A .gitattributes on the way: git may convert what it writes.
    (tree / "pkg").mkdir()
    (tree / "pkg" / "a.py").write_text("x = 1\n")
    edit = diff_texts({"pkg/a.py": ("x = 1\n", "x = 2\n")})
    assert _apply_plain_on_copy(tmp_path, tree, edit)
    (tree / "pkg" / ".gitattributes").write_text("*.py text eol=crlf\n")
    assert not _apply_plain_on_copy(tmp_path, tree, edit)
    (tree / "pkg" / ".gitattributes").unlink()

    # A path through a symbolic link, a name git would quote, a file that is not there.
    (tree / "linked").symlink_to("pkg", target_is_directory=True)
    assert not _apply_plain_on_copy(tmp_path, tree, diff_texts({"linked/a.py": ("x = 1\n", "y\n")}))
    (tree / "sp ace.py").write_text("x = 1\n")
    assert not _apply_plain_on_copy(tmp_path, tree, diff_texts({"sp ace.py": ("x = 1\n", "y\n")}))
    assert not _apply_plain_on_copy(tmp_path, tree, diff_texts({"gone.py": ("x = 1\n", "y\n")}))
    # A creation over an existing file, a deletion of a file that has more.
    assert not _apply_plain_on_copy(tmp_path, tree, diff_texts({"pkg/a.py": (None, "y\n")}))
    assert not _apply_plain_on_copy(tmp_path, tree, diff_texts({"pkg/a.py": ("x = 1\nz\n", None)}))


def _apply_plain_on_copy(tmp_path: Path, tree: Path, patch: str) -> bool:
    copy = tmp_path / "probe"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree, copy, symlinks=True)
    before = _tree_state(copy)
    done = _apply_plain(copy, patch)
    if not done:
        assert _tree_state(copy) == before  # nothing written when it defers
    return done


def test_a_patch_that_does_not_apply_is_rejected_in_gits_words(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with pytest.raises(Rejected) as caught:
        apply_patch(tmp_path, diff_texts({"a.py": ("x = 2\n", "x = 3\n")}))
    assert caught.value.reason == "patch-does-not-apply"
    assert "patch failed" in str(caught.value) or "does not apply" in str(caught.value)
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_a_hunk_without_trailing_context_applies_only_at_the_end(tmp_path: Path) -> None:
    """git's `match_end`: a change at the end of a file, the file since grown below it, is
    refused, though its lines are where the hunk says."""
    text = "".join(f"line {i}\n" for i in range(10))
    patch = diff_texts({"a.py": (text, text.replace("line 9\n", "LINE 9\n"))})
    assert patch.rstrip("\n").endswith("+LINE 9")  # no trailing context
    (tmp_path / "a.py").write_text(text + "grown\n")
    # Positive control: its lines are where it says (an applier without git's rule takes it).
    assert "line 9\n" in (tmp_path / "a.py").read_text().splitlines(keepends=True)[9]
    assert _git_apply(tmp_path, patch).returncode != 0
    with pytest.raises(Rejected):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "a.py").read_text() == text + "grown\n"
    # The same at the top: a one-line file's change, the file since grown.
    small = diff_texts({"b.py": ("x = 1\n", "x = 2\n")})
    (tmp_path / "b.py").write_text("x = 1\nmore\n")
    assert _git_apply(tmp_path, small).returncode != 0
    with pytest.raises(Rejected):
        apply_patch(tmp_path, small)
    assert (tmp_path / "b.py").read_text() == "x = 1\nmore\n"

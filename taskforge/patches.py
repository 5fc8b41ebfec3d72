"""Unified diffs between two states of a tree, and applying them as `git apply` does."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import re
import stat
import subprocess
from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from taskforge.errors import Rejected
from taskforge.fileio import write_new
from taskforge.model import TaskRecord

REGULAR = "100644"


def _lines(text: str) -> list[str]:
    """Lines with their "\\n", split as git splits them (str.splitlines also splits at form
    feeds and other separators, which would give hunks that git applies differently)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last "\n": empty when the text ends in one
    return lines if lines[-1] else lines[:-1]


def diff_texts(changes: Mapping[str, tuple[str | None, str | None]],
               modes: Mapping[str, str] | None = None) -> str:
    """A git-style unified diff for {path: (old_text, new_text)}, paths in sorted order. None
    on one side: the file does not exist there (a deletion or a creation, with its mode from
    `modes`, a regular file by default)."""
    chunks: list[str] = []
    for path in sorted(changes):
        old, new = changes[path]
        if old == new:
            continue
        mode = (modes or {}).get(path, REGULAR) if old is None or new is None else ""
        chunks.append(_section(path, old, new, mode))
    return "".join(chunks)


# A task's confirmation diffs the same file twice or more (its deletion patch, the patch that
# also deletes its hidden tests): a big module's difflib was ~1 ms each time.
@functools.lru_cache(maxsize=32)
def _section(path: str, old: str | None, new: str | None, mode: str) -> str:
    """One file's section of `diff_texts` (`mode`: a created or deleted file's)."""
    header = f"diff --git a/{path} b/{path}\n"
    if old is None or new is None:
        header += f"{'new' if old is None else 'deleted'} file mode {mode}\n"
    lines = difflib.unified_diff(_lines(old or ""), _lines(new or ""),
                                 fromfile="/dev/null" if old is None else f"a/{path}",
                                 tofile="/dev/null" if new is None else f"b/{path}", n=3)
    return header + "".join(line if line.endswith("\n")
                            else line + "\n\\ No newline at end of file\n" for line in lines)


def _sections(patch: str) -> list[str]:
    """A git-style diff cut into its files' sections (each from its `diff --git` line)."""
    sections: list[str] = []
    for line in _lines(patch):
        # Only a section header starts with "diff": hunk lines start with " ", "+", "-", "@", "\\".
        if line.startswith("diff --git ") or not sections:
            sections.append(line)
        else:
            sections[-1] += line
    return sections


def combined(*patches: str) -> str:
    """Git-style diffs of `diff_texts` over disjoint sets of paths as one: their sections in
    path order, as `diff_texts` gives them for all the changes together (without diffing
    any file again). A path in two of them is an error."""
    by_path: dict[str, str] = {}
    for patch in patches:
        for section in _sections(patch):
            header = section.split("\n", 1)[0][len("diff --git "):]  # "a/PATH b/PATH"
            path = header[2:2 + (len(header) - 5) // 2]
            if not section.startswith("diff --git ") or header != f"a/{path} b/{path}" \
                    or path in by_path:
                raise ValueError(f"not disjoint diff_texts sections: {header[:200]!r}")
            by_path[path] = section
    return "".join(by_path[path] for path in sorted(by_path))


def created_files(patch: str) -> list[str]:
    """The files a git-style diff creates: for a task's `test_patch`, its hidden tests."""
    created = []
    for section in _sections(patch):
        header = section.split("\n", 4)
        if len(header) > 3 and header[1].startswith("new file mode ") and header[3].startswith("+++ b/"):
            created.append(header[3][len("+++ b/"):])
    return created


def without_files(patch: str, paths: Collection[str]) -> str:
    """`patch` without the sections of `paths` (as diff_texts names them)."""
    headers = {f"diff --git a/{p} b/{p}" for p in paths}
    return "".join(s for s in _sections(patch) if s.split("\n", 1)[0] not in headers)


def source_deletion(record: TaskRecord) -> str:
    """A task record's `deletion_patch` without the test files it hides (the ones its
    `test_patch` creates): the deletion of code, which the leak scan fingerprints."""
    return without_files(record["deletion_patch"], created_files(record.get("test_patch") or ""))


_GIT_HEADER = re.compile(r"diff --git a/(.+) b/(.+)")
_NAMED = re.compile(r"(?:diff --git a/(.+) b/(.+)|(?:---|\+\+\+) [ab]/(.+)"
                    r"|(?:rename|copy) (?:from|to) (.+))")
_NEW_FILE = ("new file mode 100644", "new file mode 100755")


def named_paths(patch: str) -> set[str]:
    """Every path a git-style diff names, on either side and in any header (`diff --git`,
    `---`/`+++`, renames and copies): whatever applying it may touch."""
    named = set()
    for line in _lines(patch):
        match = _NAMED.fullmatch(line.rstrip("\n"))
        if match:
            named.update(name for name in match.groups() if name)
    return named


def plain_creations(patch: str) -> list[str] | None:
    """The files `patch` creates when that is all it does: each section a new regular or
    executable text file, the same path in its `diff --git` and `+++` lines, inside the tree;
    None for anything else (a rename or copy, a mode change, a binary or edited file, a
    section whose names differ: `git apply` writes the `b/` one)."""
    created = []
    for section in _sections(patch):
        lines = section.split("\n")
        lines = lines[:-1] if lines[-1] == "" else lines
        header = _GIT_HEADER.fullmatch(lines[0])
        if header is None or header[1] != header[2] or len(lines) < 2 or lines[1] not in _NEW_FILE:
            return None
        path = header[1]
        if path.startswith("/") or ".." in PurePosixPath(path).parts:
            return None
        if len(lines) > 2:  # else an empty file
            body = lines[4:]
            if lines[2:4] != ["--- /dev/null", f"+++ b/{path}"] or not body \
                    or any(not line or line[0] not in "@+\\" for line in body):
                return None
        created.append(path)
    return created


def apply_patch(workspace: Path, patch: str) -> None:
    """Apply `patch` to the files of `workspace` as `git apply` does; raises Rejected if it
    does not apply. A patch of the shape `diff_texts` makes, that applies exactly where its
    hunks say, is applied here (`_apply_plain`); anything else goes to `git apply`."""
    if not patch or _apply_plain(workspace, patch):
        return
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=workspace,
                          input=patch.encode(), capture_output=True)
    if proc.returncode != 0:
        raise Rejected("patch-does-not-apply", proc.stderr.decode(errors="replace").strip()[:200])



# Applying in process. A task's verification applies two or three patches (the deletion, the
# reference, the hidden tests), each a `git apply` process: ~2.5 ms apiece, ~5 ms of boltons'
# ~100 ms task. The patches are `diff_texts`'s own, so the plain case is applied here, by
# git's rules for it (apply.c): hunks in order, each where its new-side line number puts it
# in the image so far, a hunk from line 0 or 1 only at the top, one without trailing context
# only at the end, no context reduced; a created file must not exist, a deleted one must
# match whole and its emptied directories go; a file is written as a new one, mode 0666 or
# 0777 less the umask (`try_create_file`). What git might do otherwise is left to git, which
# also words its own refusal: a hunk that matches elsewhere (git finds it at an offset) or
# nowhere, a header besides the plain ones, a name git would quote or that leaves the tree,
# a path through a symbolic link, a file that is not regular, a .gitattributes on the way.

_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._+@=,~%-]+(?:/[A-Za-z0-9._+@=,~%-]+)*")


class _NotPlain(Exception):
    """The patch, or the tree it applies to, is one `git apply` decides."""


@dataclasses.dataclass(frozen=True)
class _Change:
    path: str
    new: bytes | None  # None: the file is deleted
    created: bool
    executable: bool


def _apply_plain(workspace: Path, patch: str) -> bool:
    """Apply `patch` here and return True, or return False with nothing written."""
    try:
        changes = _plain_changes(workspace, patch.encode())
    except _NotPlain:
        return False
    for change in changes:
        target = workspace / change.path
        if not change.created:
            target.unlink()
        if change.new is None:
            _remove_emptied(workspace, target.parent)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        write_new(target, change.new, mode=0o777 if change.executable else 0o666,
                  exclusive=True)
    return True


def _plain_changes(workspace: Path, patch: bytes) -> list[_Change]:
    """What applying `patch` writes, every check done first; _NotPlain where git decides."""
    if not patch.endswith(b"\n") or (workspace / ".git" / "info" / "attributes").exists():
        raise _NotPlain
    sections: list[list[bytes]] = []
    for line in patch[:-1].split(b"\n"):
        if line.startswith(b"diff --git "):
            sections.append([line])
        elif not sections:
            raise _NotPlain
        else:
            sections[-1].append(line)
    changes: list[_Change] = []
    for lines in sections:
        path, mode, deleted, hunks = _plain_section(lines)
        if any(change.path == path for change in changes):
            raise _NotPlain
        file = _plain_path(workspace, path)
        if mode is not None:
            if os.path.lexists(file):
                raise _NotPlain
            old, executable = b"", mode == "100755"
        else:
            try:
                info = os.lstat(file)
            except OSError:
                raise _NotPlain from None
            if not stat.S_ISREG(info.st_mode):
                raise _NotPlain
            with open(file, "rb") as f:
                old = f.read()
            executable = bool(info.st_mode & stat.S_IXUSR)
        new = _patched(old, hunks)
        if deleted and new:
            raise _NotPlain  # git: "removal patch leaves file contents"
        changes.append(_Change(path, None if deleted else new, mode is not None, executable))
    return changes


def _plain_section(lines: list[bytes]) -> tuple[str, str | None, bool, list[bytes]]:
    """(path, the mode of a created file or None, whether the file is deleted, its hunk
    lines) of one file's section, as `diff_texts` writes it."""
    try:
        name = lines[0][len(b"diff --git a/"):].decode("ascii")
    except UnicodeDecodeError:
        raise _NotPlain from None
    path = name[:(len(name) - 3) // 2]
    if name != f"{path} b/{path}" or not _PLAIN_NAME.fullmatch(path):
        raise _NotPlain
    mode, deleted, at = None, False, 1
    if at < len(lines) and lines[at] in (b"new file mode 100644", b"new file mode 100755"):
        mode, at = lines[at][-6:].decode(), at + 1
    elif at < len(lines) and lines[at] in (b"deleted file mode 100644",
                                           b"deleted file mode 100755"):
        deleted, at = True, at + 1
    old_name = b"--- /dev/null" if mode else b"--- a/" + path.encode()
    new_name = b"+++ /dev/null" if deleted else b"+++ b/" + path.encode()
    if lines[at:at + 2] != [old_name, new_name] or len(lines) < at + 3:
        raise _NotPlain  # an empty file's creation or deletion has no hunk: git's to do
    return path, mode, deleted, lines[at + 2:]


def _plain_path(workspace: Path, path: str) -> Path:
    """`workspace / path`, where no part of `path` is `.`, `..` or git's, none of its
    directories is a symbolic link or not a directory, and no .gitattributes file on its way
    (or in the workspace's top) may change what git writes."""
    parts = path.split("/")
    if any(part in (".", "..") or part.lower().startswith(".git") for part in parts):
        raise _NotPlain
    directory = workspace
    for part in ["", *parts[:-1]]:
        directory = directory / part if part else directory
        if os.path.lexists(directory / ".gitattributes"):
            raise _NotPlain
        try:
            info = os.lstat(directory)
        except FileNotFoundError:
            break  # a created file's new directories
        if not stat.S_ISDIR(info.st_mode):
            raise _NotPlain
    return workspace / path


def _patched(old: bytes, hunks: list[bytes]) -> bytes:
    """`old` with `hunks` applied where git applies them, or _NotPlain."""
    image = old.split(b"\n")
    image = [line + b"\n" for line in image[:-1]] + ([image[-1]] if image[-1] else [])
    at = 0
    while at < len(hunks):
        header = _HUNK.fullmatch(hunks[at])
        if header is None:
            raise _NotPlain
        old_pos, old_count = int(header[1]), 1 if header[2] is None else int(header[2])
        new_pos, new_count = int(header[3]), 1 if header[4] is None else int(header[4])
        before: list[bytes] = []
        after: list[bytes] = []
        kinds: list[int] = []
        at += 1
        while at < len(hunks) and not hunks[at].startswith(b"@@"):
            line = hunks[at]
            at += 1
            if line.startswith(b"\\"):
                if line != b"\\ No newline at end of file" or not kinds:
                    raise _NotPlain
                for side in ((before,) if kinds[-1] == ord("-") else
                             (after,) if kinds[-1] == ord("+") else (before, after)):
                    if not side or not side[-1].endswith(b"\n"):
                        raise _NotPlain
                    side[-1] = side[-1][:-1]
                continue
            if not line or line[0] not in b" +-":
                raise _NotPlain
            kinds.append(line[0])
            if line[0] in b" -":
                before.append(line[1:] + b"\n")
            if line[0] in b" +":
                after.append(line[1:] + b"\n")
        if len(before) != old_count or len(after) != new_count or not kinds:
            raise _NotPlain
        changed = [i for i, kind in enumerate(kinds) if kind != ord(" ")]
        trailing = len(kinds) - 1 - changed[-1] if changed else len(kinds)
        if old_pos == 0 or old_pos == 1:  # git: such a hunk matches only at the top
            start = 0
        elif not trailing:  # and one without trailing context only at the end
            start = len(image) - len(before)
        else:
            start = new_pos - 1 if new_pos else 0
        if not trailing and start + len(before) != len(image):
            raise _NotPlain
        if start < 0 or image[start:start + len(before)] != before:
            raise _NotPlain  # git would look elsewhere, or refuse
        image[start:start + len(before)] = after
    return b"".join(image)


def _remove_emptied(workspace: Path, directory: Path) -> None:
    """The directories a deletion left empty, up to the workspace (git removes them too)."""
    while directory != workspace and directory.is_relative_to(workspace):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent

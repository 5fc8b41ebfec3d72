"""Unified diffs between two states of a tree, and applying them with `git apply`."""

from __future__ import annotations

import difflib
import functools
import re
import subprocess
from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from taskforge.errors import Rejected
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
    """Apply `patch` to the files of `workspace`; raises Rejected if it does not apply."""
    if not patch:
        return
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=workspace,
                          input=patch.encode(), capture_output=True)
    if proc.returncode != 0:
        raise Rejected("patch-does-not-apply", proc.stderr.decode(errors="replace").strip()[:200])

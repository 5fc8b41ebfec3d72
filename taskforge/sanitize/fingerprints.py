"""Fingerprints of deleted code: what only the deleted code contains.

A fingerprint is a byte string from the deleted lines that occurs nowhere in the remaining
tree (as a substring of any file's bytes, which is how the scanner searches), so a clean
task workspace has zero hits by construction and a hit anywhere is residue. Kinds:

- `line`: a deleted source line, stripped, of useful length;
- `block`: two or three consecutive deleted lines verbatim, where no single one of them
  is distinctive (a verbatim copy of the original still contains them);
- `ident`: an identifier of the deleted lines (a name still used at call sites is in the
  remaining tree, so it is not one);
- `literal`: the text of a string literal (each piece of an f-string);
- code fingerprints: (qualified name, signature) of each code object whose compiled form
  changed, which finds the original body in bytecode even when every line of it also
  occurs elsewhere; for Java, (`java:CLASS#METHOD`, parameter types) of each method whose
  body changed, found in any class file whose method of that name and parameters has more
  code than a stub (`classfile`).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import difflib
import functools
import io
import keyword
import math
import os
import re
import tokenize
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from taskforge.artifacts import VCS_DIRS, match_dir, match_file
from taskforge.sanitize.bytecode import signatures
from taskforge.sanitize.javasource import deleted_methods
from taskforge.sanitize.jssource import SUFFIXES as JS_SUFFIXES
from taskforge.sanitize.jssource import tokens as js_tokens

MIN_LINE = 12  # characters of a stripped line
MIN_IDENT = 6
MIN_LITERAL = 5
MIN_BLOCK = 16  # non-blank characters of a block
FEW_LINES = 3  # below this many distinctive lines, blocks may also hold those lines

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(
    r"""(?P<prefix>[rRbBuUfF]{0,2})(?P<q>"|')(?P<body>(?:[^"'\\\n]|\\.|(?!(?P=q))["'])*)(?P=q)""")
_PREFIX = re.compile(r"[A-Za-z]*")
_FIELD = re.compile(r"\{[^{}]*\}")
_COMMON = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | {
    "self", "cls", "NotImplementedError"}
# JavaScript's standard globals and the members every program uses: in the remaining code or
# in any library, no sign of the deleted code.
_JS_WORDS = """
    Object Array String Number Boolean Symbol BigInt Promise Error TypeError RangeError
    SyntaxError Reflect Proxy WeakMap WeakSet RegExp globalThis console process require
    module exports arguments length prototype constructor toString valueOf Iterable
    Iterator Record Partial Readonly
"""
_JS_COMMON = frozenset(_JS_WORDS.split())


@dataclass(frozen=True, order=True)
class Fingerprint:
    kind: str  # line | block | ident | literal
    text: str


@dataclass(frozen=True)
class Copy:
    """Deleted code the remaining tree still holds: `lines` of a deleted run of `of` code
    lines (`_code_lines`: blank and comment lines aside), consecutive and verbatim
    (indentation and doctest prompts aside), in `path`."""

    path: str
    lines: int
    of: int

    def __str__(self) -> str:
        return f"{self.path} holds {self.lines} of the {self.of} deleted lines, verbatim"


@dataclass(frozen=True)
class Fingerprints:
    """Everything the scanner looks for, for one task."""

    texts: tuple[Fingerprint, ...] = ()
    code: tuple[tuple[str, str], ...] = ()  # (co_qualname, code_signature)
    # Where the remaining tree still holds deleted code verbatim (`copied_in_tree`): what
    # is there is no fingerprint, so no scan can find it; such a task is no task.
    copied: Copy | None = field(default=None, compare=False)
    _search: tuple[bytes, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        patterns = sorted({f.text.encode("utf-8", "surrogatepass") for f in self.texts},
                          key=lambda b: (len(b), b))
        minimal: list[bytes] = []
        for p in patterns:  # one that contains another is found wherever that one is
            if not any(q in p for q in minimal):
                minimal.append(p)
        object.__setattr__(self, "_search", tuple(minimal))

    def __len__(self) -> int:
        return len(self.texts) + len(self.code)

    @property
    def search_set(self) -> tuple[bytes, ...]:
        """The fewest patterns whose occurrences cover every text fingerprint's."""
        return self._search

    def code_map(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for qualname, sig in self.code:
            out.setdefault(qualname, set()).add(sig)
        return out

    def summary(self) -> dict[str, int]:
        counts = {k: 0 for k in ("line", "block", "ident", "literal", "code")}
        for f in self.texts:
            counts[f.kind] += 1
        counts["code"] = len(self.code)
        return counts

    def without(self, texts: Iterable[str]) -> Fingerprints:
        drop = set(texts)
        return Fingerprints(tuple(f for f in self.texts if f.text not in drop), self.code)

    def to_json(self) -> dict[str, list]:
        return {"texts": [[f.kind, f.text] for f in self.texts], "code": [list(c) for c in self.code]}

    @classmethod
    def from_json(cls, data: Mapping[str, list]) -> Fingerprints:
        return cls(tuple(Fingerprint(k, t) for k, t in data.get("texts", [])),
                   tuple((q, s) for q, s in data.get("code", [])))


def _as_text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value


def deleted_runs(original: str, task: str | None) -> list[tuple[int, list[str]]]:
    """Runs of consecutive original lines (with their line ends) absent from the task text,
    each with the 1-based number of its first line."""
    old = original.splitlines(keepends=True)
    if task is None:
        return [(1, old)] if old else []
    new = task.splitlines(keepends=True)
    # A deletion is local: the lines both texts start and end with are matched as they
    # are, and only the middle is diffed (thousands of lines otherwise, for every task).
    start, shortest = 0, min(len(old), len(new))
    while start < shortest and old[start] == new[start]:
        start += 1
    end = 0
    while end < shortest - start and old[-1 - end] == new[-1 - end]:
        end += 1
    runs: list[tuple[int, list[str]]] = []
    matcher = difflib.SequenceMatcher(None, old[start:len(old) - end], new[start:len(new) - end],
                                      autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            runs.append((start + i1 + 1, old[start + i1:start + i2]))
    return runs


def _useful_ident(word: str) -> bool:
    """Long enough, and not a builtin, keyword or data-model (`__dunder__`) name."""
    return len(word) >= MIN_IDENT and word not in _COMMON and not (
        word.startswith("__") and word.endswith("__"))


def _useful_literal(text: str) -> bool:
    return (len(text.strip()) >= MIN_LITERAL and sum(c.isalnum() for c in text) >= 3
            and "\0" not in text)


def _string_pieces(token: str) -> set[str]:
    """The texts a string literal token holds: its value (line by line when it spans lines;
    each constant piece of an f-string) and, when escapes change it, its source form."""
    prefix = _PREFIX.match(token).group().lower()  # type: ignore[union-attr]
    rest = token[len(prefix):]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    body = rest[len(quote):len(rest) - len(quote)] if len(rest) >= 2 * len(quote) else ""
    return _literal_pieces(_FIELD.split(body) if "f" in prefix else [body],
                           escapes="r" not in prefix)


def _literal_pieces(pieces: Iterable[str], escapes: bool = True) -> set[str]:
    """The useful texts of a literal's pieces (between quotes, fields, substitutions): each
    as written and, when escapes change it, its value; line by line when it spans lines."""
    found: set[str] = set()
    for piece in pieces:
        values = {piece}
        if "\\" in piece and escapes:  # the value a compiled form would hold
            # JavaScript's escapes are Python's but for a few (`\u{...}`: no value, the
            # piece as written stays); one Python calls invalid (`\``) is no warning here
            with contextlib.suppress(SyntaxError, ValueError), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values.add(ast.literal_eval('"""' + piece.replace('"', '\\"') + '"""'))
        for value in values:
            found |= {ln.strip() for ln in value.splitlines()} if "\n" in value else {value}
    return {p for p in found if _useful_literal(p)}


@functools.lru_cache(maxsize=16)  # the same original module serves many candidates
def _python_tokens(text: str) -> tuple[tokenize.TokenInfo, ...] | None:
    try:
        return tuple(t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                     if t.type in (tokenize.NAME, tokenize.STRING))
    except (tokenize.TokenError, SyntaxError):
        return None


def _strip_comment(line: str) -> str:
    """`line` without a trailing `#` or `//` comment outside quotes (other languages)."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            if c == quote and line[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#" or line.startswith("//", i):
            return line[:i]
    return line


def _candidates(path: str, original: str, runs: list[tuple[int, list[str]]]
                ) -> set[Fingerprint]:
    found: set[Fingerprint] = set()
    deleted_rows: set[int] = set()
    for first, run in runs:
        deleted_rows |= set(range(first, first + len(run)))
        for raw in run:
            line = raw.strip()
            if len(line) >= MIN_LINE and _IDENT.search(line) and "\0" not in line:
                found.add(Fingerprint("line", line))
    tokens = _python_tokens(original) if path.endswith((".py", ".pyi")) else None
    if tokens is not None:  # the names and strings of the code; comments are prose
        for tok in tokens:
            if not any(row in deleted_rows for row in range(tok.start[0], tok.end[0] + 1)):
                continue
            if tok.type == tokenize.NAME:
                if _useful_ident(tok.string):
                    found.add(Fingerprint("ident", tok.string))
            else:
                found |= {Fingerprint("literal", p) for p in _string_pieces(tok.string)}
        return found
    js = js_tokens(path, original) if path.endswith(JS_SUFFIXES) else None
    if js is not None:  # likewise from tree-sitter's grammar (see sanitize.jssource)
        for token in js:
            if not any(row in deleted_rows for row in range(token.first_row,
                                                            token.last_row + 1)):
                continue
            if token.kind == "ident":
                if _useful_ident(token.pieces[0]) and token.pieces[0] not in _JS_COMMON:
                    found.add(Fingerprint("ident", token.pieces[0]))
            else:
                found |= {Fingerprint("literal", p)
                          for p in _literal_pieces(token.pieces, token.escapes)}
        return found
    for _first, run in runs:
        for raw in run:
            code = _strip_comment(raw)
            for word in _IDENT.findall(code):
                if _useful_ident(word):
                    found.add(Fingerprint("ident", word))
            for m in _STRING.finditer(code):
                found |= {Fingerprint("literal", p) for p in _string_pieces(m.group())}
    return found


def _blocks(runs: list[tuple[int, list[str]]], distinctive: set[str]) -> set[Fingerprint]:
    """Windows of 2-3 deleted lines, verbatim, none of whose lines is distinctive alone; when
    fewer than `FEW_LINES` lines are, every window: then a copy of the deleted code still
    holds several fingerprints, which a library sharing one common line does not."""
    found: set[Fingerprint] = set()
    few = len(distinctive) < FEW_LINES
    for _first, run in runs:
        for size in (2, 3):
            for i in range(len(run) - size + 1):
                window = run[i:i + size]
                if not few and any(ln.strip() in distinctive for ln in window):
                    continue
                if any(not ln.strip() for ln in window):
                    continue
                text = "".join(window).lstrip().rstrip("\r\n")
                if sum(not c.isspace() for c in text) >= MIN_BLOCK and "\0" not in text:
                    found.add(Fingerprint("block", text))
    return found


def absent_from(candidates: Iterable[bytes], corpus: Iterable[bytes] | bytes) -> set[bytes]:
    """The candidates that occur in no corpus text (substring test, shortest first: a
    candidate containing a known-absent one is absent without another search). `corpus`:
    the texts, or already joined with NUL bytes."""
    blob = corpus if isinstance(corpus, bytes) else b"\0".join(corpus)
    absent: list[bytes] = []
    for cand in sorted(set(candidates), key=lambda b: (len(b), b)):
        if any(a in cand for a in absent) or cand not in blob:
            absent.append(cand)
    return set(absent)


def fingerprint_deletion(original_texts: Mapping[str, str | bytes],
                         task_texts: Mapping[str, str | bytes]) -> Fingerprints:
    """Fingerprints of what `original_texts` (path -> original content of each changed file)
    lost on the way to `task_texts` (path -> content of every file of the task tree: the
    remaining tree, artifacts aside; see `read_tree`)."""
    runs: list[tuple[int, list[str]]] = []
    candidates: set[Fingerprint] = set()
    code: set[tuple[str, str]] = set()
    for path in sorted(original_texts):
        original = _as_text(original_texts[path])
        task = task_texts.get(path)
        task_text = None if task is None else _as_text(task)
        file_runs = deleted_runs(original, task_text)
        runs += file_runs
        candidates |= _candidates(path, original, file_runs)
        if path.endswith(".py"):
            code |= signatures(original) - (signatures(task_text) if task_text else set())
        elif path.endswith(".java"):
            # the methods whose body changed, named as their class files name them
            code |= deleted_methods(_as_bytes(original_texts[path]),
                                    None if task is None else _as_bytes(task))
    corpus = [_as_bytes(v) for v in task_texts.values()]
    blob = b"\0".join(corpus)
    absent = absent_from((_as_bytes(c.text) for c in candidates), blob)
    texts = {c for c in candidates if _as_bytes(c.text) in absent}
    lines = {c.text for c in texts if c.kind == "line"}
    blocks = _blocks(runs, lines)
    absent_blocks = absent_from((_as_bytes(b.text) for b in blocks), blob)
    texts |= {b for b in blocks if _as_bytes(b.text) in absent_blocks}
    return Fingerprints(tuple(sorted(texts)), tuple(sorted(code)),
                        copied_in_tree(runs, task_texts, blob))


COPY_MIN = 3  # deleted lines: fewer than this, consecutive, are no copy but an idiom...
COPY_MOST = 0.8  # ...and a copy holds this share of a deleted run at least (a sibling that
# shares half its lines is code to learn from, as a project's neighbouring code always is)


def copied_in_tree(runs: list[tuple[int, list[str]]], task_texts: Mapping[str, str | bytes],
                   blob: bytes | None = None) -> Copy | None:
    """The longest verbatim copy, in any one file of the remaining tree (`task_texts`), of
    a deleted run: COPY_MOST of its code lines and COPY_MIN at least, consecutive,
    indentation aside; None where there is none. A module that carries a copy of another's
    class (boltons' urlutils holds dictutils' OrderedMultiDict) leaves every deleted line of
    its methods in the tree: no line is a fingerprint then (each is found elsewhere,
    `fingerprint_deletion`), and the agent copies the answer; so does a sibling method with
    the very same body (cachetools' LRUCache.popitem and FIFOCache.popitem). Siblings that
    share some lines are no copy. `blob`: the tree's texts joined, to rule most runs out at
    once."""
    if blob is None:
        blob = b"\0".join(_as_bytes(v) for v in task_texts.values())
    found: Copy | None = None
    for _first, run in runs:
        body = _code_lines(run)
        need = max(COPY_MIN, math.ceil(COPY_MOST * len(body)))
        if len(body) < need:
            continue
        there = {ln for ln in set(body) if ln.encode("utf-8", "surrogatepass") in blob}
        if sum(ln in there for ln in body) < need:
            continue  # too few of its lines are anywhere in the tree (most deletions)
        for path, text in task_texts.items():
            longest = _longest_common_run(body, _file_code_lines(text))
            if longest >= need and (found is None or longest > found.lines):
                found = Copy(path, longest, len(body))
    return found


_PROMPT = re.compile(r"^(?:>>>|\.\.\.)(?: |$)")


def _code_lines(lines: Iterable[str]) -> list[str]:
    """`lines` as a copy is compared: stripped, a doctest's `>>> `/`... ` prompt off (the
    code in a docs page or a docstring), comment lines and blank ones left out (prose: a copy
    that says where it comes from is still one)."""
    out = []
    for line in lines:
        line = _PROMPT.sub("", line.strip()).strip()
        if line and not line.startswith(("#", "//")):
            out.append(line)
    return out


@functools.lru_cache(maxsize=4096)
def _file_code_lines(text: str | bytes) -> tuple[str, ...]:
    """`_code_lines` of a file of the tree. The snapshot's tree is the same for each task of
    it (the same bytes objects, whose hash Python keeps): a run that checks it file by file
    reads each once per process, not once per task. `bench/copy_check.py`: 2.0x on
    boltons' 40 tasks (5 ms a task), 1.6x cachetools', none on humanize's or sqlparse's."""
    return tuple(_code_lines(_as_text(text).splitlines()))


def _longest_common_run(body: list[str], lines: Iterable[str]) -> int:
    """The most consecutive lines of `body` that occur consecutively in `lines`."""
    where: dict[str, list[int]] = {}
    for i, line in enumerate(body):
        where.setdefault(line, []).append(i)
    best, previous = 0, {}
    for line in lines:
        current = {i: previous.get(i - 1, 0) + 1 for i in where.get(line, ())}
        best = max(best, *current.values()) if current else best
        previous = current
    return best


def _dir_is_read(parts: tuple[str, ...], path: Path) -> bool:
    """Whether `read_tree` enters the directory `path` (`parts`: its path in the tree)."""
    return parts[-1] not in VCS_DIRS and not path.is_symlink() \
        and match_dir(parts, path) is None


def _file_is_read(path: Path) -> bool:
    return not path.is_symlink() and path.is_file() and not match_file(path.name)


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file of a tree (relative POSIX path -> bytes), without VCS directories, symlinks
    and anything an artifact rule names: the remaining tree fingerprints are checked against."""
    out: dict[str, bytes] = {}
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if _dir_is_read(
            PurePosixPath(rel_dir.as_posix(), d).parts, here / d))
        for name in sorted(filenames):
            path = here / name
            if _file_is_read(path):
                out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def read_files(root: Path, paths: Iterable[str]) -> dict[str, bytes]:
    """The files of `paths` (relative POSIX paths under `root`) that `read_tree(root)` would
    read, by the same rules on each path's directories and name."""
    out: dict[str, bytes] = {}
    for rel in paths:
        parts = PurePosixPath(rel).parts
        dirs = range(1, len(parts))
        if all(_dir_is_read(parts[:i], Path(root, *parts[:i])) for i in dirs) \
                and _file_is_read(Path(root, rel)):
            out[rel] = Path(root, rel).read_bytes()
    return out


def fingerprint_workspace(workspace: Path, original_texts: Mapping[str, str | bytes], *,
                          lacking: Iterable[str] = (), lacking_from: Path | None = None
                          ) -> Fingerprints:
    """`fingerprint_deletion` against a task workspace on disk as the remaining tree.
    `lacking`: files of the task tree the workspace does not hold (yet), read from
    `lacking_from` (the snapshot): an agent's workspace lacks its hidden tests."""
    tree = read_tree(workspace)
    if lacking and lacking_from is None:
        raise ValueError("files the workspace lacks, but nowhere to read them from")
    if lacking_from is not None:
        tree.update(read_files(lacking_from, lacking))
    return fingerprint_deletion(original_texts, tree)

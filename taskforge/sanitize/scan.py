"""The leak scanner: search every byte under some roots, and inside every container, for
fingerprints of deleted code.

Speed: files are read once (hard links and repeated inodes skipped), collected into batches
joined by NUL bytes (no fingerprint holds one), and each pattern of the smallest covering set
is searched over a whole batch with `bytes.find` (CPython's two-way/bloom search, ~2 GB/s);
only the few entries with a hit are then checked against every fingerprint, for the report.
Containers are decoded only when their magic bytes say so (see `containers`), each within
byte budgets; what could not be decoded, or would exceed a budget, is `Undecided`: the scan
cannot vouch for it, and a task whose workspace or environment holds one is rejected.

Memory: a file is read whole only up to BIG_FILE (larger ones are searched in chunks, a zip
or tar among them decoded from disk); decoded members are bounded by `containers`' budgets;
batches by BATCH_BYTES. Whatever the tree holds, a scan stays under a few hundred MB.
"""

from __future__ import annotations

import builtins
import keyword
import os
import re
import stat
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import BinaryIO

from taskforge.sanitize.bytecode import code_signature, walk_code
from taskforge.sanitize.classfile import JAVA_PREFIX, ClassInfo, java_key, matches
from taskforge.sanitize.containers import (
    CONTAINERS,
    Budget,
    Context,
    ScanBudget,
    expand,
    kind_of,
)
from taskforge.sanitize.fingerprints import Fingerprint, Fingerprints

BATCH_BYTES = 16 * 1024 * 1024
ALONE_BYTES = 1024 * 1024  # a byte string this long is searched on its own, not batched
BIG_FILE = 32 * 1024 * 1024  # read in overlapping chunks; only a zip or tar is decoded


@dataclass(frozen=True, order=True)
class Hit:
    """One fingerprint found: in `path` (relative to `root`), at `container` inside it ("" for
    the file's own bytes; else a `!`-separated path of decoded members)."""

    path: str
    container: str
    kind: str
    fingerprint: str
    root: str = field(default="", compare=False)

    def where(self) -> str:
        return f"{self.path}{self.container}"

    def __str__(self) -> str:
        text = self.fingerprint if len(self.fingerprint) <= 80 else self.fingerprint[:77] + "..."
        return f"{self.where()}: {self.kind}: {text!r}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "container": self.container, "kind": self.kind,
                "fingerprint": self.fingerprint}


@dataclass(frozen=True, order=True)
class Undecided:
    """A file (or a member inside it: `container`) the scan could not vouch for: it could not
    be read or decoded, or decoding it would exceed a budget."""

    path: str
    container: str
    reason: str
    root: str = field(default="", compare=False)

    def where(self) -> str:
        return f"{self.path}{self.container}"

    def __str__(self) -> str:
        return f"{self.where()}: undecided: {self.reason}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.where(), "kind": "undecided", "reason": self.reason}


@dataclass
class ScanStats:
    files: int = 0
    bytes: int = 0
    entries: int = 0  # searched byte strings: files plus decoded members
    decoded_bytes: int = 0
    containers: int = 0
    same_inode: int = 0
    notes: list[str] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)


_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{4,}")
# Words too frequent in code to be worth searching for instead of the fingerprints they are in.
_FREQUENT_WORDS = """
    self return import value values result string append format items index object super
    kwargs length number first second other default message error errors source target
    __init__ __name__ __class__ __dict__ __call__ __repr__ __eq__ __hash__ config options
    params param update extend insert remove before after start offset
"""
_FREQUENT = frozenset(w.encode() for w in (*keyword.kwlist, *dir(builtins),
                                           *_FREQUENT_WORDS.split()))


def covering_patterns(patterns: Iterable[bytes]) -> list[bytes]:
    return list(covering(patterns))


def _anchor_candidates(pattern: bytes) -> set[bytes]:
    """Words of `pattern` (not too frequent in code) and runs of 2-3 consecutive words with
    what lies between them, exactly as they occur in it."""
    words = list(_WORD.finditer(pattern))
    found = {m.group() for m in words if m.group() not in _FREQUENT}
    tokens = list(re.finditer(rb"[A-Za-z_][A-Za-z0-9_]*", pattern))
    for size in (2, 3):
        for i in range(len(tokens) - size + 1):
            run = pattern[tokens[i].start():tokens[i + size - 1].end()]
            if len(run) >= 8 and b"\n" not in run:
                found.add(run)
    return found


def _specificity(anchor: bytes) -> float:
    """How rare an anchor is likely to be outside the code it came from: a plain lowercase
    word is prose as often as code; an identifier with `_`, digits or inner capitals, or a
    run of several words, is not."""
    if not anchor.isalpha() or not anchor[1:].islower():
        return 1.0
    return 0.4


def covering(patterns: Iterable[bytes]) -> dict[bytes, list[bytes]]:
    """Anchors to search for instead of `patterns`, each with the patterns it stands for.

    Every entry holding one of `patterns` holds one of the anchors: a word or short run of
    words shared by several patterns stands in for all of them (the entries it finds are
    then checked against those patterns), the rest stand for themselves. Search time grows
    with the number of anchors, and checking time with how often they occur, so the greedy
    choice weighs how many patterns an anchor covers by how specific it looks."""
    minimal: list[bytes] = []
    for p in sorted(set(patterns), key=lambda b: (len(b), b)):
        if not any(q in p for q in minimal):
            minimal.append(p)
    candidates: set[bytes] = set()
    for p in minimal:
        candidates |= _anchor_candidates(p)
    covers = {c: {i for i, p in enumerate(minimal) if c in p} for c in candidates}
    uncovered = set(range(len(minimal)))
    chosen: list[bytes] = []
    while covers:
        best = max(covers, key=lambda c: (len(covers[c] & uncovered) * _specificity(c), len(c), c))
        if len(covers[best] & uncovered) < 2:
            break
        chosen.append(best)
        uncovered -= covers.pop(best)
    chosen += [minimal[i] for i in sorted(uncovered)]
    anchors: list[bytes] = []
    for c in sorted(set(chosen), key=lambda b: (len(b), b)):
        if not any(a in c for a in anchors):
            anchors.append(c)
    everything = sorted(set(patterns))
    return {anchor: [p for p in everything if anchor in p] for anchor in anchors}


class _Batch:
    def __init__(self, alone: Callable[[tuple[int, str, str], bytes], None] | None = None
                 ) -> None:
        self.alone = alone
        self.labels: list[tuple[int, str, str]] = []  # (root index, rel path, container)
        self.datas: list[bytes] = []
        self.size = 0

    def add(self, label: tuple[int, str, str], data: bytes) -> None:
        if len(data) >= ALONE_BYTES and self.alone is not None:
            self.alone(label, data)  # searched where it is: joining would copy it
            return
        self.labels.append(label)
        self.datas.append(data)
        self.size += len(data) + 1


class Scanner:
    """One fingerprint set, compiled once, scanned over any number of roots."""

    def __init__(self, fingerprints: Fingerprints) -> None:
        self.fingerprints = fingerprints
        self.by_text: dict[bytes, list[Fingerprint]] = {}
        for f in fingerprints.texts:
            self.by_text.setdefault(f.text.encode("utf-8", "surrogatepass"), []).append(f)
        self.anchors = covering(self.by_text)  # anchor -> the fingerprints it stands for
        self.patterns = list(self.anchors)
        code = fingerprints.code_map()
        # Java methods (`classfile.java_key`) are matched in class files, the rest in bytecode
        self.java = {k: v for k, v in code.items() if k.startswith(JAVA_PREFIX)}
        self.code = {k: v for k, v in code.items() if not k.startswith(JAVA_PREFIX)}
        self.code_names = tuple(sorted({q.rsplit(".", 1)[-1].encode() for q in self.code}))
        self.longest = max((len(p) for p in self.by_text), default=0)
        self.stats = ScanStats()
        self.budget = ScanBudget()
        self.hits: set[Hit] = set()

    # -- searching ------------------------------------------------------------------------
    def _flush(self, batch: _Batch, roots: list[Path]) -> None:
        if batch.datas and self.patterns:
            self._search(batch, roots)
        batch.__init__(batch.alone)  # type: ignore[misc]

    def _search_alone(self, label: tuple[int, str, str], data: bytes, roots: list[Path]
                      ) -> None:
        anchors = {a for a in self.patterns if a in data}
        if anchors:
            self._verify(label, data, anchors, roots)

    def _verify(self, label: tuple[int, str, str], data: bytes, anchors: set[bytes],
                roots: list[Path]) -> None:
        root_index, rel, container = label
        for needle in {t for a in anchors for t in self.anchors[a]}:
            if needle in data:
                for fp in self.by_text[needle]:
                    self.hits.add(Hit(rel, container, fp.kind, fp.text, str(roots[root_index])))

    def _search(self, batch: _Batch, roots: list[Path]) -> None:
        big = b"\0".join(batch.datas)
        starts: list[int] = []
        offset = 0
        for d in batch.datas:
            starts.append(offset)
            offset += len(d) + 1
        found: dict[int, set[bytes]] = {}  # entry -> anchors found in it
        for anchor in self.patterns:
            i = big.find(anchor)
            while i != -1:
                k = bisect_right(starts, i) - 1
                found.setdefault(k, set()).add(anchor)
                if k + 1 >= len(starts):
                    break
                i = big.find(anchor, starts[k + 1])
        for k, anchors in sorted(found.items()):
            self._verify(batch.labels[k], batch.datas[k], anchors, roots)

    def _on_code(self, root_index: int, rel: str, roots: list[Path]):
        def check(where: str, code: CodeType) -> None:
            if not self.code:
                return
            for co in walk_code(code):
                sigs = self.code.get(co.co_qualname)
                if sigs and code_signature(co) in sigs:
                    self.hits.add(Hit(rel, f"{where}!code:{co.co_qualname}", "code",
                                      co.co_qualname, str(roots[root_index])))
        return check

    def _on_class(self, root_index: int, rel: str, roots: list[Path]):
        def check(where: str, info: ClassInfo) -> None:
            if not self.java:
                return
            for method in info.methods:
                key = java_key(info.name, method.name)
                params = self.java.get(key)
                if params and not method.is_stub() and any(matches(p, method) for p in params):
                    self.hits.add(Hit(rel, f"{where}!method:{method.name}{method.descriptor}",
                                      "code", key, str(roots[root_index])))
        return check

    # -- reading --------------------------------------------------------------------------
    def _undecided(self, index: int, rel: str, container: str, reason: str,
                   roots: list[Path]) -> None:
        self.stats.undecided.append(Undecided(rel, container, reason, str(roots[index])))

    def _files(self, index: int, roots: list[Path]) -> Iterator[tuple[str, str]]:
        """(relative POSIX path, path) of every regular file; symlinks are not followed."""
        root = roots[index]
        if root.is_file() and not root.is_symlink():
            yield root.name, str(root)
            return
        stack = [(str(root), "")]
        while stack:
            here, prefix = stack.pop()
            try:
                with os.scandir(here) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as e:  # a directory we cannot list may hold anything
                self._undecided(index, prefix.rstrip("/") or ".", "",
                                f"unreadable directory: {e.strerror}", roots)
                continue
            for entry in reversed(entries):  # the stack pops them back in name order
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, prefix + entry.name + "/"))
                    elif entry.is_file(follow_symlinks=False):
                        yield prefix + entry.name, entry.path
                except OSError:
                    continue

    def _read(self, path: str, seen: set[tuple[int, int]]) -> tuple[bytes | None, int, str]:
        """The file's bytes (None if seen before under another name, unreadable, or too big
        to hold: then its size is returned for `_scan_big`), and why it could not be read."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            return None, 0, f"unreadable: {e.strerror}"
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                self.stats.same_inode += 1
                return None, 0, ""
            seen.add(key)
            if not stat.S_ISREG(st.st_mode) or st.st_size > BIG_FILE:
                return None, st.st_size, ""
            chunks = [os.read(fd, st.st_size + 1)]
            while chunks[-1]:  # the file grew, or the size was not known
                chunks.append(os.read(fd, 1 << 20))
                if sum(map(len, chunks)) > BIG_FILE:
                    return None, BIG_FILE + 1, ""  # it grows while we read: take it in chunks
            return b"".join(chunks) if len(chunks) > 2 else chunks[0], st.st_size, ""
        except OSError as e:
            return None, 0, f"unreadable: {e.strerror}"
        finally:
            os.close(fd)

    def _decode(self, index: int, rel: str, data: bytes | BinaryIO, kind: str | None,
                batch: _Batch, roots: list[Path]) -> None:
        ctx = Context(on_code=self._on_code(index, rel, roots), code_names=self.code_names,
                      on_class=self._on_class(index, rel, roots))
        for where, inner in expand(data, ctx, Budget(scan=self.budget), kind=kind):
            batch.add((index, rel, where), inner)
            self.stats.decoded_bytes += len(inner)
            self.stats.entries += 1
        self.stats.containers += ctx.containers
        self.stats.notes += [f"{rel}{n}" for n in ctx.notes]
        if ctx.undecided:  # one per file: the first thing that stopped the scan there
            where, reason = ctx.undecided[0]
            more = len(ctx.undecided) - 1
            self._undecided(index, rel, where, reason + (f" (and {more} more)" if more else ""),
                            roots)

    def scan(self, roots: Iterable[Path]) -> list[Hit]:
        roots = [Path(r) for r in roots]
        seen: set[tuple[int, int]] = set()
        batch = _Batch(lambda label, data: self._search_alone(label, data, roots)
                       if self.patterns else None)
        for index, _root in enumerate(roots):
            for rel, path in self._files(index, roots):
                data, size, problem = self._read(path, seen)
                if problem:
                    self._undecided(index, rel, "", problem, roots)
                if data is None:
                    if size > BIG_FILE:
                        self.stats.files += 1
                        self._scan_big(index, rel, path, batch, roots)
                    continue
                self.stats.files += 1
                self.stats.bytes += len(data)
                self.stats.entries += 1
                batch.add((index, rel, ""), data)
                if kind_of(data) is not None:
                    self._decode(index, rel, data, None, batch, roots)
                if batch.size >= BATCH_BYTES:
                    self._flush(batch, roots)
        self._flush(batch, roots)
        return sorted(self.hits)

    def _scan_big(self, index: int, rel: str, path: str, batch: _Batch,
                  roots: list[Path]) -> None:
        """Too big to hold: its bytes searched in overlapping chunks; a zip or tar decoded
        from disk (members one at a time); any other container is undecided."""
        overlap = max(self.longest - 1, 0)
        with open(path, "rb") as f:
            tail = b""
            head = b""
            while chunk := f.read(BATCH_BYTES):
                head = head or chunk[:4096]
                self.stats.bytes += len(chunk)
                self._search_alone((index, rel, ""), tail + chunk, roots)
                tail = chunk[-overlap:] if overlap else b""
            f.seek(max(0, f.tell() - 1024))
            end = f.read()
            kind = big_kind(head, end)
            if kind in ("zip", "tar"):
                f.seek(0)
                self._decode(index, rel, f, kind, batch, roots)
            elif kind in CONTAINERS:
                self._undecided(index, rel, "", f"{kind}: {os.path.getsize(path)} bytes on disk, "
                                f"over the {BIG_FILE // (1024 * 1024)} MiB a file may be to be "
                                "decoded", roots)
        self.stats.entries += 1


def big_kind(head: bytes, end: bytes) -> str | None:
    """The container kind of a file too big to hold, from its first and last bytes."""
    if len(head) >= 512 and head[257:262] == b"ustar":
        return "tar"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or b"PK\x05\x06" in end:
        return "zip"
    return kind_of(head)


def scan(fingerprints: Fingerprints, roots: Iterable[Path],
         stats: ScanStats | None = None) -> list[Hit]:
    """Every hit of `fingerprints` under `roots` (files or directories; symlinks are not
    followed), sorted by path. What the scan could not decide is in `stats.undecided`."""
    scanner = Scanner(fingerprints)
    hits = scanner.scan(roots)
    if stats is not None:
        for name in ("files", "bytes", "entries", "decoded_bytes", "containers", "same_inode"):
            setattr(stats, name, getattr(scanner.stats, name))
        stats.notes[:] = scanner.stats.notes
        stats.undecided[:] = sorted(scanner.stats.undecided)
    return hits

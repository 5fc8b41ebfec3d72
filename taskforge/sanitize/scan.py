"""The leak scanner: search every byte under some roots, and inside every container, for
fingerprints of deleted code.

Reading and decoding is `walk`'s: every file once, every container inside it within byte
budgets; what could not be decoded, or would exceed a budget, is `Undecided`: the scan cannot
vouch for it, and a task whose workspace or environment holds one is rejected.

Speed: byte strings are collected into batches joined by NUL bytes (no fingerprint holds
one), and each pattern of the smallest covering set is searched over a whole batch with
`bytes.find` (CPython's two-way/bloom search, ~2 GB/s); only the few entries with a hit are
then checked against every fingerprint, for the report. A root given as `indexed` (a task's
environment, the same for every task of a snapshot) is decoded once per process and
searched in its index instead (`envindex`).

Memory: a file is read whole only up to BIG_FILE (larger ones are searched in chunks);
decoded members are bounded by `containers`' budgets; batches by BATCH_BYTES. Whatever the
tree holds, a scan stays under a few hundred MB.
"""

from __future__ import annotations

import builtins
import keyword
import os
import re
from bisect import bisect_right
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType

from taskforge.sanitize.bytecode import code_signature, walk_code
from taskforge.sanitize.classfile import JAVA_PREFIX, ClassInfo, java_key, matches
from taskforge.sanitize.containers import Context
from taskforge.sanitize.envindex import TreeIndex, tree_index
from taskforge.sanitize.fingerprints import Fingerprint, Fingerprints
from taskforge.sanitize.walk import Label, ScanStats, Undecided, Walker

BATCH_BYTES = 16 * 1024 * 1024
ALONE_BYTES = 1024 * 1024  # a byte string this long is searched on its own, not batched


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
    """The search's sink: byte strings collected and searched together, a batch at a time
    (one this long is searched where it is: joining would copy it)."""

    def __init__(self, scanner: Scanner, roots: list[Path]) -> None:
        self.scanner, self.roots = scanner, roots
        self.labels: list[Label] = []
        self.datas: list[bytes] = []
        self.size = 0

    def add(self, label: Label, data: bytes) -> None:
        if not self.scanner.patterns:
            return
        if len(data) >= ALONE_BYTES:
            self.scanner.search_alone(label, data, self.roots)
            return
        self.labels.append(label)
        self.datas.append(data)
        self.size += len(data) + 1

    def add_big(self, label: Label, path: str) -> None:
        """Searched in overlapping chunks: a match across two chunks is in their overlap."""
        if not self.scanner.patterns:
            return
        overlap = max(self.scanner.longest - 1, 0)
        with open(path, "rb") as f:
            tail = b""
            while chunk := f.read(BATCH_BYTES):
                self.scanner.search_alone(label, tail + chunk, self.roots)
                tail = chunk[-overlap:] if overlap else b""

    def filled(self) -> None:
        if self.size >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.datas:
            self.scanner.search_batch(self.labels, self.datas, self.roots)
        self.labels, self.datas, self.size = [], [], 0


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
        # A .pyc holding one of these code objects holds its qualified name (marshal writes
        # each string in full where it first occurs): files without one are not unmarshalled.
        self.code_names = tuple(sorted({q.encode("utf-8", "surrogatepass") for q in self.code}))
        # likewise a class file holding a deleted method holds its name
        self.java_names = tuple(sorted({_modified_utf8(key.rsplit("#", 1)[-1])
                                        for key in self.java}))
        self.longest = max((len(p) for p in self.by_text), default=0)
        self.stats = ScanStats()
        self.hits: set[Hit] = set()
        self._indexed: list[tuple[int, list[Path]]] = []  # what `walk` left to an index
        self._unsearched: _Batch | None = None  # what `walk` read last, left to `search_rest`

    # -- searching ------------------------------------------------------------------------
    def search_alone(self, label: Label, data: bytes, roots: list[Path]) -> None:
        anchors = {a for a in self.patterns if a in data}
        if anchors:
            self._verify(label, data, anchors, roots)

    def _verify(self, label: Label, data: bytes, anchors: set[bytes],
                roots: list[Path]) -> None:
        root_index, rel, container = label
        for needle in {t for a in anchors for t in self.anchors[a]}:
            if needle in data:
                for fp in self.by_text[needle]:
                    self.hits.add(Hit(rel, container, fp.kind, fp.text, str(roots[root_index])))

    def search_batch(self, labels: list[Label], datas: list[bytes], roots: list[Path]) -> None:
        big = b"\0".join(datas)
        starts: list[int] = []
        offset = 0
        for d in datas:
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
            self._verify(labels[k], datas[k], anchors, roots)

    def index_lookups(self) -> list[bytes]:
        """Every byte string `search_index` looks up in an index (`TreeIndex.occurrences`)."""
        return [*self.patterns, *(self.code_names if self.code else ()),
                *(self.java_names if self.java else ())]

    def search_index(self, root_index: int, index: TreeIndex, roots: list[Path]) -> None:
        """What a walk of `roots[root_index]` would find, from its index: the same hits,
        the same undecided files."""
        for anchor in self.patterns:
            for k in index.occurrences(anchor):
                rel, container = index.labels[k]
                for needle in self.anchors[anchor]:
                    if index.holds(k, needle):
                        for fp in self.by_text[needle]:
                            self.hits.add(Hit(rel, container, fp.kind, fp.text,
                                              str(roots[root_index])))
        # The structural checks decode only the bytecode and class files that could hold a
        # deleted function or method: those holding its name (as a walk's decoders do).
        checks = [(index.pyc, self.code_names)] if self.code else []
        if self.java:
            checks.append((index.classes, self.java_names))
        walker = Walker(lambda index_, rel_: self._context(root_index, rel_, roots))
        for entries, names in checks:
            kind = set(entries)
            holding = sorted({k for name in names for k in index.occurrences(name) if k in kind})
            for k in holding:
                rel, container = index.labels[k]
                walker.decode(roots, root_index, rel, index.data(k), None, _Discard(),
                              where=container)
        self.stats.undecided += walker.stats.undecided
        root = str(roots[root_index])
        built = index.stats
        self.stats.undecided += [Undecided(u.path, u.container, u.reason, root)
                                 for u in built.undecided]
        self.stats.notes += built.notes
        for name in ("files", "bytes", "entries", "decoded_bytes", "containers", "same_inode"):
            setattr(self.stats, name, getattr(self.stats, name) + getattr(built, name))

    def _context(self, root_index: int, rel: str, roots: list[Path]) -> Context:
        return Context(on_code=self._on_code(root_index, rel, roots), code_names=self.code_names,
                       on_class=self._on_class(root_index, rel, roots))

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

    def scan(self, roots: Iterable[Path], indexed: Collection[Path] = ()) -> list[Hit]:
        """Every hit under `roots`; those in `indexed` are searched in their index."""
        self.walk(roots, indexed)
        self.search_rest()
        return sorted(self.hits)

    def walk(self, roots: Iterable[Path], indexed: Collection[Path] = (),
             skip: Collection[str] = ()) -> None:
        """`scan`'s first half: the roots not in `indexed`, read now (afterwards they may
        change: `search_rest` does not read them again), but for the names `skip` at the
        top of each. The last batch of what it read (all of it, in a tree of less than
        BATCH_BYTES) is searched by `search_rest`: a task's scan runs that on a thread of its
        own while its tests run (`PendingScan`); searching boltons' workspace where it was
        read kept its confirmation run waiting ~3 ms more."""
        roots = [Path(r) for r in roots]
        from_index = {os.path.realpath(r) for r in indexed}
        walked = [i for i, r in enumerate(roots) if os.path.realpath(r) not in from_index]
        walker = Walker(lambda index, rel: self._context(index, rel, roots))
        if self._unsearched is not None:  # an earlier walk's, not searched yet
            self._unsearched.flush()
        self._unsearched = _Batch(self, roots)
        walker.walk(roots, walked, self._unsearched, skip)
        self.stats = walker.stats
        self._indexed = [(i, roots) for i in range(len(roots)) if i not in walked]

    def search_rest(self) -> None:
        """`scan`'s second half: what `walk` read and left unsearched (the bytes as it read
        them), and the roots it left to their index, searched there."""
        if self._unsearched is not None:
            self._unsearched.flush()
            self._unsearched = None
        for i, roots in self._indexed:
            self.search_index(i, tree_index(roots[i]), roots)
        self._indexed = []

    def stats_into(self, stats: ScanStats) -> None:
        """What this scan counted and could not decide, copied into `stats`."""
        for name in ("files", "bytes", "entries", "decoded_bytes", "containers", "same_inode"):
            setattr(stats, name, getattr(self.stats, name))
        stats.notes[:] = self.stats.notes
        stats.undecided[:] = sorted(self.stats.undecided)


def _modified_utf8(name: str) -> bytes:
    """A name as a class file's constant pool stores it: characters past U+FFFF as two
    surrogates, each encoded on its own (CESU-8)."""
    units = []
    for ch in name:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            units += [chr(0xD800 + (code >> 10)), chr(0xDC00 + (code & 0x3FF))]
        else:
            units.append(ch)
    return "".join(units).encode("utf-8", "surrogatepass")


class _Discard:
    """A sink for decoding only for the structural checks: the text was searched already."""

    def add(self, label: Label, data: bytes) -> None:
        pass

    def add_big(self, label: Label, path: str) -> None:
        pass

    def filled(self) -> None:
        pass


def scan(fingerprints: Fingerprints, roots: Iterable[Path],
         stats: ScanStats | None = None, indexed: Collection[Path] = ()) -> list[Hit]:
    """Every hit of `fingerprints` under `roots` (files or directories; symlinks are not
    followed), sorted by path. What the scan could not decide is in `stats.undecided`.
    Roots in `indexed` are decoded once per process and searched in their index (see
    `envindex`): for trees that many scans search unchanged, such as an environment."""
    scanner = Scanner(fingerprints)
    hits = scanner.scan(roots, indexed)
    if stats is not None:
        scanner.stats_into(stats)
    return hits

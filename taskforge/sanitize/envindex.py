"""An environment's bytes, decoded once: what every task of a snapshot scans again.

Every task's leak scan searches the environment its tests run in, and that environment is the
same for every task of a snapshot (built once, content-addressed). Decoding it (reading
thousands of files, inflating wheels and jars, pulling the strings out of JSON) is most of a
scan's time, and the same every time: `TreeIndex` does it once and keeps every byte string
the walk produces, the files' own bytes and every decoded member, in one corpus on disk
(memory-mapped), with where each came from. A task's scan then searches the corpus for its
fingerprints, exactly as it would search the files (`Scanner.search_index`).

The index is only ever used while it is true: each use compares the tree with the one the
index was built from (every file's path, size, modification time and inode), and a tree that
changed (a test run wrote bytecode into it, the scan removed a file) is indexed again.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import tempfile
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from taskforge.sanitize.bytecode import is_pyc
from taskforge.sanitize.classfile import is_class
from taskforge.sanitize.walk import Label, ScanStats, Walker

# Indexes a process keeps (each a corpus file on disk, its pages cached by the kernel): the
# environments of the sources a run is working on at once.
KEEP = 4
COPY_PIECE = 1024 * 1024
REMEMBERED = 100_000  # searched words whose entries an index keeps (then it starts over)
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# every byte that is not a word byte, as a space: `translate` then `split` gives the words
_SPACES = bytes(c if c in _WORD_BYTES else 32 for c in range(256))
_SEGMENT = re.compile(rb"[A-Za-z0-9_]+")
WORDS_PIECE = 8 * 1024 * 1024
# A shard: consecutive entries of about this many bytes (a bigger entry is one of its own).
# Each word of the corpus knows its shards, so a needle is searched only in those that have
# all its words: smaller shards narrow more, and cost more words to remember.
SHARD_BYTES = 1024 * 1024
FEW_SHARDS = 4  # searching this many shards costs about what narrowing them further would
MATCHED_WORDS = 2000  # words holding a needle's edge run beyond which every shard is searched


def tree_signature(root: Path) -> tuple[tuple[str, int, int, int], ...]:
    """What says a tree is unchanged: every regular file's path, size, mtime and inode (a
    directory that cannot be listed is part of it too, as an entry of its own). One stat
    call a file, from `os.scandir`: this runs before every use of an index."""
    listed: list[tuple[str, int, int, int]] = []
    stack = [str(root)]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        listed.append((entry.path, st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            listed.append((here, -1, -1, -1))
    listed.sort()
    return tuple(listed)


class _Corpus:
    """The walk's sink: each byte string appended to a temporary file, NUL-separated (no
    fingerprint holds a NUL, so no match spans two entries)."""

    def __init__(self) -> None:
        # lives as long as the index (its mmap); deleted by the OS when closed or on exit
        self.file = tempfile.TemporaryFile(prefix="taskforge-envindex-")  # noqa: SIM115
        self.size = 0
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.labels: list[tuple[str, str]] = []  # (path, container)
        # entries the structural checks decode again: bytecode, and Java class files
        self.pyc: list[int] = []
        self.classes: list[int] = []

    def _begin(self, label: Label) -> None:
        self.starts.append(self.size)
        self.labels.append((label[1], label[2]))

    def _end(self) -> None:
        self.ends.append(self.size)
        self.file.write(b"\0")
        self.size += 1

    def add(self, label: Label, data: bytes) -> None:
        if is_pyc(data):
            self.pyc.append(len(self.starts))
        elif is_class(data):
            self.classes.append(len(self.starts))
        self._begin(label)
        self.file.write(data)
        self.size += len(data)
        self._end()

    def add_big(self, label: Label, path: str) -> None:
        self._begin(label)
        with open(path, "rb") as f:
            while piece := f.read(COPY_PIECE):
                self.file.write(piece)
                self.size += len(piece)
        self._end()

    def filled(self) -> None:
        pass


class TreeIndex:
    """One tree walked and decoded: its byte strings (`corpus`, entry k at
    `starts[k]:ends[k]`, from `labels[k]`), and what the walk counted and could not decide
    (`stats`, with undecided files' roots left empty)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.signature = tree_signature(self.root)
        corpus = _Corpus()
        walker = Walker()
        walker.walk([self.root], [0], corpus)
        corpus.file.flush()
        self.starts, self.ends, self.labels = corpus.starts, corpus.ends, corpus.labels
        self.pyc, self.classes = corpus.pyc, corpus.classes
        self.stats: ScanStats = walker.stats
        self._file = corpus.file
        # mmap cannot map an empty file; one NUL stands for "no entries"
        if corpus.size == 0:
            corpus.file.write(b"\0")
            corpus.file.flush()
        self.corpus = mmap.mmap(corpus.file.fileno(), 0, access=mmap.ACCESS_READ)
        self._found: dict[bytes, tuple[int, ...]] = {}
        # the corpus's shards (byte spans), its distinct words and the shards of each, on
        # first search (`_word_index`)
        self.spans: list[tuple[int, int]] = []
        self._words = b""
        self._word_shards: dict[bytes, int] | None = None
        self._lock = threading.Lock()

    def entry_at(self, offset: int) -> int:
        """The entry holding corpus byte `offset`."""
        return bisect_right(self.starts, offset) - 1

    def occurrences(self, needle: bytes) -> tuple[int, ...]:
        """Each entry holding `needle`, once, in corpus order. Remembered: the tasks of one
        snapshot search for many of the same words (its names, its idioms)."""
        found = self._found.get(needle)
        if found is None:
            found = tuple(self._find_all(needle, self._shards_of(needle)))
            with self._lock:
                if len(self._found) >= REMEMBERED:
                    self._found.clear()
                self._found[needle] = found
        return found

    def might_hold(self, needle: bytes) -> bool:
        """False when the corpus cannot hold `needle` (see `_shards_of`)."""
        return self._shards_of(needle, few=0) != 0

    def _shards_of(self, needle: bytes, few: int = FEW_SHARDS) -> int:
        """The shards that may hold `needle`, as bits: those where each of its runs of word
        characters lies in a word. A run with a non-word byte on both sides within `needle`
        is a whole word wherever `needle` occurs; one at its start ends a word, one at its
        end begins one, and a needle that is one run lies anywhere inside a word. Most of a
        task's fingerprints are names the environment never mentions (no shard), and the
        rest are rare words (a few shards of a hundred or more). The edge runs are not
        looked at once `few` shards or fewer are left."""
        word_shards, everywhere = self._word_index()
        mask = everywhere
        edges = []
        for run in _SEGMENT.finditer(needle):
            starts, ends = run.start() == 0, run.end() == len(needle)
            if starts or ends:
                edges.append((run.group(), starts, ends))
            else:
                mask &= word_shards.get(run.group(), 0)
            if not mask:
                return 0
        # The edge runs' words are looked up in all the words (a few MB): worth it only
        # while more shards are left than that would cost to search.
        for run, starts, ends in sorted(edges, key=lambda e: -len(e[0])):
            if mask.bit_count() <= few:
                break
            mask &= self._shards_of_words(run, starts, ends)
        return mask

    def _shards_of_words(self, run: bytes, starts: bool, ends: bool) -> int:
        """The shards of every word that holds `run`: ends with it (`starts`: `run` begins
        the needle, so the word may begin before it), begins with it (`ends`), or holds it
        anywhere (both). `_words` has a newline before and after each word."""
        words = self._words
        word_shards, everywhere = self._word_index()
        pattern = run if starts and ends else (run + b"\n" if starts else b"\n" + run)
        mask, seen = 0, 0
        i = words.find(pattern)
        while i != -1:
            seen += 1
            if seen > MATCHED_WORDS:
                return everywhere  # too common to narrow down: search every shard
            if starts and ends:
                begin, end = words.rfind(b"\n", 0, i) + 1, words.find(b"\n", i + len(run))
            elif starts:
                begin, end = words.rfind(b"\n", 0, i) + 1, i + len(run)
            else:
                begin = i + 1
                end = words.find(b"\n", begin + len(run))
            mask |= word_shards.get(words[begin:end], 0)
            i = words.find(pattern, end)
        return mask

    def _word_index(self) -> tuple[dict[bytes, int], int]:
        """Each distinct word of the corpus with the shards (bits) it is in, and the mask of
        every shard; `_words` is the words sorted, one a line. Built on first search."""
        with self._lock:
            if self._word_shards is None:
                corpus, word_shards = self.corpus, {}
                spans = _spans(self.starts, self.ends)
                for bit, (first, last) in enumerate(spans):
                    words: set[bytes] = set()
                    i, size = first, last
                    while i < size:
                        j = min(size, i + WORDS_PIECE)
                        while j < size and corpus[j] in _WORD_BYTES:  # never cut a word in two
                            j += 1
                        words.update(corpus[i:j].translate(_SPACES).split())
                        i = j
                    flag = 1 << bit
                    for word in words:
                        word_shards[word] = word_shards.get(word, 0) | flag
                self.spans = spans
                self._words = b"\n" + b"\n".join(sorted(word_shards)) + b"\n"
                self._word_shards = word_shards
            return self._word_shards, (1 << len(self.spans)) - 1

    def _find_all(self, needle: bytes, mask: int) -> Iterator[int]:
        """The entries holding `needle` among those of the shards in `mask`."""
        corpus = self.corpus
        for bit, (first, last) in enumerate(self.spans):
            if not mask >> bit & 1:
                continue
            i = corpus.find(needle, first, last)
            while i != -1:
                k = self.entry_at(i)
                yield k
                i = corpus.find(needle, self.ends[k], last)

    def holds(self, k: int, needle: bytes) -> bool:
        return self.corpus.find(needle, self.starts[k], self.ends[k]) != -1

    def data(self, k: int) -> bytes:
        return self.corpus[self.starts[k]:self.ends[k]]


def _spans(starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Consecutive entries grouped into shards of about SHARD_BYTES: (first byte, end)."""
    spans: list[tuple[int, int]] = []
    first = None
    for start, end in zip(starts, ends, strict=True):
        if first is None:
            first = start
        if end - first >= SHARD_BYTES:
            spans.append((first, end))
            first = None
    if first is not None:
        spans.append((first, ends[-1]))
    return spans


_lock = threading.Lock()
_indexes: OrderedDict[str, TreeIndex] = OrderedDict()
_building: dict[str, threading.Lock] = {}


def prepare_index(root: Path) -> threading.Thread:
    """Build the index of `root` (its words too) on a thread of its own, for the scans to
    come: what the first scan of a snapshot's tasks would otherwise pay (seconds, for an
    environment of thousands of files), done while the process waits on something else. A
    scan that comes first waits for it (`tree_index`); one after a change builds anew."""

    def build() -> None:
        # Only ahead of time: the scan that needs the index builds it again if this failed,
        # and reports what fails there.
        with contextlib.suppress(Exception):
            tree_index(root)._word_index()

    thread = threading.Thread(target=build, name=f"envindex-{Path(root).name}", daemon=True)
    thread.start()
    return thread


def tree_index(root: Path) -> TreeIndex:
    """The index of `root` as it is now: the one this process built, while the tree is
    unchanged; else built (again). Threads share it; one builds, the others wait."""
    key = os.path.realpath(root)
    with _lock:
        building = _building.setdefault(key, threading.Lock())
    with building:
        with _lock:
            index = _indexes.get(key)
        if index is not None and index.signature == tree_signature(Path(key)):
            with _lock:
                _indexes.move_to_end(key)
            return index
        fresh = TreeIndex(Path(key))
        with _lock:
            # an index a search still holds stays open until it is dropped; replaced or
            # evicted ones are closed when nothing refers to them (mmap and file objects)
            _indexes[key] = fresh
            _indexes.move_to_end(key)
            while len(_indexes) > KEEP:
                _indexes.popitem(last=False)
        return fresh


def kept_index(root: Path) -> TreeIndex | None:
    """The index of `root` this process holds, unchecked: only for searching ahead (its
    answers are remembered in it, and a scan that finds the tree changed builds anew)."""
    with _lock:
        return _indexes.get(os.path.realpath(root))

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
        self._words: bytes | None = None  # the corpus's distinct words, on first search
        self._lock = threading.Lock()

    def entry_at(self, offset: int) -> int:
        """The entry holding corpus byte `offset`."""
        return bisect_right(self.starts, offset) - 1

    def occurrences(self, needle: bytes) -> tuple[int, ...]:
        """Each entry holding `needle`, once, in corpus order. Remembered: the tasks of one
        snapshot search for many of the same words (its names, its idioms)."""
        found = self._found.get(needle)
        if found is None:
            found = tuple(self._find_all(needle)) if self.might_hold(needle) else ()
            with self._lock:
                if len(self._found) >= REMEMBERED:
                    self._found.clear()
                self._found[needle] = found
        return found

    def might_hold(self, needle: bytes) -> bool:
        """False when the corpus cannot hold `needle`: one of its runs of word characters
        is in no word of the corpus (a run inside `needle` lies inside a word wherever
        `needle` occurs). The corpus's distinct words are a few MB where it is a hundred or
        more: most of a task's fingerprints are names the environment never mentions."""
        segments = _SEGMENT.findall(needle)
        if not segments:
            return True
        words = self._distinct_words()
        return all(segment in words for segment in segments)

    def _distinct_words(self) -> bytes:
        with self._lock:
            if self._words is None:
                words: set[bytes] = set()
                corpus, size, i = self.corpus, len(self.corpus), 0
                while i < size:
                    j = min(size, i + WORDS_PIECE)
                    while j < size and corpus[j] in _WORD_BYTES:  # never cut a word in two
                        j += 1
                    words.update(corpus[i:j].translate(_SPACES).split())
                    i = j
                self._words = b"\n".join(sorted(words))
            return self._words

    def _find_all(self, needle: bytes) -> Iterator[int]:
        i = self.corpus.find(needle)
        while i != -1:
            k = self.entry_at(i)
            yield k
            if k + 1 >= len(self.starts):
                return
            i = self.corpus.find(needle, self.starts[k + 1])

    def holds(self, k: int, needle: bytes) -> bool:
        return self.corpus.find(needle, self.starts[k], self.ends[k]) != -1

    def data(self, k: int) -> bytes:
        return self.corpus[self.starts[k]:self.ends[k]]


_lock = threading.Lock()
_indexes: OrderedDict[str, TreeIndex] = OrderedDict()
_building: dict[str, threading.Lock] = {}


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

"""Splitting text into words, sentences, paragraphs and n-grams."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence, TypeVar

T = TypeVar("T")

_WORD_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_SENTENCE_END_RE = re.compile(r"[.!?]+[\"')\]\u201d]*(?=\s|$)")
_PARAGRAPH_BREAK_RE = re.compile(r"\n\s*\n")

ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc",
     "e.g", "i.e", "inc", "ltd", "co", "no", "fig"}
)


def words(text: str, lowercase: bool = False) -> list[str]:
    """Return the words of ``text``; contractions like ``don't`` stay whole."""
    found = _WORD_RE.findall(text)
    if lowercase:
        return [word.lower() for word in found]
    return found


def _ends_with_abbreviation(fragment: str) -> bool:
    """True if ``fragment`` (text before a period) ends in an abbreviation or initial."""
    pieces = fragment.split()
    if not pieces:
        return False
    last = pieces[-1].lstrip("(\"'")
    if len(last) == 1 and last.isupper():
        return True
    return last.lower() in ABBREVIATIONS


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences.

    Sentence ends are ``.``, ``!`` or ``?`` (possibly followed by closing
    quotes or brackets) followed by whitespace; common abbreviations such as
    ``Dr.`` or ``e.g.`` and single-letter initials do not end a sentence.
    """
    result = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        if match.group().startswith(".") and match.group().count(".") == 1:
            if _ends_with_abbreviation(text[start:match.start()]):
                continue
        sentence = text[start:match.end()].strip()
        if sentence:
            result.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        result.append(tail)
    return result


def paragraphs(text: str) -> list[str]:
    """Split ``text`` on blank lines, dropping empty paragraphs."""
    chunks = _PARAGRAPH_BREAK_RE.split(text)
    return [chunk.strip() for chunk in chunks if chunk.strip()]


def ngrams(items: Sequence[T], n: int) -> list[tuple[T, ...]]:
    """Return the contiguous ``n``-grams of ``items`` as tuples."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return [tuple(items[i:i + n]) for i in range(len(items) - n + 1)]


def word_frequencies(text: str, ignore: Iterable[str] = ()) -> Counter:
    """Count lower-cased words in ``text``, skipping any word in ``ignore``."""
    skip = {word.lower() for word in ignore}
    counts: Counter = Counter()
    for word in words(text, lowercase=True):
        if word not in skip:
            counts[word] += 1
    return counts


def top_words(text: str, n: int = 10, ignore_stopwords: bool = False) -> list[tuple[str, int]]:
    """The ``n`` most frequent words as ``(word, count)``.

    Ties are broken alphabetically so results are deterministic.
    """
    ignore: Iterable[str] = ()
    if ignore_stopwords:
        from textkit.stopwords import load_stopwords

        ignore = load_stopwords()
    counts = word_frequencies(text, ignore=ignore)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]

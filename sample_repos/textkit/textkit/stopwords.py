"""Stopword lists loaded from package data."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import FrozenSet, Iterable

from textkit.tokens import words as split_into_words


def _parse_wordlist(content: str) -> FrozenSet[str]:
    """Parse a word list: one word per line, ``#`` starts a comment."""
    found = set()
    for line in content.splitlines():
        word = line.split("#", 1)[0].strip().lower()
        if word:
            found.add(word)
    return frozenset(found)


@lru_cache(maxsize=None)
def load_stopwords() -> FrozenSet[str]:
    """The bundled English stopword list (read lazily, then cached)."""
    resource = resources.files("textkit").joinpath("data").joinpath("stopwords.txt")
    content = resource.read_text(encoding="utf-8")
    return _parse_wordlist(content)


def is_stopword(word: str, extra: Iterable[str] = ()) -> bool:
    """True if ``word`` (case-insensitive) is a stopword or listed in ``extra``."""
    lowered = word.lower()
    if lowered in load_stopwords():
        return True
    return lowered in {item.lower() for item in extra}


def remove_stopwords(tokens: Iterable[str], extra: Iterable[str] = (), keep: Iterable[str] = ()) -> list[str]:
    """Drop stopwords from ``tokens``, preserving order and original case.

    Words in ``extra`` are treated as stopwords too; words in ``keep`` are
    never removed.
    """
    extra_set = {item.lower() for item in extra}
    keep_set = {item.lower() for item in keep}
    result = []
    for token in tokens:
        lowered = token.lower()
        if lowered in keep_set or not (lowered in load_stopwords() or lowered in extra_set):
            result.append(token)
    return result


def strip_stopwords(text: str, extra: Iterable[str] = ()) -> str:
    """Return the non-stopword words of ``text`` joined by single spaces."""
    return " ".join(remove_stopwords(split_into_words(text), extra=extra))

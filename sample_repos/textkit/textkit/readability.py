"""Simple readability statistics (Flesch reading ease, grade level, ...)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from textkit.tokens import sentences, words

_VOWEL_GROUP_RE = re.compile(r"[aeiouy]+")


def count_syllables(word: str) -> int:
    """Estimate the number of syllables in an English word.

    A heuristic: count vowel groups, discount a silent final ``e``; any word
    with letters has at least one syllable, anything else has none.
    """
    letters = "".join(ch for ch in word.lower() if "a" <= ch <= "z")
    if not letters:
        return 0
    count = len(_VOWEL_GROUP_RE.findall(letters))
    if letters.endswith("e") and not letters.endswith(("le", "ee", "ye")) and count > 1:
        count -= 1
    return max(count, 1)


@dataclass(frozen=True)
class TextStats:
    """Counts describing a piece of text."""

    sentences: int
    words: int
    syllables: int
    characters: int

    @property
    def words_per_sentence(self) -> float:
        return self.words / self.sentences if self.sentences else 0.0

    @property
    def syllables_per_word(self) -> float:
        return self.syllables / self.words if self.words else 0.0


def text_stats(text: str) -> TextStats:
    """Count sentences, words, syllables and letters/digits of ``text``."""
    found = words(text)
    return TextStats(
        sentences=len(sentences(text)),
        words=len(found),
        syllables=sum(count_syllables(word) for word in found),
        characters=sum(len(word) for word in found),
    )


def flesch_reading_ease(text: str) -> float:
    """Flesch reading ease score, rounded to two decimals (higher is easier)."""
    stats = text_stats(text)
    if stats.words == 0:
        raise ValueError("text contains no words")
    score = 206.835 - 1.015 * stats.words_per_sentence - 84.6 * stats.syllables_per_word
    return round(score, 2)


def flesch_kincaid_grade(text: str) -> float:
    """Flesch-Kincaid grade level, rounded to two decimals."""
    stats = text_stats(text)
    if stats.words == 0:
        raise ValueError("text contains no words")
    grade = 0.39 * stats.words_per_sentence + 11.8 * stats.syllables_per_word - 15.59
    return round(grade, 2)


def reading_time(text: str, words_per_minute: int = 200) -> int:
    """Estimated reading time in whole seconds (rounded up)."""
    if words_per_minute <= 0:
        raise ValueError("words_per_minute must be positive")
    count = len(words(text))
    return math.ceil(count * 60 / words_per_minute)

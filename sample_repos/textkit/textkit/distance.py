"""Edit distances and fuzzy matching."""

from __future__ import annotations

from typing import Iterable, Optional


def levenshtein(a: str, b: str) -> int:
    """Minimum number of single-character insertions, deletions or
    substitutions needed to turn ``a`` into ``b``."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            cost = 0 if char_a == char_b else 1
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost))
        previous = current
    return previous[-1]


def hamming(a: str, b: str) -> int:
    """Number of positions at which two equal-length strings differ."""
    if len(a) != len(b):
        raise ValueError("hamming distance needs strings of equal length")
    return sum(1 for x, y in zip(a, b) if x != y)


def similarity(a: str, b: str, case_sensitive: bool = True) -> float:
    """Normalised similarity in ``[0, 1]`` based on Levenshtein distance.

    Two empty strings are identical (``1.0``).
    """
    if not case_sensitive:
        a, b = a.casefold(), b.casefold()
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return 1.0 - levenshtein(a, b) / longest


def closest_matches(
    word: str,
    candidates: Iterable[str],
    n: int = 3,
    cutoff: float = 0.6,
    case_sensitive: bool = False,
) -> list[str]:
    """Up to ``n`` candidates whose similarity to ``word`` is at least ``cutoff``.

    Best matches come first; ties keep the order of ``candidates``.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    if not 0.0 <= cutoff <= 1.0:
        raise ValueError("cutoff must be between 0 and 1")
    scored = []
    for index, candidate in enumerate(candidates):
        score = similarity(word, candidate, case_sensitive=case_sensitive)
        if score >= cutoff:
            scored.append((-score, index, candidate))
    scored.sort()
    return [candidate for _, _, candidate in scored[:n]]


def closest_match(
    word: str,
    candidates: Iterable[str],
    cutoff: float = 0.6,
    case_sensitive: bool = False,
) -> Optional[str]:
    """The single best candidate for ``word``, or ``None`` if none is close enough."""
    matches = closest_matches(word, candidates, n=1, cutoff=cutoff, case_sensitive=case_sensitive)
    return matches[0] if matches else None

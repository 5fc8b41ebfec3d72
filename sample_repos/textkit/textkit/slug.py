"""URL slugs and ASCII transliteration."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Optional

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")

# Letters that Unicode normalisation does not decompose into ASCII.
_SPECIAL_LETTERS = {
    "ß": "ss",
    "æ": "ae",
    "Æ": "AE",
    "ø": "o",
    "Ø": "O",
    "œ": "oe",
    "Œ": "OE",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "þ": "th",
    "Þ": "Th",
}

_APOSTROPHES = ("'", "\u2019")


def transliterate(text: str) -> str:
    """Return an ASCII approximation of ``text``.

    Accents are stripped (``"café"`` -> ``"cafe"``), a few special letters are
    spelled out (``"straße"`` -> ``"strasse"``) and anything else that has no
    ASCII form is dropped.
    """
    spelled = "".join(_SPECIAL_LETTERS.get(ch, ch) for ch in text)
    decomposed = unicodedata.normalize("NFKD", spelled)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return stripped.encode("ascii", "ignore").decode("ascii")


def _shorten(words: list[str], separator: str, max_length: int) -> str:
    """Join as many whole words as fit in ``max_length`` characters."""
    kept: list[str] = []
    length = 0
    for word in words:
        extra = len(word) + (len(separator) if kept else 0)
        if length + extra > max_length:
            break
        kept.append(word)
        length += extra
    if not kept:
        return words[0][:max_length]
    return separator.join(kept)


def slugify(
    text: str,
    separator: str = "-",
    max_length: Optional[int] = None,
    lowercase: bool = True,
) -> str:
    """Turn ``text`` into a URL-friendly slug.

    >>> slugify("Hello, World!")
    'hello-world'

    When ``max_length`` is given the slug is cut at a word boundary if
    possible, otherwise the first word is hard-truncated.
    """
    if not separator:
        raise ValueError("separator must be a non-empty string")
    if max_length is not None and max_length < 1:
        raise ValueError("max_length must be positive")
    ascii_text = transliterate(text)
    for apostrophe in _APOSTROPHES:
        ascii_text = ascii_text.replace(apostrophe, "")
    if lowercase:
        ascii_text = ascii_text.lower()
    words = [word for word in _NON_ALNUM.split(ascii_text) if word]
    slug = separator.join(words)
    if max_length is not None and len(slug) > max_length:
        slug = _shorten(words, separator, max_length)
    return slug


def unique_slug(text: str, existing: Iterable[str], separator: str = "-") -> str:
    """Slugify ``text`` and add a numeric suffix until it is not in ``existing``.

    An empty slug falls back to ``"item"``.
    """
    base = slugify(text, separator=separator) or "item"
    taken = set(existing)
    if base not in taken:
        return base
    counter = 2
    while f"{base}{separator}{counter}" in taken:
        counter += 1
    return f"{base}{separator}{counter}"

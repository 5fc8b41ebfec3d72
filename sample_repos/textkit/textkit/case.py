"""Conversions between identifier and phrase casing styles."""

from __future__ import annotations

import re
from typing import AbstractSet

_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

SMALL_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "in", "nor", "of",
     "on", "or", "per", "the", "to", "via", "vs"}
)


def split_words(text: str) -> list[str]:
    """Split an identifier or phrase into words.

    Handles snake_case, kebab-case, camelCase, PascalCase, acronyms and
    digits: ``"parseHTTPResponse2"`` -> ``["parse", "HTTP", "Response", "2"]``.
    """
    return _WORD_RE.findall(text)


def _capitalize(word: str) -> str:
    return word[:1].upper() + word[1:].lower()


def to_snake(text: str) -> str:
    """``"HelloWorld"`` -> ``"hello_world"``."""
    return "_".join(word.lower() for word in split_words(text))


def to_kebab(text: str) -> str:
    """``"HelloWorld"`` -> ``"hello-world"``."""
    return "-".join(word.lower() for word in split_words(text))


def to_constant(text: str) -> str:
    """``"helloWorld"`` -> ``"HELLO_WORLD"``."""
    return "_".join(word.upper() for word in split_words(text))


def to_camel(text: str) -> str:
    """``"hello_world"`` -> ``"helloWorld"``."""
    words = split_words(text)
    if not words:
        return ""
    head, *rest = words
    return head.lower() + "".join(_capitalize(word) for word in rest)


def to_pascal(text: str) -> str:
    """``"hello_world"`` -> ``"HelloWorld"``."""
    return "".join(_capitalize(word) for word in split_words(text))


def _title_word(word: str) -> str:
    """Capitalise each hyphen-separated part, keeping mixed-case words as is."""
    parts = []
    for part in word.split("-"):
        if any(ch.isupper() for ch in part[1:]):
            parts.append(part)
        else:
            parts.append(part[:1].upper() + part[1:])
    return "-".join(parts)


def to_title(text: str, small_words: AbstractSet[str] = SMALL_WORDS) -> str:
    """Headline-style title case.

    Small words (articles, short prepositions and conjunctions) stay lower
    case unless they are the first or last word; words that already contain
    inner capitals (``"iPhone"``, ``"NASA"``) are left untouched.
    """
    parts = text.split()
    last = len(parts) - 1
    result = []
    for index, word in enumerate(parts):
        if 0 < index < last and word.lower() in small_words:
            result.append(word.lower())
        else:
            result.append(_title_word(word))
    return " ".join(result)


def _identifier_to_title(text: str) -> str:
    return to_title(" ".join(split_words(text)))


_CONVERTERS = {
    "snake": to_snake,
    "kebab": to_kebab,
    "constant": to_constant,
    "camel": to_camel,
    "pascal": to_pascal,
    "title": _identifier_to_title,
}


def convert_case(text: str, style: str) -> str:
    """Convert ``text`` to the named ``style`` (snake, kebab, camel, ...)."""
    try:
        converter = _CONVERTERS[style]
    except KeyError:
        choices = ", ".join(sorted(_CONVERTERS))
        raise ValueError(f"unknown case style {style!r}; expected one of {choices}") from None
    return converter(text)

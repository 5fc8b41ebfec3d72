"""Word wrapping, filling, indenting and truncation."""

from __future__ import annotations

import re

_PARAGRAPH_BREAK_RE = re.compile(r"\n\s*\n")


def wrap(text: str, width: int = 70, break_long_words: bool = True) -> list[str]:
    """Greedily wrap ``text`` into lines of at most ``width`` characters.

    Whitespace (including newlines) is collapsed.  Words longer than
    ``width`` are split unless ``break_long_words`` is false, in which case
    they get a line of their own.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    current = ""
    for word in text.split():
        while break_long_words and len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def fill(text: str, width: int = 70, prefix: str = "") -> str:
    """Wrap every paragraph of ``text`` and join the result into one string.

    Paragraphs (separated by blank lines) stay separated by one blank line;
    ``prefix`` is put in front of every line and counts towards ``width``.
    """
    if len(prefix) >= width:
        raise ValueError("prefix leaves no room for text")
    blocks = []
    for paragraph in _PARAGRAPH_BREAK_RE.split(text):
        lines = wrap(paragraph, width - len(prefix))
        if lines:
            blocks.append("\n".join(prefix + line for line in lines))
    return "\n\n".join(blocks)


def indent(text: str, prefix: str, skip_blank: bool = True) -> str:
    """Add ``prefix`` to the start of each line of ``text``.

    Blank lines are left alone unless ``skip_blank`` is false.
    """
    result = []
    for line in text.splitlines(keepends=True):
        if skip_blank and not line.strip():
            result.append(line)
        else:
            result.append(prefix + line)
    return "".join(result)


def truncate(text: str, length: int, ellipsis: str = "...", whole_words: bool = False) -> str:
    """Shorten ``text`` to at most ``length`` characters, ending in ``ellipsis``.

    With ``whole_words`` the cut happens at the previous space instead of in
    the middle of a word (unless the first word alone is too long).
    """
    if length < len(ellipsis):
        raise ValueError("length is shorter than the ellipsis")
    if len(text) <= length:
        return text
    room = length - len(ellipsis)
    cut = text[:room]
    if whole_words and not text[room].isspace():
        boundary = cut.rfind(" ")
        if boundary > 0:
            cut = cut[:boundary]
    return cut.rstrip() + ellipsis


def truncate_middle(text: str, length: int, ellipsis: str = "...") -> str:
    """Shorten ``text`` by replacing its middle with ``ellipsis``.

    Useful for long paths: ``truncate_middle("/very/long/path/file.txt", 15)``.
    """
    if length < len(ellipsis):
        raise ValueError("length is shorter than the ellipsis")
    if len(text) <= length:
        return text
    room = length - len(ellipsis)
    head = (room + 1) // 2
    tail = room - head
    return text[:head] + ellipsis + (text[len(text) - tail:] if tail else "")

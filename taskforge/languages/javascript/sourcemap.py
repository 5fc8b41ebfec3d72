"""Byte ranges of transformed code (what vite made of a module) back to the module's lines,
through the inline source map the transform appended (`//# sourceMappingURL=data:...`), or of a
file run as it is (`LineMap.plain`)."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re

_B64 = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_INLINE = re.compile(r"sourceMappingURL=data:application/json;(?:charset=utf-8;)?base64,"
                     r"([A-Za-z0-9+/=]+)")


def _vlq(segment: str) -> list[int]:
    values: list[int] = []
    value = shift = 0
    for char in segment:
        digit = _B64[char]
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
        else:
            values.append(-(value >> 1) if value & 1 else value >> 1)
            value = shift = 0
    return values


class LineMap:
    """Where each mapped position of the generated code comes from: sorted generated offsets
    (UTF-16 code units, V8's unit) and the 1-based line of the first source they map to."""

    def __init__(self, code: str) -> None:
        self.offsets: list[int] = []
        self.lines: list[int] = []
        found = _INLINE.findall(code)
        if not found:
            return
        try:
            mappings = json.loads(base64.b64decode(found[-1]))["mappings"]
        except (ValueError, KeyError, binascii.Error):
            return
        starts = [0]
        for line in code.split("\n"):
            starts.append(starts[-1] + _utf16_length(line) + 1)
        source = source_line = 0
        pairs: list[tuple[int, int]] = []
        for generated_line, text in enumerate(mappings.split(";")):
            column = 0
            for segment in filter(None, text.split(",")):
                fields = _vlq(segment)
                column += fields[0]
                if len(fields) >= 4:
                    source += fields[1]
                    source_line += fields[2]
                    if source == 0 and generated_line < len(starts):
                        pairs.append((starts[generated_line] + column, source_line + 1))
        pairs.sort()
        self.offsets = [o for o, _ in pairs]
        self.lines = [ln for _, ln in pairs]

    @classmethod
    def plain(cls, code: str, text: str) -> LineMap:
        """The file's own `text` run as it is inside `code` (Node's `require` runs the file
        itself; a loader may wrap it in a function): each line's first non-blank character,
        at the text's place in the code (the line's position, as for code no transform
        touched). Nothing where the text is not there, whole, once."""
        lines = cls("")
        at = code.find(text)
        if not text or at < 0 or code.find(text, at + 1) >= 0:
            return lines
        offset = _utf16_length(code[:at])
        for number, line in enumerate(text.split("\n"), start=1):
            blank = len(line) - len(line.lstrip())
            if blank < len(line):
                lines.offsets.append(offset + _utf16_length(line[:blank]))
                lines.lines.append(number)
            offset += _utf16_length(line) + 1
        return lines

    def executed(self, ranges: list[list[int]]) -> set[int]:
        """The source lines a mapped position of which ran: each position takes the count of
        the innermost range holding it (`ranges` outermost first, as V8's block ranges nest)."""
        counts = [0] * len(self.offsets)
        for start, end, count in ranges:
            low = bisect.bisect_left(self.offsets, start)
            high = bisect.bisect_left(self.offsets, end)
            counts[low:high] = [count] * (high - low)
        return {self.lines[i] for i, count in enumerate(counts) if count > 0}


def _utf16_length(text: str) -> int:
    """`text`'s length in UTF-16 code units: V8's offsets count them."""
    return len(text.encode("utf-16-le")) // 2

"""The tokenizer: turns source text into a list of ``Token`` objects."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import List, Tuple, Union

from exprcalc.errors import ParseError


class TokenKind(enum.Enum):
    NUMBER = "number"
    STRING = "string"
    NAME = "name"
    KEYWORD = "keyword"
    OPERATOR = "operator"
    LPAREN = "'('"
    RPAREN = "')'"
    COMMA = "','"
    EOF = "end of input"


KEYWORDS = frozenset({"and", "or", "not", "true", "false"})

# Longest operators first so that "**" wins over "*".
OPERATORS = ("**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">")

_PUNCTUATION = {"(": TokenKind.LPAREN, ")": TokenKind.RPAREN, ",": TokenKind.COMMA}
_NUMBER_RE = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    value: Union[int, float, str, None]
    pos: int

    def describe(self) -> str:
        """Human-readable description used in error messages."""
        if self.kind is TokenKind.NUMBER:
            return f"number {self.value!r}"
        if self.kind is TokenKind.STRING:
            return f"string {self.value!r}"
        if self.kind in (TokenKind.NAME, TokenKind.KEYWORD, TokenKind.OPERATOR):
            return f"{self.kind.value} '{self.value}'"
        return self.kind.value


def _read_number(source: str, pos: int) -> Tuple[Token, int]:
    match = _NUMBER_RE.match(source, pos)
    assert match is not None
    end = match.end()
    if end < len(source) and (source[end].isalnum() or source[end] in "._"):
        bad_end = end
        while bad_end < len(source) and (source[bad_end].isalnum() or source[bad_end] in "._"):
            bad_end += 1
        raise ParseError(f"invalid number literal {source[pos:bad_end]!r}", pos)
    text = match.group()
    value: Union[int, float] = float(text) if any(ch in text for ch in ".eE") else int(text)
    return Token(TokenKind.NUMBER, value, pos), end


def _read_string(source: str, pos: int) -> Tuple[Token, int]:
    quote = source[pos]
    chars: List[str] = []
    index = pos + 1
    while index < len(source):
        char = source[index]
        if char == quote:
            return Token(TokenKind.STRING, "".join(chars), pos), index + 1
        if char == "\\" and index + 1 < len(source):
            escape = source[index + 1]
            if escape not in _ESCAPES:
                raise ParseError(f"unknown escape sequence '\\{escape}'", index)
            chars.append(_ESCAPES[escape])
            index += 2
            continue
        chars.append(char)
        index += 1
    raise ParseError("unterminated string", pos)


def tokenize(source: str) -> List[Token]:
    """Split ``source`` into tokens, ending with an ``EOF`` token.

    Raises ``ParseError`` for characters that cannot start a token,
    malformed numbers and unterminated strings.
    """
    tokens: List[Token] = []
    pos = 0
    while pos < len(source):
        char = source[pos]
        if char.isspace():
            pos += 1
        elif char.isdigit() or (char == "." and source[pos + 1:pos + 2].isdigit()):
            token, pos = _read_number(source, pos)
            tokens.append(token)
        elif char.isascii() and (char.isalpha() or char == "_"):
            word = _NAME_RE.match(source, pos).group()
            kind = TokenKind.KEYWORD if word in KEYWORDS else TokenKind.NAME
            tokens.append(Token(kind, word, pos))
            pos += len(word)
        elif char in "\"'":
            token, pos = _read_string(source, pos)
            tokens.append(token)
        elif char in _PUNCTUATION:
            tokens.append(Token(_PUNCTUATION[char], char, pos))
            pos += 1
        else:
            operator = next((op for op in OPERATORS if source.startswith(op, pos)), None)
            if operator is None:
                raise ParseError(f"unexpected character {char!r}", pos)
            tokens.append(Token(TokenKind.OPERATOR, operator, pos))
            pos += len(operator)
    tokens.append(Token(TokenKind.EOF, None, len(source)))
    return tokens

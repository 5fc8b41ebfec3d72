"""A Pratt (top-down operator precedence) parser producing ``nodes`` trees."""

from __future__ import annotations

from typing import List, Optional

from exprcalc.errors import ParseError
from exprcalc.nodes import BinaryOp, Boolean, Call, Name, Node, Number, String, UnaryOp
from exprcalc.tokens import Token, TokenKind, tokenize

#: Binding power of binary operators (higher binds tighter).
PRECEDENCE = {
    "or": 1,
    "and": 2,
    "==": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "//": 6,
    "%": 6,
    "**": 8,
}
NOT_PRECEDENCE = 3
UNARY_PRECEDENCE = 7
RIGHT_ASSOCIATIVE = frozenset({"**"})
COMPARISON_OPERATORS = frozenset({"==", "!=", "<", "<=", ">", ">="})
LOGICAL_OPERATORS = frozenset({"and", "or"})


class Parser:
    """Parses one expression from ``source``.

    Use :func:`parse` unless you need access to the token stream.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens: List[Token] = tokenize(source)
        self.index = 0

    def peek(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        """Consume and return the current token (``EOF`` is never consumed)."""
        token = self.tokens[self.index]
        if token.kind is not TokenKind.EOF:
            self.index += 1
        return token

    def expect(self, kind: TokenKind, expected: str) -> Token:
        token = self.peek()
        if token.kind is not kind:
            raise ParseError(f"expected {expected}, found {token.describe()}", token.pos)
        return self.advance()

    def parse(self) -> Node:
        """Parse the whole source; trailing tokens are an error."""
        expression = self.parse_expression(0)
        token = self.peek()
        if token.kind is not TokenKind.EOF:
            raise ParseError(f"unexpected {token.describe()}", token.pos)
        return expression

    @staticmethod
    def _binary_operator(token: Token) -> Optional[str]:
        if token.kind is TokenKind.OPERATOR and token.value in PRECEDENCE:
            return str(token.value)
        if token.kind is TokenKind.KEYWORD and token.value in LOGICAL_OPERATORS:
            return str(token.value)
        return None

    def parse_expression(self, min_precedence: int = 0) -> Node:
        """Parse operators that bind tighter than ``min_precedence``."""
        left = self.parse_prefix()
        after_comparison = False
        while True:
            token = self.peek()
            op = self._binary_operator(token)
            if op is None or PRECEDENCE[op] <= min_precedence:
                return left
            if op in COMPARISON_OPERATORS and after_comparison:
                raise ParseError("comparison operators cannot be chained", token.pos)
            self.advance()
            precedence = PRECEDENCE[op]
            right = self.parse_expression(precedence - 1 if op in RIGHT_ASSOCIATIVE else precedence)
            left = BinaryOp(op, left, right, pos=token.pos)
            after_comparison = op in COMPARISON_OPERATORS

    def parse_prefix(self) -> Node:
        token = self.advance()
        kind = token.kind
        if kind is TokenKind.NUMBER:
            return Number(token.value, pos=token.pos)  # type: ignore[arg-type]
        if kind is TokenKind.STRING:
            return String(str(token.value), pos=token.pos)
        if kind is TokenKind.NAME:
            if self.peek().kind is TokenKind.LPAREN:
                return self.parse_call(token)
            return Name(str(token.value), pos=token.pos)
        if kind is TokenKind.KEYWORD and token.value in ("true", "false"):
            return Boolean(token.value == "true", pos=token.pos)
        if kind is TokenKind.KEYWORD and token.value == "not":
            return UnaryOp("not", self.parse_expression(NOT_PRECEDENCE), pos=token.pos)
        if kind is TokenKind.OPERATOR and token.value in ("-", "+"):
            return UnaryOp(str(token.value), self.parse_expression(UNARY_PRECEDENCE), pos=token.pos)
        if kind is TokenKind.LPAREN:
            inner = self.parse_expression(0)
            self.expect(TokenKind.RPAREN, "')'")
            return inner
        raise ParseError(f"unexpected {token.describe()}", token.pos)

    def parse_call(self, name: Token) -> Call:
        self.expect(TokenKind.LPAREN, "'('")
        args: List[Node] = []
        if self.peek().kind is not TokenKind.RPAREN:
            args.append(self.parse_expression(0))
            while self.peek().kind is TokenKind.COMMA:
                self.advance()
                args.append(self.parse_expression(0))
        self.expect(TokenKind.RPAREN, "',' or ')'")
        return Call(str(name.value), tuple(args), pos=name.pos)


def parse(source: str) -> Node:
    """Parse ``source`` into an AST, raising ``ParseError`` on invalid input."""
    return Parser(source).parse()

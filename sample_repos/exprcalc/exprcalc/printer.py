"""Turn an AST back into source text with as few parentheses as possible."""

from __future__ import annotations

import math

from exprcalc.nodes import BinaryOp, Boolean, Call, Name, Node, Number, String, UnaryOp
from exprcalc.parser import (
    COMPARISON_OPERATORS,
    NOT_PRECEDENCE,
    PRECEDENCE,
    RIGHT_ASSOCIATIVE,
    UNARY_PRECEDENCE,
)

#: Precedence of atoms (literals, names, calls): never need parentheses.
ATOM_PRECEDENCE = 100

_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


def precedence(node: Node) -> int:
    """How tightly ``node`` binds when printed without parentheses."""
    if isinstance(node, BinaryOp):
        return PRECEDENCE[node.op]
    if isinstance(node, UnaryOp):
        return NOT_PRECEDENCE if node.op == "not" else UNARY_PRECEDENCE
    if isinstance(node, Number) and (node.value < 0 or math.copysign(1.0, node.value) < 0):
        return UNARY_PRECEDENCE
    return ATOM_PRECEDENCE


def format_number(value: float) -> str:
    """Source text for a numeric literal (``repr`` keeps floats exact)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} has no literal form")
    return repr(value)


def quote_string(value: str) -> str:
    """Double-quoted string literal with the escapes the tokenizer understands."""
    escaped = "".join(_STRING_ESCAPES.get(char, char) for char in value)
    return f'"{escaped}"'


def _parenthesize(text: str, needed: bool) -> str:
    return f"({text})" if needed else text


def _is_sign(node: Node) -> bool:
    return isinstance(node, UnaryOp) and node.op in ("-", "+")


def _format_unary(node: UnaryOp) -> str:
    operand = to_source(node.operand)
    if node.op == "not":
        return "not " + _parenthesize(operand, precedence(node.operand) < NOT_PRECEDENCE)
    return node.op + _parenthesize(operand, precedence(node.operand) < UNARY_PRECEDENCE)


def _format_binary(node: BinaryOp) -> str:
    own = PRECEDENCE[node.op]
    left, right = precedence(node.left), precedence(node.right)
    if node.op in RIGHT_ASSOCIATIVE:
        left_parens = left <= own
        # ``2 ** -x`` parses fine: the right operand of ``**`` may start with a sign.
        right_parens = right < own and not _is_sign(node.right)
    elif node.op in COMPARISON_OPERATORS:
        left_parens = left <= own
        right_parens = right <= own
    else:
        left_parens = left < own
        right_parens = right <= own
    left_text = _parenthesize(to_source(node.left), left_parens)
    right_text = _parenthesize(to_source(node.right), right_parens)
    return f"{left_text} {node.op} {right_text}"


def to_source(node: Node) -> str:
    """Source text that parses back to an equal AST.

    >>> from exprcalc.parser import parse
    >>> to_source(parse("((1 + 2)) * (3)"))
    '(1 + 2) * 3'
    """
    if isinstance(node, Number):
        return format_number(node.value)
    if isinstance(node, String):
        return quote_string(node.value)
    if isinstance(node, Boolean):
        return "true" if node.value else "false"
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Call):
        return f"{node.name}({', '.join(to_source(arg) for arg in node.args)})"
    if isinstance(node, UnaryOp):
        return _format_unary(node)
    if isinstance(node, BinaryOp):
        return _format_binary(node)
    raise TypeError(f"cannot print {type(node).__name__}")

"""Constant folding and algebraic simplification of ASTs.

The identities used (``x + 0 -> x``, ``x * 1 -> x``, ``--x -> x`` ...) assume
that variables used in arithmetic hold numbers.  Expressions whose constant
parts would fail at runtime (``1 / 0``) are left unfolded so that the error
is still reported, with its position, when the expression is evaluated.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from exprcalc.errors import EvalError
from exprcalc.evaluator import BUILTINS, Evaluator, apply_binary, apply_unary
from exprcalc.nodes import (
    NODE_TYPES,
    BinaryOp,
    Boolean,
    Call,
    Name,
    Node,
    Number,
    String,
    UnaryOp,
    is_constant,
)

#: Built-in functions without side effects that may be evaluated ahead of time.
FOLDABLE_FUNCTIONS = frozenset(BUILTINS)


def make_constant(value: Any, pos: int = -1) -> Optional[Node]:
    """Wrap a Python value in the matching literal node (``None`` if impossible)."""
    if isinstance(value, bool):
        return Boolean(value, pos=pos)
    if isinstance(value, (int, float)):
        return Number(value, pos=pos)
    if isinstance(value, str):
        return String(value, pos=pos)
    return None


def _is_number(node: Node, value: float) -> bool:
    return isinstance(node, Number) and node.value == value


def _fold_binary(op: str, left: Node, right: Node, pos: int) -> Optional[Node]:
    """Evaluate an operator applied to two literals, or ``None`` if it would fail."""
    if op in ("and", "or"):
        if isinstance(left, Boolean) and isinstance(right, Boolean):
            value = left.value and right.value if op == "and" else left.value or right.value
            return Boolean(value, pos=pos)
        return None
    try:
        return make_constant(apply_binary(op, left.value, right.value, pos), pos)  # type: ignore[union-attr]
    except EvalError:
        return None


def _apply_identities(op: str, left: Node, right: Node) -> Optional[Node]:
    """Algebraic shortcuts; ``None`` when no rule applies."""
    if op == "+" and _is_number(right, 0):
        return left
    if op == "+" and _is_number(left, 0):
        return right
    if op == "-" and _is_number(right, 0):
        return left
    if op in ("*", "/") and _is_number(right, 1):
        return left
    if op == "*" and _is_number(left, 1):
        return right
    if op == "**" and _is_number(right, 1):
        return left
    if op == "**" and _is_number(right, 0):
        return Number(1, pos=left.pos)
    if op == "and" and left == Boolean(False):
        return left
    if op == "or" and left == Boolean(True):
        return left
    return None


def _simplify_unary(node: UnaryOp, fold_calls: bool) -> Node:
    operand = simplify(node.operand, fold_calls)
    if is_constant(operand):
        try:
            folded = make_constant(apply_unary(node.op, operand.value, node.pos), node.pos)  # type: ignore[union-attr]
        except EvalError:
            folded = None
        if folded is not None:
            return folded
    if node.op == "-" and isinstance(operand, UnaryOp) and operand.op == "-":
        return operand.operand
    return UnaryOp(node.op, operand, pos=node.pos)


def _simplify_binary(node: BinaryOp, fold_calls: bool) -> Node:
    left = simplify(node.left, fold_calls)
    right = simplify(node.right, fold_calls)
    if is_constant(left) and is_constant(right):
        folded = _fold_binary(node.op, left, right, node.pos)
        if folded is not None:
            return folded
    shortcut = _apply_identities(node.op, left, right)
    if shortcut is not None:
        return shortcut
    return BinaryOp(node.op, left, right, pos=node.pos)


def _simplify_call(node: Call, fold_calls: bool) -> Node:
    args = tuple(simplify(arg, fold_calls) for arg in node.args)
    if node.name == "if" and len(args) == 3 and isinstance(args[0], Boolean):
        return args[1] if args[0].value else args[2]
    call = Call(node.name, args, pos=node.pos)
    if fold_calls and node.name in FOLDABLE_FUNCTIONS and all(is_constant(arg) for arg in args):
        try:
            folded = make_constant(Evaluator().evaluate(call), node.pos)
        except EvalError:
            folded = None
        if folded is not None:
            return folded
    return call


def simplify(node: Node, fold_calls: bool = True) -> Node:
    """Return an equivalent, usually smaller AST.

    >>> from exprcalc.parser import parse
    >>> from exprcalc.printer import to_source
    >>> to_source(simplify(parse("x * (2 + 3) + 0")))
    'x * 5'
    """
    if isinstance(node, UnaryOp):
        return _simplify_unary(node, fold_calls)
    if isinstance(node, BinaryOp):
        return _simplify_binary(node, fold_calls)
    if isinstance(node, Call):
        return _simplify_call(node, fold_calls)
    return node


def substitute(node: Node, bindings: Mapping[str, Any]) -> Node:
    """Replace variables named in ``bindings`` by literals (or by AST nodes)."""
    if isinstance(node, Name) and node.name in bindings:
        value = bindings[node.name]
        replacement = value if isinstance(value, NODE_TYPES) else make_constant(value, node.pos)
        if replacement is None:
            raise TypeError(f"cannot substitute a {type(value).__name__} for '{node.name}'")
        return replacement
    if isinstance(node, UnaryOp):
        return UnaryOp(node.op, substitute(node.operand, bindings), pos=node.pos)
    if isinstance(node, BinaryOp):
        return BinaryOp(node.op, substitute(node.left, bindings), substitute(node.right, bindings), pos=node.pos)
    if isinstance(node, Call):
        return Call(node.name, tuple(substitute(arg, bindings) for arg in node.args), pos=node.pos)
    return node

"""AST node classes and generic tree helpers.

Nodes are frozen dataclasses.  Each node remembers the source position
(``pos``) it came from, but positions are ignored when comparing nodes, so
``parse("1+2") == parse("1 + 2")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Set, Tuple, Union


@dataclass(frozen=True)
class Number:
    value: Union[int, float]
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class String:
    value: str
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class Boolean:
    value: bool
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class Name:
    name: str
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class UnaryOp:
    op: str
    operand: "Node"
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class BinaryOp:
    op: str
    left: "Node"
    right: "Node"
    pos: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True)
class Call:
    name: str
    args: Tuple["Node", ...] = ()
    pos: int = field(default=-1, compare=False, repr=False)


Node = Union[Number, String, Boolean, Name, UnaryOp, BinaryOp, Call]
NODE_TYPES = (Number, String, Boolean, Name, UnaryOp, BinaryOp, Call)
Constant = Union[Number, String, Boolean]


def children(node: Node) -> Tuple[Node, ...]:
    """The direct sub-expressions of ``node``, left to right."""
    if isinstance(node, UnaryOp):
        return (node.operand,)
    if isinstance(node, BinaryOp):
        return (node.left, node.right)
    if isinstance(node, Call):
        return tuple(node.args)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """Yield ``node`` and all of its descendants in pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def free_variables(node: Node) -> Set[str]:
    """Names of all variables referenced by the expression."""
    return {item.name for item in walk(node) if isinstance(item, Name)}


def is_constant(node: Node) -> bool:
    return isinstance(node, (Number, String, Boolean))

"""exprcalc -- a small, safe expression language."""

from exprcalc.errors import EvalError, ExprError, ParseError
from exprcalc.evaluator import Evaluator, evaluate
from exprcalc.nodes import (
    BinaryOp,
    Boolean,
    Call,
    Name,
    Number,
    String,
    UnaryOp,
    free_variables,
    walk,
)
from exprcalc.parser import parse
from exprcalc.printer import to_source
from exprcalc.simplify import simplify, substitute
from exprcalc.tokens import Token, TokenKind, tokenize

__version__ = "1.0.0"

__all__ = [
    "BinaryOp",
    "Boolean",
    "Call",
    "EvalError",
    "Evaluator",
    "ExprError",
    "Name",
    "Number",
    "ParseError",
    "String",
    "Token",
    "TokenKind",
    "UnaryOp",
    "evaluate",
    "free_variables",
    "parse",
    "simplify",
    "substitute",
    "to_source",
    "tokenize",
    "walk",
]

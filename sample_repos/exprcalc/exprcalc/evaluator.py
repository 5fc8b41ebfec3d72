"""Evaluating ASTs: variables, operators, built-in and user functions."""

from __future__ import annotations

import inspect
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from exprcalc.errors import EvalError
from exprcalc.nodes import BinaryOp, Boolean, Call, Name, Node, Number, String, UnaryOp
from exprcalc.parser import parse
from exprcalc.tokens import KEYWORDS

#: Integer exponents above this are refused to keep evaluation fast and safe.
MAX_EXPONENT = 10_000

CONSTANTS: Mapping[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

ORDERING_OPERATORS = frozenset({"<", "<=", ">", ">="})
ARITHMETIC_OPERATORS = frozenset({"+", "-", "*", "/", "//", "%", "**"})


def type_name(value: Any) -> str:
    """The expression-language name of a Python value's type."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_numbers(function: str, values: Tuple[Any, ...]) -> None:
    for value in values:
        if not _is_number(value):
            raise TypeError(f"{function}() expects numbers, got {type_name(value)}")


def _power(base: Union[int, float], exponent: Union[int, float]) -> Union[int, float]:
    if isinstance(base, int) and isinstance(exponent, int) and abs(exponent) > MAX_EXPONENT:
        raise OverflowError("exponent too large")
    result = base ** exponent
    if isinstance(result, complex):
        raise ValueError("negative number cannot be raised to a fractional power")
    return result


def _values_equal(left: Any, right: Any) -> bool:
    """Equality that never treats booleans as numbers (``true != 1``)."""
    return type_name(left) == type_name(right) and left == right


def _values_differ(left: Any, right: Any) -> bool:
    return not _values_equal(left, right)


_BINARY_OPERATIONS: Dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": _power,
    "==": _values_equal,
    "!=": _values_differ,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _check_operands(op: str, left: Any, right: Any, pos: Optional[int]) -> None:
    """Raise ``EvalError`` unless ``op`` is defined for the operand types."""
    if op in ("==", "!="):
        return
    both_numbers = _is_number(left) and _is_number(right)
    both_strings = isinstance(left, str) and isinstance(right, str)
    if both_numbers or (both_strings and (op == "+" or op in ORDERING_OPERATORS)):
        return
    raise EvalError(
        f"unsupported operand types for {op}: {type_name(left)} and {type_name(right)}", pos
    )


def apply_binary(op: str, left: Any, right: Any, pos: Optional[int] = None) -> Any:
    """Apply a (non-logical) binary operator to two values."""
    if op not in _BINARY_OPERATIONS:
        raise EvalError(f"unknown operator {op!r}", pos)
    _check_operands(op, left, right, pos)
    try:
        return _BINARY_OPERATIONS[op](left, right)
    except ZeroDivisionError:
        raise EvalError("division by zero", pos) from None
    except OverflowError as exc:
        raise EvalError(f"numeric overflow: {exc}", pos) from None
    except ValueError as exc:
        raise EvalError(str(exc), pos) from None


def apply_unary(op: str, value: Any, pos: Optional[int] = None) -> Any:
    """Apply a unary operator (``-``, ``+`` or ``not``) to a value."""
    if op == "not" and isinstance(value, bool):
        return not value
    if op == "-" and _is_number(value):
        return -value
    if op == "+" and _is_number(value):
        return value
    raise EvalError(f"bad operand type for unary {op}: {type_name(value)}", pos)


# -- built-in functions ---------------------------------------------------------


def _min(*values: Any) -> Any:
    _check_numbers("min", values)
    return min(values)


def _max(*values: Any) -> Any:
    _check_numbers("max", values)
    return max(values)


def _avg(*values: Any) -> float:
    _check_numbers("avg", values)
    return sum(values) / len(values)


def _sqrt(value: Any) -> float:
    _check_numbers("sqrt", (value,))
    if value < 0:
        raise ValueError("cannot take the square root of a negative number")
    return math.sqrt(value)


def _log(value: Any, base: Any = math.e) -> float:
    _check_numbers("log", (value, base))
    if value <= 0:
        raise ValueError("logarithm is only defined for positive numbers")
    if base <= 0 or base == 1:
        raise ValueError("logarithm base must be positive and not 1")
    return math.log(value, base)


def _round(value: Any, ndigits: Any = None) -> Union[int, float]:
    """Round half to even; with ``ndigits`` keep that many decimals."""
    if ndigits is None:
        _check_numbers("round", (value,))
        return round(value)
    _check_numbers("round", (value, ndigits))
    if not float(ndigits).is_integer():
        raise ValueError("ndigits must be a whole number")
    return round(value, int(ndigits))


def _clamp(value: Any, low: Any, high: Any) -> Any:
    _check_numbers("clamp", (value, low, high))
    if low > high:
        raise ValueError("clamp() lower bound is greater than upper bound")
    return max(low, min(value, high))


def _length(value: Any) -> int:
    if not isinstance(value, str):
        raise TypeError(f"len() expects a string, got {type_name(value)}")
    return len(value)


#: name -> (callable, minimum argument count, maximum argument count or None)
BUILTINS: Mapping[str, Tuple[Callable[..., Any], int, Optional[int]]] = {
    "abs": (abs, 1, 1),
    "min": (_min, 1, None),
    "max": (_max, 1, None),
    "avg": (_avg, 1, None),
    "round": (_round, 1, 2),
    "sqrt": (_sqrt, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "exp": (math.exp, 1, 1),
    "log": (_log, 1, 2),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "hypot": (math.hypot, 2, None),
    "clamp": (_clamp, 3, 3),
    "len": (_length, 1, 1),
}

#: Names handled by the evaluator itself rather than by a Python callable.
SPECIAL_FORMS = frozenset({"if"})


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def infer_arity(func: Callable[..., Any]) -> Tuple[int, Optional[int]]:
    """``(min_args, max_args)`` of a Python callable; ``max_args`` is ``None`` for ``*args``."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return 0, None
    minimum, maximum = 0, 0
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            return minimum, None
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            maximum += 1
            if parameter.default is parameter.empty:
                minimum += 1
    return minimum, maximum


@dataclass(frozen=True)
class FunctionSpec:
    """A callable exposed to expressions, with its accepted argument counts."""

    name: str
    func: Callable[..., Any]
    min_args: int
    max_args: Optional[int]

    def describe_arity(self) -> str:
        if self.max_args is None:
            return f"at least {_plural(self.min_args, 'argument')}"
        if self.min_args == self.max_args:
            return _plural(self.min_args, "argument")
        return f"{self.min_args} to {self.max_args} arguments"

    def check_arity(self, count: int, pos: Optional[int] = None) -> None:
        too_many = self.max_args is not None and count > self.max_args
        if count < self.min_args or too_many:
            given = "1 was" if count == 1 else f"{count} were"
            raise EvalError(f"{self.name}() takes {self.describe_arity()} but {given} given", pos)


class Evaluator:
    """Evaluates expressions against variables and a table of functions.

    >>> calc = Evaluator(variables={"x": 2})
    >>> calc.register("double", lambda n: n * 2)
    >>> calc.evaluate("double(x) + 1")
    5
    """

    def __init__(
        self,
        variables: Optional[Mapping[str, Any]] = None,
        functions: Optional[Mapping[str, Callable[..., Any]]] = None,
        include_builtins: bool = True,
    ) -> None:
        self.variables: Dict[str, Any] = dict(variables or {})
        self.functions: Dict[str, FunctionSpec] = {}
        if include_builtins:
            for name, (func, min_args, max_args) in BUILTINS.items():
                self.functions[name] = FunctionSpec(name, func, min_args, max_args)
        for name, func in (functions or {}).items():
            self.register(name, func)

    def register(
        self,
        name: str,
        func: Callable[..., Any],
        min_args: Optional[int] = None,
        max_args: Optional[int] = None,
    ) -> None:
        """Make ``func`` callable from expressions as ``name(...)``.

        The accepted argument counts are inferred from the signature unless
        ``min_args`` is given.  Registering an existing name replaces it.
        """
        if not name.isidentifier() or name in KEYWORDS or name in SPECIAL_FORMS:
            raise ValueError(f"invalid function name {name!r}")
        if min_args is None:
            min_args, max_args = infer_arity(func)
        self.functions[name] = FunctionSpec(name, func, min_args, max_args)

    def unregister(self, name: str) -> None:
        if name not in self.functions:
            raise KeyError(name)
        del self.functions[name]

    def evaluate(self, expression: Union[str, Node], variables: Optional[Mapping[str, Any]] = None) -> Any:
        """Evaluate source text or an AST.

        ``variables`` are layered over the evaluator's own variables, which
        are layered over the constants ``pi``, ``e`` and ``tau``.
        """
        node = parse(expression) if isinstance(expression, str) else expression
        scope = {**CONSTANTS, **self.variables, **(variables or {})}
        return self._eval(node, scope)

    def compile(self, source: str) -> Callable[..., Any]:
        """Parse once and return a function evaluating with keyword variables."""
        node = parse(source)

        def run(**variables: Any) -> Any:
            return self.evaluate(node, variables)

        return run

    # -- node dispatch ----------------------------------------------------------

    def _eval(self, node: Node, scope: Mapping[str, Any]) -> Any:
        if isinstance(node, (Number, String, Boolean)):
            return node.value
        if isinstance(node, Name):
            return self._eval_name(node, scope)
        if isinstance(node, UnaryOp):
            return apply_unary(node.op, self._eval(node.operand, scope), node.pos)
        if isinstance(node, BinaryOp):
            return self._eval_binary(node, scope)
        if isinstance(node, Call):
            return self._eval_call(node, scope)
        raise TypeError(f"cannot evaluate {type(node).__name__}")

    def _eval_name(self, node: Name, scope: Mapping[str, Any]) -> Any:
        try:
            return scope[node.name]
        except KeyError:
            raise EvalError(f"unknown variable '{node.name}'", node.pos) from None

    def _eval_binary(self, node: BinaryOp, scope: Mapping[str, Any]) -> Any:
        if node.op in ("and", "or"):
            left = self._require_boolean(self._eval(node.left, scope), node.op, node.pos)
            if left is (node.op == "or"):
                return left
            return self._require_boolean(self._eval(node.right, scope), node.op, node.pos)
        left = self._eval(node.left, scope)
        right = self._eval(node.right, scope)
        return apply_binary(node.op, left, right, node.pos)

    @staticmethod
    def _require_boolean(value: Any, op: str, pos: int) -> bool:
        if not isinstance(value, bool):
            raise EvalError(f"operands of '{op}' must be booleans, got {type_name(value)}", pos)
        return value

    def _eval_if(self, node: Call, scope: Mapping[str, Any]) -> Any:
        if len(node.args) != 3:
            raise EvalError(f"if() takes 3 arguments but {len(node.args)} were given", node.pos)
        condition = self._eval(node.args[0], scope)
        if not isinstance(condition, bool):
            raise EvalError(f"if() condition must be a boolean, got {type_name(condition)}", node.pos)
        return self._eval(node.args[1] if condition else node.args[2], scope)

    def _eval_call(self, node: Call, scope: Mapping[str, Any]) -> Any:
        if node.name == "if":
            return self._eval_if(node, scope)
        spec = self.functions.get(node.name)
        if spec is None:
            raise EvalError(f"unknown function '{node.name}'", node.pos)
        spec.check_arity(len(node.args), node.pos)
        args = [self._eval(arg, scope) for arg in node.args]
        try:
            return spec.func(*args)
        except EvalError:
            raise
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise EvalError(f"{node.name}(): {exc}", node.pos) from exc


def evaluate(source: str, **variables: Any) -> Any:
    """Evaluate ``source`` with a fresh default :class:`Evaluator`."""
    return Evaluator().evaluate(source, variables)

import pytest

from exprcalc import Evaluator, parse, to_source
from exprcalc.nodes import BinaryOp, Boolean, Name, Number, String
from exprcalc.simplify import make_constant, simplify, substitute


def simplified(source, **kwargs):
    return to_source(simplify(parse(source), **kwargs))


@pytest.mark.parametrize(
    "source, expected",
    [
        ("1 + 2 * 3", "7"),
        ("x * (2 + 3) + 0", "x * 5"),
        ("0 + x", "x"),
        ("x - 0", "x"),
        ("1 * x", "x"),
        ("x / 1", "x"),
        ("x ** 1", "x"),
        ("x ** 0", "1"),
        ("--x", "x"),
        ("-(2 + 3)", "-5"),
        ("-(-(x))", "x"),
        ("not true", "false"),
        ("true and false", "false"),
        ("false and x", "false"),
        ("true or x", "true"),
        ("x and true", "x and true"),
        ('"a" + "b"', '"ab"'),
        ("2 < 3", "true"),
        ("sqrt(16) + x", "4.0 + x"),
        ("max(1, 5, 3) * y", "5 * y"),
        ("if(1 > 2, a, b)", "b"),
        ("if(true, a + 0, b)", "a"),
        ("if(c, 1 + 1, 2)", "if(c, 2, 2)"),
        ("f(1 + 1)", "f(2)"),
        ("x + y", "x + y"),
        ("2 * x * 3", "2 * x * 3"),
    ],
)
def test_simplify(source, expected):
    assert simplified(source) == expected


@pytest.mark.parametrize("source", ["1 / 0", "sqrt(-1)", "-'a'", "1 + 'a'", "len(1)", "1 and true"])
def test_failing_constant_parts_are_left_alone(source):
    assert simplified(source) == to_source(parse(source))


def test_fold_calls_can_be_disabled():
    assert simplified("sqrt(16) + 1", fold_calls=False) == "sqrt(16) + 1"


def test_simplify_keeps_value(calc):
    source = "(x + 0) * (1 + 1) ** 2 - double(y * 1) + max(2, 3)"
    assert calc.evaluate(simplify(parse(source))) == calc.evaluate(source) == 7


def test_simplify_keeps_error_positions():
    tree = simplify(parse("x + 1 / 0"))
    with pytest.raises(Exception) as info:
        Evaluator().evaluate(tree, {"x": 1})
    assert info.value.position == 6


def test_folded_constants_remember_position():
    tree = simplify(parse("x + (2 * 3)"))
    assert tree.right == Number(6)
    assert tree.right.pos == 7


@pytest.mark.parametrize(
    "value, node",
    [(True, Boolean(True)), (3, Number(3)), (2.5, Number(2.5)), ("s", String("s")), (None, None), ([1], None)],
)
def test_make_constant(value, node):
    assert make_constant(value) == node


def test_substitute_values():
    tree = substitute(parse("a * b + c"), {"a": 2, "b": 3.5, "c": "x"})
    assert tree == BinaryOp("+", BinaryOp("*", Number(2), Number(3.5)), String("x"))


def test_substitute_nodes_and_inside_calls():
    tree = substitute(parse("f(-a, not b)"), {"a": parse("x + 1"), "b": False})
    assert to_source(tree) == "f(-(x + 1), not false)"


def test_substitute_leaves_unbound_names():
    assert substitute(parse("a + b"), {"a": 1}) == BinaryOp("+", Number(1), Name("b"))


def test_substitute_then_simplify():
    assert to_source(simplify(substitute(parse("rate * hours + bonus"), {"rate": 20, "hours": 8}))) == "160 + bonus"


def test_substitute_rejects_unsupported_values():
    with pytest.raises(TypeError, match="cannot substitute a list for 'a'"):
        substitute(parse("a"), {"a": [1]})

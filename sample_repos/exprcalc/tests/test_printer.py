import pytest

from exprcalc.nodes import BinaryOp, Boolean, Call, Name, Number, String, UnaryOp
from exprcalc.parser import parse
from exprcalc.printer import format_number, precedence, quote_string, to_source


@pytest.mark.parametrize(
    "source, expected",
    [
        ("1+2", "1 + 2"),
        ("((1 + 2)) * (3)", "(1 + 2) * 3"),
        ("(a + (b * c)) - (d - e)", "a + b * c - (d - e)"),
        ("(a - b) - c", "a - b - c"),
        ("a - (b - c)", "a - (b - c)"),
        ("a - (b + c)", "a - (b + c)"),
        ("(a * b) / c", "a * b / c"),
        ("a / (b * c)", "a / (b * c)"),
        ("a ** (b ** c)", "a ** b ** c"),
        ("(a ** b) ** c", "(a ** b) ** c"),
        ("-(a ** 2)", "-a ** 2"),
        ("(-a) ** 2", "(-a) ** 2"),
        ("a ** (-b)", "a ** -b"),
        ("-(a + b)", "-(a + b)"),
        ("-(-a)", "--a"),
        ("(a * -b)", "a * -b"),
        ("not (a and b)", "not (a and b)"),
        ("(not a) and b", "not a and b"),
        ("not (a == b)", "not a == b"),
        ("(a or b) and c", "(a or b) and c"),
        ("a or (b and c)", "a or b and c"),
        ("(a < b) == (c < d)", "(a < b) == (c < d)"),
        ("(a + 1) < (b * 2)", "a + 1 < b * 2"),
        ("max((a), (b + 1), f())", "max(a, b + 1, f())"),
        ("'it\\'s'", '"it\'s"'),
        ("true or false", "true or false"),
        ("2.50", "2.5"),
        ("1e20", "1e+20"),
    ],
)
def test_to_source(source, expected):
    assert to_source(parse(source)) == expected


@pytest.mark.parametrize(
    "source",
    [
        "a - (b - (c - d))",
        "((a - b) - c) - d",
        "-(-(-x)) ** -y ** 2",
        "not not (a or b) and c",
        "(1 + 2) * (3 - 4) / (5 % (6 // 7))",
        "f(g(1, 2), h()) ** (a < b)",
        "((a ** b) ** c) ** d",
        '"x\\ty\\n\\\\" + "q\\"uote"',
        "-1.5e-7 * (x + .25)",
    ],
)
def test_round_trip(source):
    tree = parse(source)
    printed = to_source(tree)
    assert parse(printed) == tree
    assert to_source(parse(printed)) == printed


def test_prints_hand_built_trees():
    tree = BinaryOp("*", BinaryOp("+", Name("a"), Number(1)), Call("sqrt", (Number(2.0),)))
    assert to_source(tree) == "(a + 1) * sqrt(2.0)"


def test_negative_number_literals_get_parentheses_when_needed():
    assert to_source(BinaryOp("**", Number(-2), Number(2))) == "(-2) ** 2"
    assert to_source(BinaryOp("-", Name("a"), Number(-3))) == "a - -3"
    assert to_source(UnaryOp("-", Number(-0.0))) == "--0.0"


@pytest.mark.parametrize(
    "node, expected",
    [
        (Number(1), 100),
        (Number(-1), 7),
        (Name("x"), 100),
        (UnaryOp("-", Name("x")), 7),
        (UnaryOp("not", Name("x")), 3),
        (BinaryOp("or", Name("x"), Name("y")), 1),
        (BinaryOp("**", Name("x"), Name("y")), 8),
    ],
)
def test_precedence(node, expected):
    assert precedence(node) == expected


@pytest.mark.parametrize(
    "value, text",
    [("plain", '"plain"'), ('say "hi"', '"say \\"hi\\""'), ("a\\b", '"a\\\\b"'), ("tab\there\n", '"tab\\there\\n"')],
)
def test_quote_string(value, text):
    assert quote_string(value) == text
    assert parse(text) == String(value)


def test_format_number():
    assert format_number(3) == "3"
    assert format_number(0.1) == "0.1"
    with pytest.raises(ValueError, match="no literal form"):
        format_number(float("inf"))


def test_booleans():
    assert to_source(Boolean(True)) == "true"
    assert to_source(Boolean(False)) == "false"


def test_unknown_node():
    with pytest.raises(TypeError):
        to_source("not a node")

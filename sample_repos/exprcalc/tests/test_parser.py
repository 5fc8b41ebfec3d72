import pytest

from exprcalc.errors import ParseError
from exprcalc.nodes import BinaryOp, Boolean, Call, Name, Number, String, UnaryOp
from exprcalc.parser import Parser, parse
from exprcalc.tokens import TokenKind


def B(op, left, right):
    return BinaryOp(op, left, right)


N = Number
x, y, z = Name("x"), Name("y"), Name("z")


@pytest.mark.parametrize(
    "source, tree",
    [
        ("42", N(42)),
        ("x", x),
        ('"s"', String("s")),
        ("true", Boolean(True)),
        ("false", Boolean(False)),
        ("1 + 2 * 3", B("+", N(1), B("*", N(2), N(3)))),
        ("(1 + 2) * 3", B("*", B("+", N(1), N(2)), N(3))),
        ("x - y - z", B("-", B("-", x, y), z)),
        ("x / y * z", B("*", B("/", x, y), z)),
        ("x ** y ** z", B("**", x, B("**", y, z))),
        ("-x ** 2", UnaryOp("-", B("**", x, N(2)))),
        ("(-x) ** 2", B("**", UnaryOp("-", x), N(2))),
        ("x ** -y", B("**", x, UnaryOp("-", y))),
        ("-x * y", B("*", UnaryOp("-", x), y)),
        ("--x", UnaryOp("-", UnaryOp("-", x))),
        ("+x", UnaryOp("+", x)),
        ("x + y < z", B("<", B("+", x, y), z)),
        ("x < y and y < z", B("and", B("<", x, y), B("<", y, z))),
        ("x or y and z", B("or", x, B("and", y, z))),
        ("not x and y", B("and", UnaryOp("not", x), y)),
        ("not x == y", UnaryOp("not", B("==", x, y))),
        ("x % y // z", B("//", B("%", x, y), z)),
        ("f()", Call("f", ())),
        ("max(x, y + 1, 2)", Call("max", (x, B("+", y, N(1)), N(2)))),
        ("f(g(x))", Call("f", (Call("g", (x,)),))),
        ("((x))", x),
    ],
)
def test_parse_tree(source, tree):
    assert parse(source) == tree


def test_positions_are_recorded():
    tree = parse("a + f(b)")
    assert tree.pos == 2
    assert tree.left.pos == 0
    assert tree.right.pos == 4
    assert tree.right.args[0].pos == 6


def test_positions_do_not_affect_equality():
    assert parse("1+2") == parse("  1   +   2")


def test_parenthesised_comparisons_can_be_combined():
    assert parse("(x < y) == true") == B("==", B("<", x, y), Boolean(True))


@pytest.mark.parametrize(
    "source, message, position",
    [
        ("", "unexpected end of input", 0),
        ("1 +", "unexpected end of input", 3),
        ("1 + * 2", "unexpected operator '*'", 4),
        ("(1 + 2", "expected ')', found end of input", 6),
        ("1 + 2)", "unexpected ')'", 5),
        ("1 2", "unexpected number 2", 2),
        ("x y", "unexpected name 'y'", 2),
        ("f(1, 2", "expected ',' or ')', found end of input", 6),
        ("f(1,)", "unexpected ')'", 4),
        ("f(1 2)", "expected ',' or ')', found number 2", 4),
        ("a < b < c", "comparison operators cannot be chained", 6),
        ("a == b != c", "comparison operators cannot be chained", 7),
        ("a < b + 1 >= c", "comparison operators cannot be chained", 10),
        ("and x", "unexpected keyword 'and'", 0),
        (",", "unexpected ','", 0),
    ],
)
def test_parse_errors(source, message, position):
    with pytest.raises(ParseError) as info:
        parse(source)
    assert info.value.message == message
    assert info.value.position == position


class TestParserObject:
    def test_peek_and_advance(self):
        parser = Parser("a + 1")
        assert parser.peek().value == "a"
        assert parser.advance().value == "a"
        assert parser.peek().value == "+"

    def test_advance_stops_at_eof(self):
        parser = Parser("a")
        parser.advance()
        assert parser.advance().kind is TokenKind.EOF
        assert parser.advance().kind is TokenKind.EOF
        assert parser.index == 1

    def test_expect(self):
        parser = Parser("(")
        assert parser.expect(TokenKind.LPAREN, "'('").value == "("
        with pytest.raises(ParseError, match="expected name, found end of input"):
            parser.expect(TokenKind.NAME, "name")

    def test_parse_expression_respects_min_precedence(self):
        parser = Parser("1 + 2 * 3")
        assert parser.parse_expression(5) == N(1)
        assert parser.peek().value == "+"

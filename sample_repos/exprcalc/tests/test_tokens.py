import pytest

from exprcalc.errors import ParseError
from exprcalc.tokens import Token, TokenKind, tokenize

K = TokenKind


def kinds_and_values(source):
    return [(token.kind, token.value) for token in tokenize(source)]


@pytest.mark.parametrize(
    "source, value",
    [
        ("42", 42),
        ("0", 0),
        ("3.25", 3.25),
        ("7.", 7.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("2.5E-3", 0.0025),
        ("6e+2", 600.0),
    ],
)
def test_numbers(source, value):
    tokens = tokenize(source)
    assert tokens[0] == Token(K.NUMBER, value, 0)
    assert type(tokens[0].value) is type(value)
    assert tokens[1] == Token(K.EOF, None, len(source))


def test_names_keywords_and_positions():
    assert tokenize("foo and _bar2") == [
        Token(K.NAME, "foo", 0),
        Token(K.KEYWORD, "and", 4),
        Token(K.NAME, "_bar2", 8),
        Token(K.EOF, None, 13),
    ]


@pytest.mark.parametrize("word", ["and", "or", "not", "true", "false"])
def test_keywords(word):
    assert tokenize(word)[0].kind is K.KEYWORD


def test_keyword_prefix_is_a_name():
    assert kinds_and_values("android") == [(K.NAME, "android"), (K.EOF, None)]


def test_operators_use_longest_match():
    ops = [token.value for token in tokenize("** * // / == != <= >= < > + - %")[:-1]]
    assert ops == ["**", "*", "//", "/", "==", "!=", "<=", ">=", "<", ">", "+", "-", "%"]


def test_no_whitespace_needed():
    assert kinds_and_values("f(x,2)**-1") == [
        (K.NAME, "f"),
        (K.LPAREN, "("),
        (K.NAME, "x"),
        (K.COMMA, ","),
        (K.NUMBER, 2),
        (K.RPAREN, ")"),
        (K.OPERATOR, "**"),
        (K.OPERATOR, "-"),
        (K.NUMBER, 1),
        (K.EOF, None),
    ]


@pytest.mark.parametrize(
    "source, value",
    [
        ('"hello"', "hello"),
        ("'single'", "single"),
        ('"it\'s"', "it's"),
        (r'"a\nb\tc"', "a\nb\tc"),
        (r'"quote \" and backslash \\"', 'quote " and backslash \\'),
        ('""', ""),
    ],
)
def test_strings(source, value):
    assert tokenize(source)[0] == Token(K.STRING, value, 0)


def test_empty_source_is_just_eof():
    assert tokenize("   ") == [Token(K.EOF, None, 3)]


@pytest.mark.parametrize(
    "source, message, position",
    [
        ("1 + $", "unexpected character '$'", 4),
        ("a = 1", "unexpected character '='", 2),
        ("x & y", "unexpected character '&'", 2),
        ("café", "unexpected character 'é'", 3),
        ("12abc", "invalid number literal '12abc'", 0),
        ("1 + 1.2.3", "invalid number literal '1.2.3'", 4),
        ("3e", "invalid number literal '3e'", 0),
        ('x + "abc', "unterminated string", 4),
        (r'"bad \q escape"', "unknown escape sequence '\\q'", 5),
        ('"ends with backslash\\', "unterminated string", 0),
    ],
)
def test_tokenizer_errors(source, message, position):
    with pytest.raises(ParseError) as info:
        tokenize(source)
    assert info.value.message == message
    assert info.value.position == position


@pytest.mark.parametrize(
    "token, text",
    [
        (Token(K.NUMBER, 1.5, 0), "number 1.5"),
        (Token(K.STRING, "hi", 0), "string 'hi'"),
        (Token(K.NAME, "x", 0), "name 'x'"),
        (Token(K.KEYWORD, "and", 0), "keyword 'and'"),
        (Token(K.OPERATOR, "+", 0), "operator '+'"),
        (Token(K.RPAREN, ")", 0), "')'"),
        (Token(K.EOF, None, 0), "end of input"),
    ],
)
def test_token_describe(token, text):
    assert token.describe() == text

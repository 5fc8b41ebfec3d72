import pytest

from textkit.case import (
    SMALL_WORDS,
    convert_case,
    split_words,
    to_camel,
    to_constant,
    to_kebab,
    to_pascal,
    to_snake,
    to_title,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("helloWorld", ["hello", "World"]),
        ("HelloWorld", ["Hello", "World"]),
        ("hello_world", ["hello", "world"]),
        ("hello-world", ["hello", "world"]),
        ("HTTPServerError", ["HTTP", "Server", "Error"]),
        ("parseHTMLString", ["parse", "HTML", "String"]),
        ("version2Update", ["version", "2", "Update"]),
        ("  spaced   words ", ["spaced", "words"]),
        ("ABC", ["ABC"]),
        ("", []),
    ],
)
def test_split_words(text, expected):
    assert split_words(text) == expected


IDENTIFIERS = ["hello world", "HelloWorld", "helloWorld", "hello_world", "hello-world", "HELLO_WORLD"]


@pytest.mark.parametrize("text", IDENTIFIERS)
def test_every_style_converts_to_snake(text):
    assert to_snake(text) == "hello_world"


@pytest.mark.parametrize("text", IDENTIFIERS)
def test_every_style_converts_to_camel(text):
    assert to_camel(text) == "helloWorld"


@pytest.mark.parametrize(
    "func, expected",
    [
        (to_snake, "parse_http_response"),
        (to_kebab, "parse-http-response"),
        (to_constant, "PARSE_HTTP_RESPONSE"),
        (to_camel, "parseHttpResponse"),
        (to_pascal, "ParseHttpResponse"),
    ],
)
def test_acronyms_are_split(func, expected):
    assert func("parseHTTPResponse") == expected


def test_to_camel_of_empty_string():
    assert to_camel("") == ""
    assert to_camel("___") == ""


def test_to_pascal_single_word():
    assert to_pascal("widget") == "Widget"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("the lord of the rings", "The Lord of the Rings"),
        ("war and peace", "War and Peace"),
        ("a tale of two cities", "A Tale of Two Cities"),
        ("what are you looking at", "What Are You Looking At"),
        ("the iPhone and NASA", "The iPhone and NASA"),
        ("a well-known fact", "A Well-Known Fact"),
        ("", ""),
    ],
)
def test_to_title(text, expected):
    assert to_title(text) == expected


def test_to_title_custom_small_words():
    assert to_title("one with the other", small_words={"with"}) == "One with The Other"


def test_small_words_are_lowercase():
    assert all(word == word.lower() for word in SMALL_WORDS)


@pytest.mark.parametrize(
    "style, expected",
    [
        ("snake", "user_id_field"),
        ("kebab", "user-id-field"),
        ("constant", "USER_ID_FIELD"),
        ("camel", "userIdField"),
        ("pascal", "UserIdField"),
        ("title", "User ID Field"),
    ],
)
def test_convert_case(style, expected):
    assert convert_case("userIDField", style) == expected


def test_convert_case_unknown_style():
    with pytest.raises(ValueError, match="unknown case style 'shouty'"):
        convert_case("x", "shouty")

import pytest

from textkit.wrap import fill, indent, truncate, truncate_middle, wrap


def test_wrap_greedy():
    assert wrap("The quick brown fox jumps over the lazy dog", 10) == [
        "The quick",
        "brown fox",
        "jumps over",
        "the lazy",
        "dog",
    ]


def test_wrap_lines_respect_width(paragraph):
    lines = wrap(paragraph, 20)
    assert all(len(line) <= 20 for line in lines)
    assert " ".join(lines) == " ".join(paragraph.split())


def test_wrap_collapses_whitespace():
    assert wrap("a\n\nb   c\td", 80) == ["a b c d"]


def test_wrap_breaks_long_words():
    assert wrap("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]


def test_wrap_long_word_after_short_word():
    assert wrap("xy abcdefgh", 4) == ["xy", "abcd", "efgh"]


def test_wrap_keeps_long_words_when_not_breaking():
    assert wrap("a abcdefghij b", 4, break_long_words=False) == ["a", "abcdefghij", "b"]


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_wrap_empty(text):
    assert wrap(text, 10) == []


def test_wrap_invalid_width():
    with pytest.raises(ValueError):
        wrap("text", 0)


def test_fill_joins_lines():
    assert fill("one two three four", 9) == "one two\nthree\nfour"


def test_fill_keeps_paragraphs(multi_paragraph_text):
    assert fill(multi_paragraph_text, 30) == (
        "First paragraph has a few\n"
        "words in it. It spans two\n"
        "lines.\n"
        "\n"
        "Second paragraph is short.\n"
        "\n"
        "Third one."
    )


def test_fill_with_prefix():
    assert fill("alpha beta gamma", 8, prefix="> ") == "> alpha\n> beta\n> gamma"


def test_fill_prefix_too_long():
    with pytest.raises(ValueError):
        fill("text", 3, prefix="-->")


def test_indent_skips_blank_lines():
    assert indent("a\n\nb\n", "  ") == "  a\n\n  b\n"


def test_indent_all_lines():
    assert indent("a\n\nb", "# ", skip_blank=False) == "# a\n# \n# b"


@pytest.mark.parametrize(
    "text, length, kwargs, expected",
    [
        ("short", 10, {}, "short"),
        ("exactly ten", 11, {}, "exactly ten"),
        ("The quick brown fox", 12, {}, "The quick..."),
        ("The quick brown fox", 14, {}, "The quick b..."),
        ("The quick brown fox", 14, {"whole_words": True}, "The quick..."),
        ("The quick brown fox", 13, {"whole_words": True}, "The quick..."),
        ("The quick brown fox", 12, {"whole_words": True}, "The quick..."),
        ("Supercalifragilistic", 8, {"whole_words": True}, "Super..."),
        ("The quick brown fox", 10, {"ellipsis": "\u2026"}, "The quick\u2026"),
        ("The quick brown fox", 3, {}, "..."),
    ],
)
def test_truncate(text, length, kwargs, expected):
    result = truncate(text, length, **kwargs)
    assert result == expected
    assert len(result) <= length


def test_truncate_removes_trailing_space_before_ellipsis():
    assert truncate("abc def ghi", 7) == "abc..."


def test_truncate_length_shorter_than_ellipsis():
    with pytest.raises(ValueError):
        truncate("abcdef", 2)


@pytest.mark.parametrize(
    "text, length, expected",
    [
        ("/very/long/path/to/file.txt", 15, "/very/...le.txt"),
        ("abcdefghij", 7, "ab...ij"),
        ("abcdefghij", 8, "abc...ij"),
        ("abcdefghij", 4, "a..."),
        ("abc", 5, "abc"),
    ],
)
def test_truncate_middle(text, length, expected):
    assert truncate_middle(text, length) == expected


def test_truncate_middle_too_short():
    with pytest.raises(ValueError):
        truncate_middle("abcdef", 1)

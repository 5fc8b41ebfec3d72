from collections import Counter

import pytest

from textkit.tokens import ngrams, paragraphs, sentences, top_words, word_frequencies, words


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello, world!", ["Hello", "world"]),
        ("Don't panic", ["Don't", "panic"]),
        ("it\u2019s ok", ["it\u2019s", "ok"]),
        ("snake_case words", ["snake", "case", "words"]),
        ("3 apples and 42 pears", ["3", "apples", "and", "42", "pears"]),
        ("café naïve", ["café", "naïve"]),
        ("   ", []),
        ("'quoted'", ["quoted"]),
    ],
)
def test_words(text, expected):
    assert words(text) == expected


def test_words_lowercase():
    assert words("The Cat SAT", lowercase=True) == ["the", "cat", "sat"]


def test_sentences_on_paragraph(paragraph):
    assert sentences(paragraph) == [
        "The quick brown fox jumps over the lazy dog.",
        "It was not amused!",
        "Was the dog asleep?",
        "Dr. Smith said the fox was very fast.",
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("One. Two. Three.", ["One.", "Two.", "Three."]),
        ("No terminator", ["No terminator"]),
        ("Wait... what?! Really.", ["Wait...", "what?!", "Really."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("Use tools, e.g. hammers. Done.", ["Use tools, e.g. hammers.", "Done."]),
        ("Written by J. R. R. Tolkien. Classic.", ["Written by J. R. R. Tolkien.", "Classic."]),
        ("Version 3.11 is out. Upgrade!", ["Version 3.11 is out.", "Upgrade!"]),
        ("", []),
    ],
)
def test_sentences(text, expected):
    assert sentences(text) == expected


def test_paragraphs(multi_paragraph_text):
    assert paragraphs(multi_paragraph_text) == [
        "First paragraph has a few words in it.\nIt spans two lines.",
        "Second paragraph is short.",
        "Third one.",
    ]


def test_paragraphs_empty():
    assert paragraphs("\n\n  \n") == []


@pytest.mark.parametrize(
    "n, expected",
    [
        (1, [("a",), ("b",), ("c",), ("d",)]),
        (2, [("a", "b"), ("b", "c"), ("c", "d")]),
        (3, [("a", "b", "c"), ("b", "c", "d")]),
        (4, [("a", "b", "c", "d")]),
        (5, []),
    ],
)
def test_ngrams(n, expected):
    assert ngrams(["a", "b", "c", "d"], n) == expected


def test_ngrams_of_string_gives_character_ngrams():
    assert ngrams("abc", 2) == [("a", "b"), ("b", "c")]


def test_ngrams_rejects_zero():
    with pytest.raises(ValueError):
        ngrams([1, 2], 0)


def test_word_frequencies_is_case_insensitive():
    assert word_frequencies("The cat and THE hat") == Counter({"the": 2, "cat": 1, "and": 1, "hat": 1})


def test_word_frequencies_ignore():
    counts = word_frequencies("the cat and the hat", ignore=["The", "AND"])
    assert counts == Counter({"cat": 1, "hat": 1})


def test_top_words_orders_by_count_then_alphabetically():
    text = "b a c b a b d"
    assert top_words(text, 3) == [("b", 3), ("a", 2), ("c", 1)]


def test_top_words_counts_stopwords_by_default(paragraph):
    assert top_words(paragraph, 2) == [("the", 4), ("was", 3)]


def test_top_words_ignoring_stopwords(paragraph):
    assert top_words(paragraph, 3, ignore_stopwords=True) == [("dog", 2), ("fox", 2), ("amused", 1)]

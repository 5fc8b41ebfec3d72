import pytest

from textkit.stopwords import _parse_wordlist, is_stopword, load_stopwords, remove_stopwords, strip_stopwords


def test_load_stopwords_reads_package_data():
    stopwords = load_stopwords()
    assert isinstance(stopwords, frozenset)
    assert {"the", "and", "of", "yourselves"} <= stopwords
    assert len(stopwords) == 126


def test_load_stopwords_skips_comments_and_blank_lines():
    stopwords = load_stopwords()
    assert not any(word.startswith("#") or not word for word in stopwords)
    assert "english" not in stopwords


def test_load_stopwords_is_cached():
    assert load_stopwords() is load_stopwords()


def test_parse_wordlist():
    content = "# header\nThe\n\n  and  # inline comment\nOF\n"
    assert _parse_wordlist(content) == frozenset({"the", "and", "of"})


@pytest.mark.parametrize("word", ["the", "The", "AND", "yourselves"])
def test_is_stopword_true(word):
    assert is_stopword(word) is True


@pytest.mark.parametrize("word", ["python", "fox", ""])
def test_is_stopword_false(word):
    assert is_stopword(word) is False


def test_is_stopword_extra():
    assert is_stopword("Foo", extra=["foo"]) is True


def test_remove_stopwords_keeps_order_and_case():
    tokens = ["The", "Quick", "brown", "fox", "is", "over", "THERE"]
    assert remove_stopwords(tokens) == ["Quick", "brown", "fox"]


def test_remove_stopwords_extra_and_keep():
    tokens = ["not", "a", "big", "deal"]
    assert remove_stopwords(tokens, extra=["deal"], keep=["NOT"]) == ["not", "big"]


def test_strip_stopwords(paragraph):
    assert strip_stopwords(paragraph) == (
        "quick brown fox jumps lazy dog amused dog asleep Dr Smith said fox fast"
    )


def test_strip_stopwords_extra():
    assert strip_stopwords("The cat sat on the mat", extra=["sat"]) == "cat mat"

import pytest

from textkit.slug import slugify, transliterate, unique_slug


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello, World!", "hello-world"),
        ("  leading and trailing  ", "leading-and-trailing"),
        ("Crème Brûlée", "creme-brulee"),
        ("Straße in München", "strasse-in-munchen"),
        ("Don't stop", "dont-stop"),
        ("It\u2019s fine", "its-fine"),
        ("multiple   ---   separators", "multiple-separators"),
        ("Python 3.11 released", "python-3-11-released"),
        ("日本語", ""),
        ("", ""),
    ],
)
def test_slugify_examples(text, expected):
    assert slugify(text) == expected


def test_slugify_custom_separator():
    assert slugify("Hello big World", separator="_") == "hello_big_world"


def test_slugify_keeps_case_when_asked():
    assert slugify("Hello World", lowercase=False) == "Hello-World"


@pytest.mark.parametrize(
    "max_length, expected",
    [
        (100, "the-quick-brown-fox"),
        (15, "the-quick-brown"),
        (14, "the-quick"),
        (9, "the-quick"),
        (5, "the"),
        (3, "the"),
        (2, "th"),
    ],
)
def test_slugify_max_length_cuts_at_word_boundary(max_length, expected):
    assert slugify("The quick brown fox", max_length=max_length) == expected


def test_slugify_max_length_hard_cuts_single_long_word():
    assert slugify("Supercalifragilistic", max_length=5) == "super"


@pytest.mark.parametrize("kwargs", [{"separator": ""}, {"max_length": 0}])
def test_slugify_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        slugify("anything", **kwargs)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("café", "cafe"),
        ("Ærøskøbing", "AEroskobing"),
        ("Łódź", "Lodz"),
        ("naïve façade", "naive facade"),
        ("plain ascii", "plain ascii"),
        ("€100", "100"),
    ],
)
def test_transliterate(text, expected):
    assert transliterate(text) == expected


def test_unique_slug_returns_base_when_free():
    assert unique_slug("My Post", ["other-post"]) == "my-post"


def test_unique_slug_appends_first_free_counter():
    existing = {"my-post", "my-post-2", "my-post-3"}
    assert unique_slug("My Post", existing) == "my-post-4"


def test_unique_slug_uses_separator_for_suffix():
    assert unique_slug("My Post", ["my_post"], separator="_") == "my_post_2"


def test_unique_slug_falls_back_to_item():
    assert unique_slug("!!!", []) == "item"
    assert unique_slug("???", ["item"]) == "item-2"

import pytest

from textkit.distance import closest_match, closest_matches, hamming, levenshtein, similarity


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("", "", 0),
        ("abc", "", 3),
        ("", "abc", 3),
        ("kitten", "sitting", 3),
        ("flaw", "lawn", 2),
        ("saturday", "sunday", 3),
        ("same", "same", 0),
        ("abc", "acb", 2),
        ("gumbo", "gambol", 2),
    ],
)
def test_levenshtein(a, b, expected):
    assert levenshtein(a, b) == expected


def test_levenshtein_is_symmetric():
    assert levenshtein("intention", "execution") == levenshtein("execution", "intention") == 5


@pytest.mark.parametrize("a, b, expected", [("karolin", "kathrin", 3), ("1011101", "1001001", 2), ("", "", 0)])
def test_hamming(a, b, expected):
    assert hamming(a, b) == expected


def test_hamming_unequal_lengths():
    with pytest.raises(ValueError, match="equal length"):
        hamming("abc", "ab")


@pytest.mark.parametrize(
    "a, b, expected",
    [("", "", 1.0), ("abc", "abc", 1.0), ("abc", "xyz", 0.0), ("kitten", "sitting", 1 - 3 / 7), ("ab", "abcd", 0.5)],
)
def test_similarity(a, b, expected):
    assert similarity(a, b) == pytest.approx(expected)


def test_similarity_case_insensitive():
    assert similarity("Hello", "hello") == pytest.approx(0.8)
    assert similarity("Hello", "hello", case_sensitive=False) == 1.0


def test_closest_matches_best_first(fruit):
    assert closest_matches("grap", fruit) == ["grape"]
    assert closest_matches("aple", fruit, cutoff=0.5) == ["apple", "maple"]


def test_closest_matches_respects_n(fruit):
    assert closest_matches("apple", fruit, n=2, cutoff=0.3) == ["apple", "maple"]


def test_closest_matches_ties_keep_candidate_order():
    assert closest_matches("cat", ["bat", "hat", "cot"], cutoff=0.5) == ["bat", "hat", "cot"]


def test_closest_matches_ignores_case_by_default():
    assert closest_matches("APPLE", ["apple", "Apply"]) == ["apple", "Apply"]
    assert closest_matches("APPLE", ["apple"], case_sensitive=True) == []


def test_closest_matches_accepts_generators(fruit):
    assert closest_matches("banan", (f for f in fruit)) == ["banana"]


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"cutoff": 1.5}, {"cutoff": -0.1}])
def test_closest_matches_validates_arguments(kwargs):
    with pytest.raises(ValueError):
        closest_matches("x", ["x"], **kwargs)


@pytest.mark.parametrize(
    "word, expected",
    [("appel", "apple"), ("pinapple", "pineapple"), ("grapefrut", "grapefruit"), ("zzz", None)],
)
def test_closest_match(word, expected, fruit):
    assert closest_match(word, fruit) == expected


def test_closest_match_cutoff():
    assert closest_match("abcd", ["abxy"], cutoff=0.5) == "abxy"
    assert closest_match("abcd", ["abxy"], cutoff=0.6) is None

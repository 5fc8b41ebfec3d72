import pytest

from textkit.readability import (
    TextStats,
    count_syllables,
    flesch_kincaid_grade,
    flesch_reading_ease,
    reading_time,
    text_stats,
)


@pytest.mark.parametrize(
    "word, expected",
    [
        ("cat", 1),
        ("the", 1),
        ("make", 1),
        ("table", 2),
        ("syllable", 3),
        ("hello", 2),
        ("readability", 5),
        ("free", 1),
        ("rhythm", 1),
        ("Beautiful!", 3),
        ("I", 1),
        ("42", 0),
        ("", 0),
    ],
)
def test_count_syllables(word, expected):
    assert count_syllables(word) == expected


def test_text_stats(simple_text):
    stats = text_stats(simple_text)
    assert stats == TextStats(sentences=2, words=9, syllables=9, characters=26)
    assert stats.words_per_sentence == 4.5
    assert stats.syllables_per_word == 1.0


def test_text_stats_of_empty_text():
    stats = text_stats("")
    assert stats == TextStats(0, 0, 0, 0)
    assert stats.words_per_sentence == 0.0
    assert stats.syllables_per_word == 0.0


def test_flesch_reading_ease_simple(simple_text):
    # 206.835 - 1.015 * 4.5 - 84.6 * 1.0
    assert flesch_reading_ease(simple_text) == pytest.approx(117.67)


def test_flesch_reading_ease_harder_text_scores_lower(simple_text):
    hard = "Institutional considerations necessitate comprehensive reorganization."
    assert flesch_reading_ease(hard) < 0 < flesch_reading_ease(simple_text)


def test_flesch_kincaid_grade(simple_text):
    # 0.39 * 4.5 + 11.8 * 1.0 - 15.59
    assert flesch_kincaid_grade(simple_text) == pytest.approx(-2.03)


@pytest.mark.parametrize("func", [flesch_reading_ease, flesch_kincaid_grade])
def test_scores_need_words(func):
    with pytest.raises(ValueError, match="no words"):
        func("... !!!")


@pytest.mark.parametrize("count, wpm, expected", [(200, 200, 60), (1, 200, 1), (0, 200, 0), (250, 100, 150)])
def test_reading_time(count, wpm, expected):
    assert reading_time("word " * count, words_per_minute=wpm) == expected


def test_reading_time_rejects_bad_speed():
    with pytest.raises(ValueError):
        reading_time("text", words_per_minute=0)

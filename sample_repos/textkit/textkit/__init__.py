"""textkit -- small, dependency-free text utilities."""

from textkit.case import (
    convert_case,
    split_words,
    to_camel,
    to_constant,
    to_kebab,
    to_pascal,
    to_snake,
    to_title,
)
from textkit.distance import (
    closest_match,
    closest_matches,
    hamming,
    levenshtein,
    similarity,
)
from textkit.readability import (
    TextStats,
    count_syllables,
    flesch_kincaid_grade,
    flesch_reading_ease,
    reading_time,
    text_stats,
)
from textkit.slug import slugify, transliterate, unique_slug
from textkit.stopwords import is_stopword, load_stopwords, remove_stopwords, strip_stopwords
from textkit.tokens import (
    ngrams,
    paragraphs,
    sentences,
    top_words,
    word_frequencies,
    words,
)
from textkit.wrap import fill, indent, truncate, truncate_middle, wrap

__version__ = "1.0.0"

__all__ = [
    "TextStats",
    "closest_match",
    "closest_matches",
    "convert_case",
    "count_syllables",
    "fill",
    "flesch_kincaid_grade",
    "flesch_reading_ease",
    "hamming",
    "indent",
    "is_stopword",
    "levenshtein",
    "load_stopwords",
    "ngrams",
    "paragraphs",
    "reading_time",
    "remove_stopwords",
    "sentences",
    "similarity",
    "slugify",
    "split_words",
    "strip_stopwords",
    "text_stats",
    "to_camel",
    "to_constant",
    "to_kebab",
    "to_pascal",
    "to_snake",
    "to_title",
    "top_words",
    "transliterate",
    "truncate",
    "truncate_middle",
    "unique_slug",
    "word_frequencies",
    "words",
    "wrap",
]

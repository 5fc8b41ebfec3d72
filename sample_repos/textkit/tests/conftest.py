import pytest


@pytest.fixture
def paragraph():
    return (
        "The quick brown fox jumps over the lazy dog. It was not amused! "
        "Was the dog asleep? Dr. Smith said the fox was very fast."
    )


@pytest.fixture
def multi_paragraph_text():
    return (
        "First paragraph has a few words in it.\n"
        "It spans two lines.\n"
        "\n"
        "   \n"
        "Second paragraph is short.\n"
        "\n"
        "Third one."
    )


@pytest.fixture
def fruit():
    return ["apple", "apricot", "banana", "grape", "grapefruit", "maple", "pineapple"]


@pytest.fixture
def simple_text():
    # 2 sentences, 9 words, all one-syllable words.
    return "The cat sat on the mat. The dog ran."

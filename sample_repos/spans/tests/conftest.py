from datetime import date

import pytest

from spans import DateRange, Interval, IntervalSet


@pytest.fixture
def sample_set():
    """{[1, 3], [5, 8), (10, 12]} built from unsorted, overlapping pieces."""
    return IntervalSet(
        [
            Interval.open_closed(10, 12),
            Interval.closed(2, 3),
            Interval.closed(1, 2.5),
            Interval.closed_open(5, 8),
        ]
    )


@pytest.fixture
def holidays_2024():
    return [
        date(2024, 1, 1),  # New Year's Day (Monday)
        date(2024, 1, 15),  # Martin Luther King Jr. Day (Monday)
        date(2024, 2, 19),  # Presidents' Day (Monday)
        date(2024, 5, 27),  # Memorial Day (Monday)
        date(2024, 7, 4),  # Independence Day (Thursday)
        date(2024, 12, 25),  # Christmas Day (Wednesday)
    ]


@pytest.fixture
def q1_2024():
    return DateRange(date(2024, 1, 1), date(2024, 3, 31))


@pytest.fixture
def january_2024():
    return DateRange(date(2024, 1, 1), date(2024, 1, 31))

"""spans -- interval and date-range arithmetic."""

from spans.daterange import (
    DateRange,
    add_business_days,
    is_business_day,
    merge_ranges,
    month_end,
    nth_weekday,
    week_start,
)
from spans.interval import Interval
from spans.intervalset import IntervalSet

__version__ = "1.0.0"

__all__ = [
    "DateRange",
    "Interval",
    "IntervalSet",
    "add_business_days",
    "is_business_day",
    "merge_ranges",
    "month_end",
    "nth_weekday",
    "week_start",
]

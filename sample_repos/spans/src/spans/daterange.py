"""Inclusive ranges of calendar dates and business-day helpers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Collection, Iterable, Iterator, List, Optional, Union

from spans.interval import Interval

#: ``date.weekday()`` values of Saturday and Sunday.
WEEKEND = frozenset({5, 6})

_ONE_DAY = timedelta(days=1)


def is_business_day(day: date, holidays: Collection[date] = ()) -> bool:
    """True for Monday to Friday dates that are not in ``holidays``."""
    return day.weekday() not in WEEKEND and day not in holidays


def add_business_days(start: date, count: int, holidays: Iterable[date] = ()) -> date:
    """The date ``count`` business days after ``start`` (before it if negative).

    ``start`` itself is never counted, so ``count=0`` returns ``start``.
    """
    holiday_set = frozenset(holidays)
    step = _ONE_DAY if count >= 0 else -_ONE_DAY
    remaining = abs(count)
    current = start
    while remaining:
        current += step
        if is_business_day(current, holiday_set):
            remaining -= 1
    return current


def month_end(day: date) -> date:
    """The last day of ``day``'s month."""
    in_next_month = day.replace(day=28) + timedelta(days=4)
    return in_next_month - timedelta(days=in_next_month.day)


def week_start(day: date, first_weekday: int = 0) -> date:
    """The first day of ``day``'s week; weeks start on ``first_weekday`` (0 = Monday)."""
    if not 0 <= first_weekday <= 6:
        raise ValueError("first_weekday must be between 0 (Monday) and 6 (Sunday)")
    offset = (day.weekday() - first_weekday) % 7
    return day - timedelta(days=offset)


def nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The ``n``-th ``weekday`` (0 = Monday) of a month; ``n=-1`` is the last one.

    >>> nth_weekday(2024, 11, 3, 4)   # Thanksgiving: 4th Thursday of November
    datetime.date(2024, 11, 28)
    """
    if n == 0:
        raise ValueError("n must be non-zero")
    if n > 0:
        first = date(year, month, 1)
        result = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    else:
        last = month_end(date(year, month, 1))
        result = last - timedelta(days=(last.weekday() - weekday) % 7 + 7 * (-n - 1))
    if result.month != month:
        raise ValueError(f"month {year}-{month:02d} has no such weekday number {n}")
    return result


@dataclass(frozen=True, order=True)
class DateRange:
    """All dates from ``start`` to ``end``, both inclusive."""

    start: date
    end: date

    def __post_init__(self) -> None:
        for value in (self.start, self.end):
            if isinstance(value, datetime) or not isinstance(value, date):
                raise TypeError(f"DateRange bounds must be dates, not {type(value).__name__}")
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")

    # -- constructors ---------------------------------------------------------------

    @classmethod
    def for_month(cls, year: int, month: int) -> "DateRange":
        first = date(year, month, 1)
        return cls(first, month_end(first))

    @classmethod
    def for_week(cls, day: date, first_weekday: int = 0) -> "DateRange":
        first = week_start(day, first_weekday)
        return cls(first, first + timedelta(days=6))

    @classmethod
    def parse(cls, text: str) -> "DateRange":
        """Parse ``"YYYY-MM-DD..YYYY-MM-DD"``."""
        start_text, separator, end_text = text.partition("..")
        if not separator:
            raise ValueError(f"expected 'START..END', got {text!r}")
        return cls(date.fromisoformat(start_text.strip()), date.fromisoformat(end_text.strip()))

    # -- basic properties -------------------------------------------------------------

    @property
    def days(self) -> int:
        """Number of dates in the range."""
        return (self.end - self.start).days + 1

    def __len__(self) -> int:
        return self.days

    def __contains__(self, day: object) -> bool:
        if not isinstance(day, date):
            return False
        return self.start <= day <= self.end

    def __iter__(self) -> Iterator[date]:
        current = self.start
        while current <= self.end:
            yield current
            current += _ONE_DAY

    def __str__(self) -> str:
        return f"{self.start.isoformat()}..{self.end.isoformat()}"

    def iter_step(self, step: Union[int, timedelta] = 1) -> Iterator[date]:
        """Every ``step``-th date starting at ``start`` (``step`` in days or a timedelta)."""
        delta = step if isinstance(step, timedelta) else timedelta(days=step)
        if delta < _ONE_DAY or delta % _ONE_DAY:
            raise ValueError("step must be a positive whole number of days")
        current = self.start
        while current <= self.end:
            yield current
            current += delta

    # -- splitting ------------------------------------------------------------------

    def split_by_month(self) -> List["DateRange"]:
        """Split into pieces that each lie within one calendar month."""
        pieces = []
        current = self.start
        while current <= self.end:
            piece_end = min(month_end(current), self.end)
            pieces.append(DateRange(current, piece_end))
            current = piece_end + _ONE_DAY
        return pieces

    def split_by_week(self, first_weekday: int = 0) -> List["DateRange"]:
        """Split into pieces that each lie within one week."""
        pieces = []
        current = self.start
        while current <= self.end:
            piece_end = min(week_start(current, first_weekday) + timedelta(days=6), self.end)
            pieces.append(DateRange(current, piece_end))
            current = piece_end + _ONE_DAY
        return pieces

    def chunks(self, size: int) -> List["DateRange"]:
        """Split into consecutive pieces of ``size`` days (the last may be shorter)."""
        if size < 1:
            raise ValueError("size must be at least 1")
        pieces = []
        current = self.start
        while current <= self.end:
            piece_end = min(current + timedelta(days=size - 1), self.end)
            pieces.append(DateRange(current, piece_end))
            current = piece_end + _ONE_DAY
        return pieces

    # -- business days --------------------------------------------------------------

    def business_days(self, holidays: Iterable[date] = ()) -> List[date]:
        """Weekdays in the range that are not holidays."""
        holiday_set = frozenset(holidays)
        return [day for day in self if is_business_day(day, holiday_set)]

    def count_business_days(self, holidays: Iterable[date] = ()) -> int:
        return len(self.business_days(holidays))

    # -- relations ------------------------------------------------------------------

    def overlap(self, other: "DateRange") -> Optional["DateRange"]:
        """The dates in both ranges, or ``None`` if they are disjoint."""
        start = max(self.start, other.start)
        end = min(self.end, other.end)
        if end < start:
            return None
        return DateRange(start, end)

    def overlap_days(self, other: "DateRange") -> int:
        common = self.overlap(other)
        return common.days if common is not None else 0

    def shift(self, days: int) -> "DateRange":
        delta = timedelta(days=days)
        return DateRange(self.start + delta, self.end + delta)

    def to_interval(self) -> Interval:
        return Interval.closed(self.start, self.end)


def merge_ranges(ranges: Iterable[DateRange]) -> List[DateRange]:
    """Merge overlapping or back-to-back date ranges into a sorted list."""
    merged: List[DateRange] = []
    for current in sorted(ranges):
        if merged and current.start <= merged[-1].end + _ONE_DAY:
            last = merged[-1]
            merged[-1] = DateRange(last.start, max(last.end, current.end))
        else:
            merged.append(current)
    return merged

from datetime import date, datetime, timedelta

import pytest

from spans import (
    DateRange,
    Interval,
    add_business_days,
    is_business_day,
    merge_ranges,
    month_end,
    nth_weekday,
    week_start,
)


def d(month, day, year=2024):
    return date(year, month, day)


class TestHelpers:
    @pytest.mark.parametrize(
        "day, expected",
        [(d(1, 5), True), (d(1, 6), False), (d(1, 7), False), (d(1, 8), True)],
    )
    def test_is_business_day(self, day, expected):
        assert is_business_day(day) is expected

    def test_holiday_is_not_business_day(self, holidays_2024):
        assert is_business_day(d(7, 4), holidays_2024) is False
        assert is_business_day(d(7, 5), holidays_2024) is True

    @pytest.mark.parametrize(
        "start, count, expected",
        [
            (d(1, 5), 1, d(1, 8)),
            (d(1, 5), 5, d(1, 12)),
            (d(1, 8), -1, d(1, 5)),
            (d(1, 6), 0, d(1, 6)),
            (d(1, 6), 1, d(1, 8)),
            (d(1, 31), 22, d(3, 1)),
        ],
    )
    def test_add_business_days(self, start, count, expected):
        assert add_business_days(start, count) == expected

    def test_add_business_days_skips_holidays(self, holidays_2024):
        assert add_business_days(d(1, 12), 1, holidays_2024) == d(1, 16)
        assert add_business_days(d(1, 16), -1, holidays_2024) == d(1, 12)

    @pytest.mark.parametrize(
        "day, expected",
        [
            (d(2, 10), d(2, 29)),
            (date(2023, 2, 10), date(2023, 2, 28)),
            (d(12, 31), d(12, 31)),
            (d(4, 1), d(4, 30)),
            (d(1, 31), d(1, 31)),
        ],
    )
    def test_month_end(self, day, expected):
        assert month_end(day) == expected

    @pytest.mark.parametrize(
        "day, first_weekday, expected",
        [
            (d(1, 3), 0, d(1, 1)),
            (d(1, 7), 0, d(1, 1)),
            (d(1, 7), 6, d(1, 7)),
            (d(1, 1), 6, date(2023, 12, 31)),
        ],
    )
    def test_week_start(self, day, first_weekday, expected):
        assert week_start(day, first_weekday) == expected

    def test_week_start_rejects_bad_weekday(self):
        with pytest.raises(ValueError):
            week_start(d(1, 1), 7)

    @pytest.mark.parametrize(
        "month, weekday, n, expected",
        [
            (11, 3, 4, d(11, 28)),
            (5, 0, -1, d(5, 27)),
            (9, 0, 1, d(9, 2)),
            (2, 3, 5, d(2, 29)),
            (2, 3, -5, d(2, 1)),
        ],
    )
    def test_nth_weekday(self, month, weekday, n, expected):
        assert nth_weekday(2024, month, weekday, n) == expected

    @pytest.mark.parametrize("weekday, n", [(4, 5), (4, -5), (0, 0)])
    def test_nth_weekday_out_of_range(self, weekday, n):
        with pytest.raises(ValueError):
            nth_weekday(2024, 2, weekday, n)


class TestDateRangeBasics:
    def test_days_and_len(self, q1_2024, january_2024):
        assert q1_2024.days == 91
        assert len(january_2024) == 31
        assert DateRange(d(1, 1), d(1, 1)).days == 1

    def test_end_before_start_rejected(self):
        with pytest.raises(ValueError, match="before start"):
            DateRange(d(1, 2), d(1, 1))

    @pytest.mark.parametrize("bad", ["2024-01-01", datetime(2024, 1, 1, 12), 20240101])
    def test_bounds_must_be_dates(self, bad):
        with pytest.raises(TypeError):
            DateRange(bad, d(2, 1))

    def test_membership(self, january_2024):
        assert d(1, 1) in january_2024
        assert d(1, 31) in january_2024
        assert d(2, 1) not in january_2024
        assert "2024-01-05" not in january_2024

    def test_iteration(self):
        assert list(DateRange(d(2, 27), d(3, 2))) == [d(2, 27), d(2, 28), d(2, 29), d(3, 1), d(3, 2)]

    def test_str_and_parse_round_trip(self, january_2024):
        assert str(january_2024) == "2024-01-01..2024-01-31"
        assert DateRange.parse(" 2024-01-01 .. 2024-01-31 ") == january_2024

    @pytest.mark.parametrize("text", ["2024-01-01", "2024-01-31..2024-01-01", "2024-13-01..2024-12-31"])
    def test_parse_invalid(self, text):
        with pytest.raises(ValueError):
            DateRange.parse(text)

    def test_for_month(self):
        february = DateRange.for_month(2024, 2)
        assert (february.start, february.end) == (d(2, 1), d(2, 29))

    def test_for_week(self):
        assert DateRange.for_week(d(1, 3)) == DateRange(d(1, 1), d(1, 7))
        assert DateRange.for_week(d(1, 3), first_weekday=6) == DateRange(date(2023, 12, 31), d(1, 6))

    def test_ordering(self, q1_2024, january_2024):
        later = DateRange(d(2, 1), d(2, 2))
        assert sorted([later, q1_2024, january_2024]) == [january_2024, q1_2024, later]

    def test_is_hashable_value_object(self, january_2024):
        assert {january_2024, DateRange.for_month(2024, 1)} == {january_2024}


class TestStepping:
    def test_weekly_steps(self, january_2024):
        assert list(january_2024.iter_step(7)) == [d(1, 1), d(1, 8), d(1, 15), d(1, 22), d(1, 29)]

    def test_timedelta_step(self, january_2024):
        assert list(january_2024.iter_step(timedelta(days=10))) == [d(1, 1), d(1, 11), d(1, 21), d(1, 31)]

    def test_default_step_is_one_day(self, january_2024):
        assert list(january_2024.iter_step()) == list(january_2024)

    @pytest.mark.parametrize("step", [0, -1, timedelta(hours=12), timedelta(days=1, hours=1)])
    def test_invalid_step(self, january_2024, step):
        with pytest.raises(ValueError):
            list(january_2024.iter_step(step))


class TestSplitting:
    def test_split_by_month(self):
        pieces = DateRange(d(1, 15), d(3, 10)).split_by_month()
        assert [str(piece) for piece in pieces] == [
            "2024-01-15..2024-01-31",
            "2024-02-01..2024-02-29",
            "2024-03-01..2024-03-10",
        ]

    def test_split_by_month_within_one_month(self):
        assert DateRange(d(5, 2), d(5, 3)).split_by_month() == [DateRange(d(5, 2), d(5, 3))]

    def test_split_by_week_monday_start(self):
        pieces = DateRange(d(1, 3), d(1, 16)).split_by_week()
        assert pieces == [DateRange(d(1, 3), d(1, 7)), DateRange(d(1, 8), d(1, 14)), DateRange(d(1, 15), d(1, 16))]

    def test_split_by_week_sunday_start(self):
        pieces = DateRange(d(1, 3), d(1, 16)).split_by_week(first_weekday=6)
        assert pieces == [DateRange(d(1, 3), d(1, 6)), DateRange(d(1, 7), d(1, 13)), DateRange(d(1, 14), d(1, 16))]

    def test_split_pieces_cover_the_range(self, q1_2024):
        for pieces in (q1_2024.split_by_month(), q1_2024.split_by_week(), q1_2024.chunks(10)):
            assert sum(piece.days for piece in pieces) == q1_2024.days
            assert pieces[0].start == q1_2024.start and pieces[-1].end == q1_2024.end

    def test_chunks(self):
        pieces = DateRange(d(1, 1), d(1, 12)).chunks(5)
        assert pieces == [DateRange(d(1, 1), d(1, 5)), DateRange(d(1, 6), d(1, 10)), DateRange(d(1, 11), d(1, 12))]

    def test_chunks_rejects_zero(self, january_2024):
        with pytest.raises(ValueError):
            january_2024.chunks(0)


class TestBusinessDays:
    def test_january(self, january_2024):
        assert january_2024.count_business_days() == 23

    def test_january_with_holidays(self, january_2024, holidays_2024):
        assert january_2024.count_business_days(holidays_2024) == 21

    def test_quarter_with_holidays(self, q1_2024, holidays_2024):
        assert q1_2024.count_business_days() == 65
        assert q1_2024.count_business_days(holidays_2024) == 62

    def test_business_days_lists_dates(self, holidays_2024):
        week = DateRange(d(1, 12), d(1, 19))
        assert week.business_days(holidays_2024) == [d(1, 12), d(1, 16), d(1, 17), d(1, 18), d(1, 19)]

    def test_weekend_only_range(self):
        assert DateRange(d(1, 6), d(1, 7)).business_days() == []


class TestRelations:
    @pytest.mark.parametrize(
        "other, expected, days",
        [
            (DateRange(d(1, 5), d(1, 20)), DateRange(d(1, 5), d(1, 10)), 6),
            (DateRange(d(1, 10), d(1, 12)), DateRange(d(1, 10), d(1, 10)), 1),
            (DateRange(d(1, 11), d(1, 12)), None, 0),
            (DateRange(d(1, 2), d(1, 3)), DateRange(d(1, 2), d(1, 3)), 2),
        ],
    )
    def test_overlap(self, other, expected, days):
        first_ten = DateRange(d(1, 1), d(1, 10))
        assert first_ten.overlap(other) == expected
        assert other.overlap(first_ten) == expected
        assert first_ten.overlap_days(other) == days

    def test_shift(self, january_2024):
        assert january_2024.shift(31) == DateRange(d(2, 1), d(3, 2))
        assert january_2024.shift(-1).start == date(2023, 12, 31)

    def test_to_interval(self, january_2024):
        interval = january_2024.to_interval()
        assert interval == Interval.closed(d(1, 1), d(1, 31))
        assert d(1, 31) in interval

    def test_merge_ranges(self):
        ranges = [
            DateRange(d(1, 10), d(1, 12)),
            DateRange(d(1, 1), d(1, 3)),
            DateRange(d(1, 4), d(1, 5)),
            DateRange(d(1, 11), d(1, 20)),
            DateRange(d(2, 1), d(2, 2)),
        ]
        assert merge_ranges(ranges) == [
            DateRange(d(1, 1), d(1, 5)),
            DateRange(d(1, 10), d(1, 20)),
            DateRange(d(2, 1), d(2, 2)),
        ]

    def test_merge_ranges_keeps_longer_end(self):
        assert merge_ranges([DateRange(d(1, 1), d(1, 31)), DateRange(d(1, 5), d(1, 6))]) == [
            DateRange(d(1, 1), d(1, 31))
        ]

    def test_merge_nothing(self):
        assert merge_ranges([]) == []

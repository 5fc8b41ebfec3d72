import math
from datetime import date, timedelta

import pytest

from spans import Interval

C = Interval.closed
O = Interval.open
CO = Interval.closed_open
OC = Interval.open_closed
EMPTY = Interval.empty()


class TestConstruction:
    def test_default_is_closed(self):
        interval = Interval(1, 3)
        assert (interval.lower, interval.upper) == (1, 3)
        assert interval.lower_closed and interval.upper_closed

    @pytest.mark.parametrize(
        "factory, lower_closed, upper_closed",
        [(C, True, True), (O, False, False), (CO, True, False), (OC, False, True)],
    )
    def test_named_constructors(self, factory, lower_closed, upper_closed):
        interval = factory(1, 3)
        assert interval.lower_closed is lower_closed
        assert interval.upper_closed is upper_closed
        assert not interval.is_empty

    def test_reversed_bounds_rejected(self):
        with pytest.raises(ValueError, match="greater than upper"):
            Interval(3, 1)

    @pytest.mark.parametrize("factory", [O, CO, OC])
    def test_degenerate_non_closed_interval_is_empty(self, factory):
        interval = factory(2, 2)
        assert interval.is_empty
        assert interval == EMPTY
        assert interval.lower is None and interval.upper is None

    def test_point_is_not_empty(self):
        point = Interval.point(2)
        assert not point.is_empty
        assert point.length == 0
        assert point.contains(2)

    def test_bool(self):
        assert bool(Interval.point(0)) is True
        assert bool(EMPTY) is False

    @pytest.mark.parametrize(
        "interval, expected",
        [(C(1, 4.5), 3.5), (O(-2, 2), 4), (EMPTY, 0), (C(date(2024, 1, 1), date(2024, 1, 31)), timedelta(days=30))],
    )
    def test_length(self, interval, expected):
        assert interval.length == expected

    def test_works_with_strings(self):
        assert C("apple", "banana").contains("avocado")
        assert not C("apple", "banana").contains("cherry")


class TestContains:
    @pytest.mark.parametrize(
        "interval, value, expected",
        [
            (C(1, 3), 1, True),
            (C(1, 3), 3, True),
            (C(1, 3), 2, True),
            (C(1, 3), 0, False),
            (C(1, 3), 4, False),
            (O(1, 3), 1, False),
            (O(1, 3), 3, False),
            (O(1, 3), 2.999, True),
            (CO(1, 3), 1, True),
            (CO(1, 3), 3, False),
            (OC(1, 3), 1, False),
            (OC(1, 3), 3, True),
            (EMPTY, 0, False),
            (Interval(-math.inf, 0, False, True), -1e300, True),
        ],
    )
    def test_contains_point(self, interval, value, expected):
        assert interval.contains(value) is expected
        assert (value in interval) is expected

    @pytest.mark.parametrize(
        "outer, inner, expected",
        [
            (C(0, 10), C(2, 3), True),
            (O(0, 10), C(0, 5), False),
            (O(0, 10), OC(0, 5), True),
            (CO(0, 10), CO(5, 10), True),
            (CO(0, 10), C(5, 10), False),
            (C(0, 10), EMPTY, True),
            (EMPTY, Interval.point(1), False),
            (C(0, 10), C(-1, 5), False),
        ],
    )
    def test_contains_interval(self, outer, inner, expected):
        assert outer.contains_interval(inner) is expected
        assert (inner in outer) is expected


class TestRelations:
    @pytest.mark.parametrize(
        "a, b, expected",
        [
            (C(1, 3), C(3, 5), True),
            (CO(1, 3), C(3, 5), False),
            (C(1, 2), C(4, 5), False),
            (O(1, 3), O(2, 4), True),
            (C(0, 10), C(2, 3), True),
            (C(0, 10), EMPTY, False),
        ],
    )
    def test_overlaps(self, a, b, expected):
        assert a.overlaps(b) is expected
        assert b.overlaps(a) is expected

    @pytest.mark.parametrize(
        "a, b, expected",
        [
            (CO(1, 3), C(3, 5), True),
            (C(1, 3), OC(3, 5), True),
            (C(3, 5), CO(1, 3), True),
            (C(1, 3), C(3, 5), False),
            (CO(1, 3), OC(3, 5), False),
            (C(1, 2), C(4, 5), False),
            (C(1, 2), EMPTY, False),
        ],
    )
    def test_is_adjacent(self, a, b, expected):
        assert a.is_adjacent(b) is expected


class TestOperations:
    @pytest.mark.parametrize(
        "a, b, expected",
        [
            (C(1, 5), O(3, 8), OC(3, 5)),
            (CO(1, 3), C(3, 5), EMPTY),
            (C(1, 3), C(3, 5), Interval.point(3)),
            (C(0, 10), C(2, 3), C(2, 3)),
            (C(0, 1), C(2, 3), EMPTY),
            (C(0, 1), EMPTY, EMPTY),
            (O(0, 5), C(0, 5), O(0, 5)),
        ],
    )
    def test_intersection(self, a, b, expected):
        assert a.intersection(b) == expected
        assert (b & a) == expected

    @pytest.mark.parametrize(
        "a, b, expected",
        [
            (CO(1, 2), OC(4, 5), C(1, 5)),
            (OC(1, 3), CO(1, 2), C(1, 3)),
            (O(0, 1), O(0, 1), O(0, 1)),
            (EMPTY, O(0, 1), O(0, 1)),
            (C(2, 3), EMPTY, C(2, 3)),
        ],
    )
    def test_hull(self, a, b, expected):
        assert a.hull(b) == expected

    @pytest.mark.parametrize(
        "a, b, expected",
        [
            (CO(1, 3), C(3, 5), C(1, 5)),
            (C(1, 3), CO(2, 6), CO(1, 6)),
            (EMPTY, C(1, 2), C(1, 2)),
            (O(0, 10), C(2, 3), O(0, 10)),
        ],
    )
    def test_union(self, a, b, expected):
        assert a.union(b) == expected
        assert (b | a) == expected

    @pytest.mark.parametrize("a, b", [(C(1, 2), C(4, 5)), (CO(1, 3), OC(3, 5))])
    def test_union_of_disjoint_intervals_fails(self, a, b):
        with pytest.raises(ValueError, match="not an interval"):
            a.union(b)

    @pytest.mark.parametrize(
        "a, b, expected",
        [
            (C(0, 10), C(3, 5), [CO(0, 3), OC(5, 10)]),
            (C(0, 10), CO(0, 5), [C(5, 10)]),
            (C(0, 10), O(0, 5), [Interval.point(0), C(5, 10)]),
            (C(0, 10), C(20, 30), [C(0, 10)]),
            (C(0, 10), C(-5, 20), []),
            (EMPTY, C(0, 1), []),
            (C(0, 10), EMPTY, [C(0, 10)]),
        ],
    )
    def test_difference(self, a, b, expected):
        assert a.difference(b) == expected

    def test_shift(self):
        assert CO(1, 3).shift(2) == CO(3, 5)
        assert EMPTY.shift(5) == EMPTY

    def test_shift_dates(self):
        start = C(date(2024, 1, 30), date(2024, 2, 2))
        assert start.shift(timedelta(days=2)) == C(date(2024, 2, 1), date(2024, 2, 4))

    @pytest.mark.parametrize("value, expected", [(-5, 0), (15, 10), (5, 5), (0, 0)])
    def test_clamp(self, value, expected):
        assert O(0, 10).clamp(value) == expected

    def test_clamp_empty(self):
        with pytest.raises(ValueError):
            EMPTY.clamp(1)


class TestParsingAndFormatting:
    @pytest.mark.parametrize(
        "text, expected",
        [
            ("[1, 3)", CO(1, 3)),
            ("(1,3]", OC(1, 3)),
            ("  [1.5 , 2.5]  ", C(1.5, 2.5)),
            ("(-inf, 0]", Interval(-math.inf, 0, False, True)),
            ("(0, +Infinity)", O(0, math.inf)),
            ("(-1e3, 1e3)", O(-1000.0, 1000.0)),
            ("{}", EMPTY),
        ],
    )
    def test_parse(self, text, expected):
        assert Interval.parse(text) == expected

    def test_parse_gives_ints_when_possible(self):
        interval = Interval.parse("[1, 3]")
        assert type(interval.lower) is int and type(interval.upper) is int

    @pytest.mark.parametrize("text", ["[1, 2", "1, 2", "[a, b]", "[1; 2]", "[3, 1]"])
    def test_parse_invalid(self, text):
        with pytest.raises(ValueError):
            Interval.parse(text)

    @pytest.mark.parametrize(
        "interval, text",
        [(C(1, 2), "[1, 2]"), (O(1, 2), "(1, 2)"), (CO(0.5, 2), "[0.5, 2)"), (OC(1, 2), "(1, 2]"), (EMPTY, "{}")],
    )
    def test_str_round_trips(self, interval, text):
        assert str(interval) == text
        assert Interval.parse(text) == interval

    def test_repr(self):
        assert repr(CO(1, 3)) == "Interval(1, 3, lower_closed=True, upper_closed=False)"
        assert repr(EMPTY) == "Interval.empty()"


class TestEqualityAndOrdering:
    def test_equality(self):
        assert C(1, 2) == Interval(1, 2)
        assert C(1, 2) != O(1, 2)
        assert C(1, 2) != C(1, 3)
        assert O(3, 3) == CO(7, 7)
        assert C(1, 2) != "[1, 2]"

    def test_hash_is_consistent_with_equality(self):
        assert len({C(1, 2), Interval(1, 2, True, True), O(1, 2), O(3, 3), CO(4, 4)}) == 3
        assert hash(O(3, 3)) == hash(EMPTY)

    def test_sorting(self):
        intervals = [C(2, 3), O(1, 5), C(1, 3), C(1, 5), EMPTY]
        assert sorted(intervals) == [EMPTY, C(1, 3), C(1, 5), O(1, 5), C(2, 3)]

    def test_lt_with_empty(self):
        assert EMPTY < C(0, 1)
        assert not (C(0, 1) < EMPTY)
        assert not (EMPTY < EMPTY)

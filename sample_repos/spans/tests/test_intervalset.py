from datetime import date, timedelta

import pytest

from spans import Interval, IntervalSet

C = Interval.closed
O = Interval.open
CO = Interval.closed_open
OC = Interval.open_closed


class TestNormalisation:
    def test_sorted_and_merged(self, sample_set):
        assert sample_set.intervals == (C(1, 3), CO(5, 8), OC(10, 12))

    def test_adjacent_intervals_merge(self):
        assert list(IntervalSet([CO(1, 2), C(2, 3)])) == [C(1, 3)]

    def test_open_intervals_touching_at_a_point_stay_apart(self):
        assert len(IntervalSet([O(1, 2), O(2, 3)])) == 2

    def test_contained_interval_is_absorbed(self):
        assert IntervalSet([C(0, 10), C(2, 3), O(9, 10)]).intervals == (C(0, 10),)

    def test_empty_intervals_are_dropped(self):
        interval_set = IntervalSet([Interval.empty(), O(4, 4)])
        assert interval_set.is_empty
        assert len(interval_set) == 0
        assert not interval_set
        assert str(interval_set) == "{}"

    def test_non_empty_set_is_truthy(self, sample_set):
        assert bool(sample_set) is True
        assert sample_set.is_empty is False

    def test_rejects_non_intervals(self):
        with pytest.raises(TypeError, match="must be Interval"):
            IntervalSet([(1, 2)])

    def test_input_order_does_not_matter(self):
        pieces = [C(7, 9), C(1, 2), C(3, 4), C(2, 3)]
        assert IntervalSet(pieces) == IntervalSet(reversed(pieces)) == IntervalSet([C(1, 4), C(7, 9)])


class TestMembership:
    @pytest.mark.parametrize(
        "value, expected",
        [(1, True), (2.75, True), (4, False), (5, True), (8, False), (10, False), (12, True), (100, False)],
    )
    def test_points(self, sample_set, value, expected):
        assert (value in sample_set) is expected

    @pytest.mark.parametrize(
        "interval, expected",
        [(C(1, 2), True), (CO(5, 8), True), (C(5, 8), False), (C(3, 5), False), (Interval.empty(), True)],
    )
    def test_intervals(self, sample_set, interval, expected):
        assert (interval in sample_set) is expected


class TestAlgebra:
    def test_union(self, sample_set):
        result = sample_set | IntervalSet([C(3, 5), C(20, 21)])
        assert result.intervals == (CO(1, 8), OC(10, 12), C(20, 21))

    def test_union_with_plain_interval(self, sample_set):
        assert sample_set.union(C(8, 10)).intervals == (C(1, 3), C(5, 12))

    def test_add_returns_new_set(self, sample_set):
        bigger = sample_set.add(C(0, 1))
        assert bigger.intervals[0] == C(0, 3)
        assert sample_set.intervals[0] == C(1, 3)

    def test_intersection(self):
        left = IntervalSet([C(0, 5), C(10, 15)])
        assert (left & IntervalSet([C(3, 12)])).intervals == (C(3, 5), C(10, 12))
        assert left.intersection(O(5, 10)).is_empty

    def test_difference(self):
        result = IntervalSet([C(0, 10)]) - IntervalSet([C(2, 3), O(5, 6)])
        assert result.intervals == (CO(0, 2), OC(3, 5), C(6, 10))

    def test_difference_with_interval(self, sample_set):
        assert sample_set.difference(C(2, 11)) == IntervalSet([CO(1, 2), OC(11, 12)])

    def test_symmetric_difference(self):
        result = IntervalSet([C(0, 5)]) ^ IntervalSet([C(3, 8)])
        assert result.intervals == (CO(0, 3), OC(5, 8))

    def test_symmetric_difference_with_itself_is_empty(self, sample_set):
        assert sample_set.symmetric_difference(sample_set).is_empty

    def test_complement(self):
        holes = IntervalSet([C(2, 3), C(5, 6)]).complement(C(0, 10))
        assert holes.intervals == (CO(0, 2), O(3, 5), OC(6, 10))

    def test_complement_of_empty_set_is_universe(self):
        assert IntervalSet().complement(C(0, 1)) == IntervalSet([C(0, 1)])

    def test_issubset(self, sample_set):
        assert sample_set.issubset(C(0, 20))
        assert sample_set <= IntervalSet([C(1, 8), C(9, 12)])
        assert not sample_set.issubset(C(0, 11))

    def test_coerce_rejects_other_types(self, sample_set):
        with pytest.raises(TypeError, match="expected Interval or IntervalSet"):
            sample_set | 5


class TestMeasurement:
    def test_gaps(self):
        gaps = IntervalSet([C(1, 2), C(3, 4), O(5, 6)]).gaps()
        assert gaps.intervals == (O(2, 3), OC(4, 5))

    def test_gaps_between_half_open_pieces_can_be_points(self):
        assert IntervalSet([CO(1, 2), OC(2, 3)]).gaps().intervals == (Interval.point(2),)

    def test_span(self, sample_set):
        assert sample_set.span() == C(1, 12)
        assert IntervalSet().span().is_empty

    def test_measure(self, sample_set):
        assert sample_set.measure == 7
        assert IntervalSet().measure == 0

    def test_measure_of_date_intervals(self):
        days = IntervalSet([C(date(2024, 1, 1), date(2024, 1, 3)), C(date(2024, 1, 10), date(2024, 1, 11))])
        assert days.measure == timedelta(days=3)


class TestProtocol:
    def test_equality_and_hash(self):
        a = IntervalSet([C(1, 3), C(2, 4)])
        b = IntervalSet([C(1, 4)])
        assert a == b
        assert hash(a) == hash(b)
        assert len({a, b, IntervalSet()}) == 2
        assert a != [C(1, 4)]

    def test_repr(self):
        assert repr(IntervalSet([C(1, 3), C(2, 4)])) == (
            "IntervalSet([Interval(1, 4, lower_closed=True, upper_closed=True)])"
        )

    def test_str(self, sample_set):
        assert str(sample_set) == "[1, 3] | [5, 8) | (10, 12]"

    def test_iteration(self, sample_set):
        assert [interval.lower for interval in sample_set] == [1, 5, 10]

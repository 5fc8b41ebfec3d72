"""Immutable, normalised sets of disjoint intervals."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, List, Tuple, Union

from spans.interval import Interval


def _normalize(intervals: Iterable[Interval]) -> List[Interval]:
    """Sort intervals and merge the ones that overlap or touch."""
    items = []
    for interval in intervals:
        if not isinstance(interval, Interval):
            raise TypeError(f"IntervalSet members must be Interval, not {type(interval).__name__}")
        if not interval.is_empty:
            items.append(interval)
    items.sort()
    merged: List[Interval] = []
    for interval in items:
        if merged and (merged[-1].overlaps(interval) or merged[-1].is_adjacent(interval)):
            merged[-1] = merged[-1].hull(interval)
        else:
            merged.append(interval)
    return merged


class IntervalSet:
    """A set of points described by sorted, disjoint, non-adjacent intervals.

    Instances are immutable; every operation returns a new set.

    >>> s = IntervalSet([Interval.closed(1, 3), Interval.closed(2, 5)])
    >>> list(s)
    [Interval(1, 5, lower_closed=True, upper_closed=True)]
    """

    __slots__ = ("_intervals",)

    def __init__(self, intervals: Iterable[Interval] = ()) -> None:
        self._intervals: Tuple[Interval, ...] = tuple(_normalize(intervals))

    @staticmethod
    def _coerce(other: Union["IntervalSet", Interval]) -> "IntervalSet":
        if isinstance(other, IntervalSet):
            return other
        if isinstance(other, Interval):
            return IntervalSet([other])
        raise TypeError(f"expected Interval or IntervalSet, not {type(other).__name__}")

    # -- inspection ---------------------------------------------------------------

    @property
    def intervals(self) -> Tuple[Interval, ...]:
        return self._intervals

    @property
    def is_empty(self) -> bool:
        return not self._intervals

    @property
    def measure(self) -> Any:
        """Total length of all member intervals (``0`` for the empty set)."""
        total = None
        for interval in self._intervals:
            total = interval.length if total is None else total + interval.length
        return 0 if total is None else total

    def span(self) -> Interval:
        """The smallest single interval covering the whole set."""
        if not self._intervals:
            return Interval.empty()
        return self._intervals[0].hull(self._intervals[-1])

    def gaps(self) -> "IntervalSet":
        """The holes between consecutive member intervals."""
        holes = []
        for left, right in zip(self._intervals, self._intervals[1:]):
            holes.append(Interval(left.upper, right.lower, not left.upper_closed, not right.lower_closed))
        return IntervalSet(holes)

    # -- set algebra --------------------------------------------------------------

    def add(self, interval: Interval) -> "IntervalSet":
        """A new set that also covers ``interval``."""
        return IntervalSet(self._intervals + (interval,))

    def union(self, other: Union["IntervalSet", Interval]) -> "IntervalSet":
        other_set = self._coerce(other)
        return IntervalSet(self._intervals + other_set._intervals)

    def intersection(self, other: Union["IntervalSet", Interval]) -> "IntervalSet":
        other_set = self._coerce(other)
        pieces = []
        for mine in self._intervals:
            for theirs in other_set._intervals:
                common = mine.intersection(theirs)
                if not common.is_empty:
                    pieces.append(common)
        return IntervalSet(pieces)

    def difference(self, other: Union["IntervalSet", Interval]) -> "IntervalSet":
        other_set = self._coerce(other)
        remaining = list(self._intervals)
        for cut in other_set._intervals:
            next_remaining: List[Interval] = []
            for piece in remaining:
                next_remaining.extend(piece.difference(cut))
            remaining = next_remaining
        return IntervalSet(remaining)

    def symmetric_difference(self, other: Union["IntervalSet", Interval]) -> "IntervalSet":
        other_set = self._coerce(other)
        return self.difference(other_set).union(other_set.difference(self))

    def complement(self, universe: Interval) -> "IntervalSet":
        """Everything in ``universe`` that is not in this set."""
        return IntervalSet([universe]).difference(self)

    def issubset(self, other: Union["IntervalSet", Interval]) -> bool:
        return self.difference(other).is_empty

    __or__ = union
    __and__ = intersection
    __sub__ = difference
    __xor__ = symmetric_difference
    __le__ = issubset

    # -- container protocol -------------------------------------------------------

    def __contains__(self, item: Any) -> bool:
        if isinstance(item, Interval):
            return item.is_empty or any(member.contains_interval(item) for member in self._intervals)
        return any(member.contains(item) for member in self._intervals)

    def __iter__(self) -> Iterator[Interval]:
        return iter(self._intervals)

    def __len__(self) -> int:
        return len(self._intervals)

    def __bool__(self) -> bool:
        return bool(self._intervals)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IntervalSet):
            return NotImplemented
        return self._intervals == other._intervals

    def __hash__(self) -> int:
        return hash(self._intervals)

    def __repr__(self) -> str:
        return f"IntervalSet({list(self._intervals)!r})"

    def __str__(self) -> str:
        if not self._intervals:
            return "{}"
        return " | ".join(str(interval) for interval in self._intervals)

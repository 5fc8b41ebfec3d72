"""A single interval over any totally ordered type, with open or closed bounds."""

from __future__ import annotations

import math
import re
from typing import Any, List, Tuple

_INTERVAL_RE = re.compile(r"^\s*([\[(])\s*([^,\s]+)\s*,\s*([^,\s]+)\s*([\])])\s*$")
_EMPTY_TEXT = "{}"


def _parse_bound(token: str) -> Any:
    """Parse an int, float or (signed) ``inf`` bound."""
    lowered = token.lower()
    if lowered in ("inf", "+inf", "infinity", "+infinity"):
        return math.inf
    if lowered in ("-inf", "-infinity"):
        return -math.inf
    try:
        return int(token)
    except ValueError:
        return float(token)


class Interval:
    """An interval ``lower..upper`` whose ends may each be open or closed.

    Any values that support ``<`` and ``==`` can be used as bounds (numbers,
    dates, strings...).  An interval with ``lower == upper`` that is not closed
    on both sides contains nothing and becomes the empty interval; all empty
    intervals compare equal.
    """

    __slots__ = ("_lower", "_upper", "_lower_closed", "_upper_closed", "_empty")

    def __init__(self, lower: Any, upper: Any, lower_closed: bool = True, upper_closed: bool = True) -> None:
        if upper < lower:
            raise ValueError(f"lower bound {lower!r} is greater than upper bound {upper!r}")
        self._empty = lower == upper and not (lower_closed and upper_closed)
        if self._empty:
            lower = upper = None
            lower_closed = upper_closed = False
        self._lower = lower
        self._upper = upper
        self._lower_closed = bool(lower_closed)
        self._upper_closed = bool(upper_closed)

    # -- alternative constructors -------------------------------------------------

    @classmethod
    def closed(cls, lower: Any, upper: Any) -> "Interval":
        """``[lower, upper]``"""
        return cls(lower, upper, True, True)

    @classmethod
    def open(cls, lower: Any, upper: Any) -> "Interval":
        """``(lower, upper)``"""
        return cls(lower, upper, False, False)

    @classmethod
    def closed_open(cls, lower: Any, upper: Any) -> "Interval":
        """``[lower, upper)``"""
        return cls(lower, upper, True, False)

    @classmethod
    def open_closed(cls, lower: Any, upper: Any) -> "Interval":
        """``(lower, upper]``"""
        return cls(lower, upper, False, True)

    @classmethod
    def point(cls, value: Any) -> "Interval":
        """The degenerate interval ``[value, value]``."""
        return cls(value, value, True, True)

    @classmethod
    def empty(cls) -> "Interval":
        """The empty interval."""
        return cls(0, 0, False, False)

    @classmethod
    def parse(cls, text: str) -> "Interval":
        """Parse mathematical notation such as ``"[1, 3)"`` or ``"(-inf, 0]"``.

        ``"{}"`` is the empty interval.
        """
        if text.strip() == _EMPTY_TEXT:
            return cls.empty()
        match = _INTERVAL_RE.match(text)
        if match is None:
            raise ValueError(f"cannot parse interval from {text!r}")
        left, lower, upper, right = match.groups()
        return cls(_parse_bound(lower), _parse_bound(upper), left == "[", right == "]")

    # -- properties ---------------------------------------------------------------

    @property
    def lower(self) -> Any:
        return self._lower

    @property
    def upper(self) -> Any:
        return self._upper

    @property
    def lower_closed(self) -> bool:
        return self._lower_closed

    @property
    def upper_closed(self) -> bool:
        return self._upper_closed

    @property
    def is_empty(self) -> bool:
        return self._empty

    @property
    def length(self) -> Any:
        """``upper - lower`` (``0`` for the empty interval)."""
        if self._empty:
            return 0
        return self._upper - self._lower

    def _lower_key(self) -> Tuple[Any, int]:
        return (self._lower, 0 if self._lower_closed else 1)

    def _upper_key(self) -> Tuple[Any, int]:
        return (self._upper, 1 if self._upper_closed else 0)

    # -- predicates ---------------------------------------------------------------

    def contains(self, value: Any) -> bool:
        """True if the point ``value`` lies in the interval."""
        if self._empty:
            return False
        above = self._lower < value or (self._lower_closed and self._lower == value)
        below = value < self._upper or (self._upper_closed and value == self._upper)
        return above and below

    def contains_interval(self, other: "Interval") -> bool:
        """True if every point of ``other`` lies in this interval."""
        if other._empty:
            return True
        if self._empty:
            return False
        return self._lower_key() <= other._lower_key() and other._upper_key() <= self._upper_key()

    def __contains__(self, item: Any) -> bool:
        if isinstance(item, Interval):
            return self.contains_interval(item)
        return self.contains(item)

    def overlaps(self, other: "Interval") -> bool:
        """True if the two intervals share at least one point."""
        return not self.intersection(other).is_empty

    def is_adjacent(self, other: "Interval") -> bool:
        """True if the intervals touch without overlapping, e.g. ``[1, 2)`` and ``[2, 3]``."""
        if self._empty or other._empty:
            return False
        if self._upper == other._lower:
            return self._upper_closed != other._lower_closed
        if other._upper == self._lower:
            return other._upper_closed != self._lower_closed
        return False

    # -- operations ---------------------------------------------------------------

    def intersection(self, other: "Interval") -> "Interval":
        """The (possibly empty) interval of points in both intervals."""
        if self._empty or other._empty:
            return Interval.empty()
        lower_source = max(self, other, key=Interval._lower_key)
        upper_source = min(self, other, key=Interval._upper_key)
        lower, upper = lower_source._lower, upper_source._upper
        if upper < lower:
            return Interval.empty()
        return Interval(lower, upper, lower_source._lower_closed, upper_source._upper_closed)

    def hull(self, other: "Interval") -> "Interval":
        """The smallest interval containing both intervals."""
        if self._empty:
            return other
        if other._empty:
            return self
        lower_source = min(self, other, key=Interval._lower_key)
        upper_source = max(self, other, key=Interval._upper_key)
        return Interval(
            lower_source._lower, upper_source._upper, lower_source._lower_closed, upper_source._upper_closed
        )

    def union(self, other: "Interval") -> "Interval":
        """The union of two overlapping or adjacent intervals.

        Raises ``ValueError`` if the union would not be a single interval.
        """
        if self._empty or other._empty or self.overlaps(other) or self.is_adjacent(other):
            return self.hull(other)
        raise ValueError(f"union of disjoint intervals {self} and {other} is not an interval")

    def difference(self, other: "Interval") -> List["Interval"]:
        """The parts of this interval not in ``other`` (zero, one or two intervals)."""
        common = self.intersection(other)
        if common.is_empty:
            return [] if self._empty else [self]
        left = Interval(self._lower, common._lower, self._lower_closed, not common._lower_closed)
        right = Interval(common._upper, self._upper, not common._upper_closed, self._upper_closed)
        return [piece for piece in (left, right) if not piece.is_empty]

    __and__ = intersection
    __or__ = union

    def shift(self, delta: Any) -> "Interval":
        """The interval moved by ``delta`` (works for dates with a ``timedelta``)."""
        if self._empty:
            return self
        return Interval(self._lower + delta, self._upper + delta, self._lower_closed, self._upper_closed)

    def clamp(self, value: Any) -> Any:
        """``value`` limited to the interval's bounds (openness is ignored)."""
        if self._empty:
            raise ValueError("cannot clamp to the empty interval")
        if value < self._lower:
            return self._lower
        if self._upper < value:
            return self._upper
        return value

    # -- dunder protocol ----------------------------------------------------------

    def _key(self) -> Tuple[Any, ...]:
        return (self._lower, self._upper, self._lower_closed, self._upper_closed)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Interval):
            return NotImplemented
        if self._empty or other._empty:
            return self._empty and other._empty
        return self._key() == other._key()

    def __hash__(self) -> int:
        if self._empty:
            return hash(_EMPTY_TEXT)
        return hash(self._key())

    def __lt__(self, other: "Interval") -> bool:
        """Order by lower bound, then upper bound; the empty interval sorts first."""
        if not isinstance(other, Interval):
            return NotImplemented
        if self._empty or other._empty:
            return self._empty and not other._empty
        return (self._lower_key(), self._upper_key()) < (other._lower_key(), other._upper_key())

    def __bool__(self) -> bool:
        return not self._empty

    def __repr__(self) -> str:
        if self._empty:
            return "Interval.empty()"
        return (
            f"Interval({self._lower!r}, {self._upper!r}, "
            f"lower_closed={self._lower_closed}, upper_closed={self._upper_closed})"
        )

    def __str__(self) -> str:
        if self._empty:
            return _EMPTY_TEXT
        left = "[" if self._lower_closed else "("
        right = "]" if self._upper_closed else ")"
        return f"{left}{self._lower}, {self._upper}{right}"

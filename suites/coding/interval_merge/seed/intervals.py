"""Interval arithmetic for the meeting-room booking service.

An interval is a ``(start, end)`` tuple of numbers (minutes since midnight)
with ``start <= end``; both ends are inclusive for merging purposes, so
intervals that overlap or touch (``(60, 90)`` and ``(90, 120)``) are merged.
A zero-length interval ``(t, t)`` is allowed. Functions never modify the
lists they are given.
"""

from __future__ import annotations

Interval = tuple[float, float]


def _check(intervals: list[Interval]) -> None:
    for start, end in intervals:
        if start > end:
            raise ValueError(f"interval ({start}, {end}) ends before it starts")


def merge(intervals: list[Interval]) -> list[Interval]:
    """Merge overlapping or touching intervals; result sorted by start."""
    _check(intervals)
    intervals.sort()
    merged: list[Interval] = []
    for start, end in intervals:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def total_busy(intervals: list[Interval]) -> float:
    """Total length covered by the intervals, counting overlaps once."""
    return sum(end - start for start, end in merge(intervals))


def free_slots(
    busy: list[Interval], day_start: float, day_end: float, min_length: float = 0
) -> list[Interval]:
    """Gaps between busy intervals inside ``[day_start, day_end]``.

    Busy intervals may extend outside the window; only the part inside
    counts. Gaps shorter than ``min_length`` (or of zero length) are left out.
    """
    if day_start > day_end:
        raise ValueError("day_start is after day_end")
    slots: list[Interval] = []
    cursor = day_start
    for start, end in merge(busy):
        if end <= cursor:
            continue
        if start >= day_end:
            break
        if start > cursor:
            slots.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < day_end:
        slots.append((cursor, day_end))
    return [(s, e) for s, e in slots if e - s > 0 and e - s >= min_length]

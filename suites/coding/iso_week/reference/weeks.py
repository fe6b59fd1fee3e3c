"""ISO 8601 week helpers for the weekly reporting job.

A week label looks like ``2024-W07``: the ISO week-numbering year, ``-W``
and the two-digit week number. ISO weeks start on Monday; week 1 is the week
that contains the year's first Thursday, so the first days of January can
belong to the last week of the previous ISO year and the last days of
December to week 1 of the next one. An ISO year has 52 or 53 weeks.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_LABEL = re.compile(r"^(\d{4})-W(\d{2})$")


def weeks_in_year(year: int) -> int:
    """Number of ISO weeks (52 or 53) in ISO year ``year``."""
    # 28 December is always in the last ISO week of its year.
    return date(year, 12, 28).isocalendar()[1]


def week_label(day: date) -> str:
    """ISO week label of ``day``, e.g. ``date(2024, 2, 14)`` -> ``"2024-W07"``."""
    iso_year, week, _ = day.isocalendar()
    return f"{iso_year}-W{week:02d}"


def parse_week_label(label: str) -> tuple[int, int]:
    """``"2024-W07"`` -> ``(2024, 7)``; ``ValueError`` for a malformed label or
    a week number the year does not have."""
    match = _LABEL.match(label)
    if not match:
        raise ValueError(f"not a week label: {label!r}")
    year, week = int(match.group(1)), int(match.group(2))
    if not 1 <= week <= weeks_in_year(year):
        raise ValueError(f"{year} has no week {week}")
    return year, week


def week_start(year: int, week: int) -> date:
    """Monday of ISO week ``week`` of ISO year ``year``."""
    if not 1 <= week <= weeks_in_year(year):
        raise ValueError(f"{year} has no week {week}")
    # 4 January is always in ISO week 1.
    jan4 = date(year, 1, 4)
    week1_monday = jan4 - timedelta(days=jan4.weekday())
    return week1_monday + timedelta(weeks=week - 1)


def week_range(label: str) -> tuple[date, date]:
    """First (Monday) and last (Sunday) day of the labelled week."""
    start = week_start(*parse_week_label(label))
    return start, start + timedelta(days=6)

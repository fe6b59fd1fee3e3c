from datetime import date, timedelta

import pytest
from weeks import parse_week_label, week_label, week_range, week_start, weeks_in_year


def test_late_december_belongs_to_next_iso_year():
    assert week_label(date(2024, 12, 30)) == "2025-W01"
    assert week_label(date(2019, 12, 31)) == "2020-W01"


def test_early_january_belongs_to_previous_iso_year():
    assert week_label(date(2021, 1, 1)) == "2020-W53"
    assert week_label(date(2022, 1, 2)) == "2021-W52"
    assert week_label(date(2027, 1, 3)) == "2026-W53"


def test_week_start_when_january_first_is_late_in_the_week():
    assert week_start(2021, 1) == date(2021, 1, 4)
    assert week_start(2022, 1) == date(2022, 1, 3)
    assert week_start(2027, 1) == date(2027, 1, 4)


def test_week_start_when_week_one_begins_in_december():
    assert week_start(2025, 1) == date(2024, 12, 30)
    assert week_start(2020, 1) == date(2019, 12, 30)


def test_leap_year_starting_on_wednesday_has_53_weeks():
    assert weeks_in_year(2020) == 53
    assert weeks_in_year(1992) == 53
    assert parse_week_label("2020-W53") == (2020, 53)
    assert week_range("2020-W53") == (date(2020, 12, 28), date(2021, 1, 3))


def test_53rd_week_rejected_in_52_week_years():
    for year in (2019, 2021, 2023, 2025):
        with pytest.raises(ValueError):
            parse_week_label(f"{year}-W53")


def test_every_day_round_trips_2015_to_2032():
    day = date(2015, 1, 1)
    while day < date(2033, 1, 1):
        start, end = week_range(week_label(day))
        assert start <= day <= end and start.weekday() == 0, day
        day += timedelta(days=1)

from datetime import date

import pytest
from weeks import parse_week_label, week_label, week_range, week_start, weeks_in_year


def test_label_mid_year():
    assert week_label(date(2024, 2, 14)) == "2024-W07"
    assert week_label(date(2025, 6, 30)) == "2025-W27"


def test_week_start_when_year_starts_on_monday():
    assert week_start(2024, 1) == date(2024, 1, 1)
    assert week_start(2024, 10) == date(2024, 3, 4)


def test_week_range():
    assert week_range("2025-W10") == (date(2025, 3, 3), date(2025, 3, 9))


def test_weeks_in_year_common_cases():
    assert weeks_in_year(2023) == 52
    assert weeks_in_year(2026) == 53


def test_parse_rejects_bad_labels():
    assert parse_week_label("2024-W07") == (2024, 7)
    for bad in ("2024-W00", "2024-7", "2023-W53"):
        with pytest.raises(ValueError):
            parse_week_label(bad)

import pytest
from intervals import free_slots, merge, total_busy


def test_merge_sorts_disjoint_intervals():
    assert merge([(300, 360), (60, 120)]) == [(60, 120), (300, 360)]


def test_merge_overlapping_and_touching():
    assert merge([(60, 90), (80, 100), (100, 130), (200, 210)]) == [
        (60, 130),
        (200, 210),
    ]


def test_merge_empty_and_invalid():
    assert merge([]) == []
    with pytest.raises(ValueError):
        merge([(10, 5)])


def test_total_busy_counts_overlap_once():
    assert total_busy([(0, 30), (15, 45), (60, 90)]) == 75


def test_free_slots_simple_day():
    busy = [(600, 660), (720, 780)]
    assert free_slots(busy, 540, 1020) == [(540, 600), (660, 720), (780, 1020)]

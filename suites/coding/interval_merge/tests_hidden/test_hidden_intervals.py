from intervals import free_slots, merge, total_busy


def test_interval_contained_in_previous_one():
    assert merge([(60, 240), (90, 120)]) == [(60, 240)]


def test_contained_interval_followed_by_overlap():
    assert merge([(0, 100), (10, 20), (50, 60), (90, 130), (200, 210)]) == [
        (0, 130),
        (200, 210),
    ]


def test_merge_does_not_modify_its_argument():
    busy = [(300, 360), (60, 120), (100, 110)]
    snapshot = list(busy)
    merge(busy)
    total_busy(busy)
    free_slots(busy, 0, 600)
    assert busy == snapshot


def test_total_busy_with_nested_meetings():
    assert total_busy([(540, 720), (600, 630), (610, 615)]) == 180


def test_free_slots_with_nested_meeting():
    busy = [(540, 720), (560, 600), (800, 830)]
    assert free_slots(busy, 480, 900) == [(480, 540), (720, 800), (830, 900)]


def test_free_slots_clips_to_window_and_min_length():
    busy = [(400, 500), (520, 525), (1000, 1200)]
    assert free_slots(busy, 480, 1080, min_length=30) == [(525, 1000)]


def test_zero_length_and_identical_intervals():
    assert merge([(5, 5), (5, 5), (1, 3), (3, 3)]) == [(1, 3), (5, 5)]

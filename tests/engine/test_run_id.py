"""Run ids: one function for executed and imported runs."""

from __future__ import annotations

import re

from aeh.engine.run_id import new_run_id

_ID = r"\d{8}-\d{6}-[0-9a-f]{6}"


def test_an_executed_run_id_is_the_stamp_and_a_random_tail() -> None:
    assert re.fullmatch(_ID, new_run_id())


def test_an_imported_run_id_says_where_it_came_from() -> None:
    assert re.fullmatch(rf"tau-{_ID}", new_run_id("tau"))

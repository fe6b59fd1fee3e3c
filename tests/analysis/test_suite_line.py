"""The suite line of the run table: a one-task run has no suite interval, so it shows the task's."""

from __future__ import annotations

import aeh
from aeh.analysis import format_run_table
from aeh.stats import suite_rate, wilson_interval
from aeh.store import Store


def test_one_task_run_shows_the_tasks_wilson_interval_not_nan(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    build.run(store, "one", {"a": [True, True, False, True]})
    text = format_run_table(aeh.load_run("one", db=store))
    suite = next(line for line in text.splitlines() if line.startswith("suite rate"))
    low, high = wilson_interval(3, 4)
    assert "nan" not in suite and "needs ≥ 2 tasks" in suite
    assert f"[{low:.3f}, {high:.3f}]" in suite and "over 1 task " in suite


def test_two_task_suite_line_is_unchanged(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    build.run(store, "two", {"a": [True, True, False, True], "b": [False, True, False, False]})
    suite = next(line for line in format_run_table(aeh.load_run("two", db=store)).splitlines()
                 if line.startswith("suite rate"))
    s = suite_rate([0.75, 0.25])
    assert suite == (f"suite rate 0.500  95% CI [{s.low:.3f}, {s.high:.3f}] over 2 tasks — {s.method}")


def test_suite_rate_of_one_task_says_why_there_is_no_interval() -> None:
    one = suite_rate([0.6])
    assert one.low != one.low and "needs ≥ 2 tasks" in one.method


def test_report_and_import_summary_of_one_task_print_no_nan_interval(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    from aeh.commands.import_runs import summary_line
    from aeh.report.views import suite_line

    build.run(store, "one", {"a": [True, True, False, True]})
    table = aeh.load_run("one", db=store)
    html = suite_line(table).data
    line = summary_line(table)
    for text in (html, line):
        assert "nan" not in text and "no interval with one task" in text

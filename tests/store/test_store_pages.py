"""Paged reads: a page of runs or attempts, its totals, filters, and the dimension scores of its rows."""

from __future__ import annotations

from aeh.store import AttemptFilter, Store, attempt_page, dimension_means, run_choices, run_page


def test_run_page_newest_first_with_totals(mock_db):
    db, run_a, run_b = mock_db
    with Store(db, read_only=True) as store:
        page = run_page(store)
        assert [s.info.run_id for s in page.runs][:2] == [run_b, run_a] and page.total >= 2
        first = run_page(store, limit=1)
        assert len(first.runs) == 1 and first.total == page.total
        second = run_page(store, limit=1, offset=1)
        assert second.runs[0].info.run_id != first.runs[0].info.run_id
        b = next(s for s in page.runs if s.info.run_id == run_b)
        assert b.attempts == 9 and sum(t.n + t.harness_errors for t in b.tasks) == 9
        frame = store.attempts_frame(run_b, ["success"])
        assert sum(t.successes for t in b.tasks) == int(frame["success"].sum())
        assert run_page(store, suite="no-such-suite").total == 0
        assert "toy_math" in run_choices(store)["suite"]


def test_attempt_page_filters_and_pages(mock_db):
    db, _, run_b = mock_db
    with Store(db, read_only=True) as store:
        frame = store.attempts_frame(run_b, ["task_id", "attempt", "success", "failure_bucket"])
        whole = attempt_page(store, run_b, limit=100)
        assert whole.total == frame.height == len(whole.rows)
        assert [(r.task_id, r.attempt) for r in whole.rows] == list(zip(frame["task_id"], frame["attempt"],
                                                                          strict=True))
        two = attempt_page(store, run_b, limit=2, offset=2)
        assert [(r.task_id, r.attempt) for r in two.rows] == [(r.task_id, r.attempt) for r in whole.rows[2:4]]
        failed = attempt_page(store, run_b, AttemptFilter(failed_only=True), limit=100)
        assert failed.total == int((~frame["success"]).sum()) and not any(r.success for r in failed.rows)
        task = str(frame["task_id"][0])
        assert {r.task_id for r in attempt_page(store, run_b, AttemptFilter(task_id=task)).rows} == {task}
        bucket = next(b for b in frame["failure_bucket"] if b)
        in_bucket = attempt_page(store, run_b, AttemptFilter(failure_bucket=bucket), limit=100)
        assert in_bucket.total == int((frame["failure_bucket"] == bucket).sum())
        assert all(r.dimensions for r in whole.rows)  # scored at run end, read for the page's rows
        cited = attempt_page(store, run_b, AttemptFilter(cited_only=True), limit=100)
        assert all(r.cited_steps for r in cited.rows)
        assert cited.total == sum(1 for r in whole.rows if r.cited_steps)
        means = dimension_means(store, run_b)
        assert means and all(0 <= m <= 1 for _, _, m, _ in means)

"""A scorecard page read as aggregates equals `run_table` on a real run: the page's task rows, and
the run-wide summary (suite rate and interval, harness errors left out of the rates, cost, buckets,
warnings) whatever page is read."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import aeh
from aeh.adapters.mock import MockAdapter
from aeh.analysis import RunResult, run_table, scorecard_page
from aeh.store import Store


class SometimesCrashes(MockAdapter):
    """The mock agent, but the adapter raises (a harness error) on every other attempt of one task
    and on every attempt of another (a task with no valid attempt: rate NaN)."""

    async def run(self, task: Any, ctx: Any) -> Any:
        if (task.id == "count_inbox_words" and ctx.attempt % 2 == 0) or task.id == "write_greeting":
            raise RuntimeError("adapter bug")
        return await super().run(task, ctx)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    db = str(tmp_path_factory.mktemp("scorecard") / "runs.db")
    result = aeh.run("smoke", adapter=SometimesCrashes(model="mock-degraded"), attempts=4, seed=3, db=db,
                     progress=False)
    return db, result.run_id


def test_every_page_equals_run_table(run: tuple[str, str]) -> None:
    db, run_id = run
    whole = run_table(run_id, db)
    assert whole.harness_errors > 0 and (whole.table["harness_errors"] > 0).any()  # the case under test
    assert (whole.table["n"] < whole.table["attempts"]).any()  # harness errors left out of n
    limit = 2
    pages = [scorecard_page(run_id, db, offset=o, limit=limit) for o in range(0, len(whole.table), limit)]
    pages.append(scorecard_page(run_id, db, offset=len(whole.table), limit=limit))  # past the last task
    for page in pages:
        assert page.tasks == list(whole.table["task_id"])
        for name in RunResult.field_names():
            assert getattr(page.result, name) == getattr(whole, name) or _both_nan(page.result, whole, name), name
    rows = pd.concat([p.result.table for p in pages[:-1]], ignore_index=True)
    pd.testing.assert_frame_equal(rows, whole.table, check_exact=False, rtol=1e-12)
    expected = {b: int(whole.table[f"fail_{b}"].sum()) for b in aeh.analysis.BUCKET_ABBREVIATIONS
                if f"fail_{b}" in whole.table.columns}
    expected["harness_error"] = int(whole.table["harness_errors"].sum())
    assert pages[0].buckets == {b: n for b, n in expected.items() if n}
    assert pages[-1].result.table.empty and list(pages[-1].result.columns) == list(whole.table.columns)


def _both_nan(a: RunResult, b: RunResult, name: str) -> bool:
    x, y = getattr(a, name), getattr(b, name)
    return isinstance(x, float) and isinstance(y, float) and x != x and y != y


def test_a_page_reads_its_own_tasks_only(run: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    db, run_id = run
    asked: list[tuple[Any, Any]] = []
    real = Store.attempts_frame

    def spy(self: Store, *args: Any, **kwargs: Any) -> Any:
        asked.append((kwargs.get("tasks"), kwargs.get("failure_bucket")))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "attempts_frame", spy)
    page = scorecard_page(run_id, db, offset=2, limit=2)
    assert list(page.result.table["task_id"]) == page.tasks[2:4]
    # attempt rows read: the latencies of the page's tasks, and the errors of harness-error attempts
    assert sorted(asked, key=str) == sorted([(page.tasks[2:4], None), (None, "harness_error")], key=str)


def test_bad_paging_is_a_clear_error(run: tuple[str, str]) -> None:
    db, run_id = run
    with pytest.raises(ValueError, match="offset ≥ 0 and limit ≥ 1"):
        scorecard_page(run_id, db, offset=-1)

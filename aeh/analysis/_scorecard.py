"""One page of a run's scorecard, read as aggregates: what the viewer shows, not the whole run.

`run_table` builds every task's row (buckets, tokens, cost, latency quantiles over every
attempt). A scorecard page needs that for the tasks it shows only, plus a few run-wide figures:
the suite rate and its interval (per-task counts), attempts, harness errors, cost, the failure
buckets and the faults check. SQLite aggregates those in one pass (GROUP BY task_id, counts and
sums only), and the page's rows are `task_totals` of its tasks (index range reads). The numbers
are run_table's: the same aggregates, the same interval, summary and warning functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aeh.analysis._results import RunResult
from aeh.analysis._run_table import run_table_from_totals, task_frame
from aeh.analysis._task_totals import AGENT_BUCKETS, RUN_WIDE, harness_errors, task_totals, with_rates_and_costs
from aeh.store import Store, StoreLike, using_store

__all__ = ["ScorecardPage", "scorecard_page"]


@dataclass(frozen=True)
class ScorecardPage:
    """A page of a run's scorecard.

    `result` is the run's `RunResult` — every summary field over the whole run, as `run_table`
    gives it — whose rows are this page's tasks only (run_table's columns and values).
    """

    result: RunResult
    #: every task of the run, in table order (by task_id)
    tasks: list[str]
    #: attempts per failure bucket over the whole run, harness_error included; buckets with none left out
    buckets: dict[str, int] = field(default_factory=dict)
    offset: int = 0
    limit: int = 50


def scorecard_page(run_id: str, db: StoreLike = None, *, offset: int = 0, limit: int = 50) -> ScorecardPage:
    """The scorecard of run `run_id` with the rows of its tasks `offset` … `offset + limit - 1`
    (in task order)."""
    if offset < 0 or limit < 1:
        raise ValueError(f"scorecard_page: offset {offset}, limit {limit} — pass offset ≥ 0 and limit ≥ 1")
    with using_store(db) as store, store.snapshot():
        return _page(store, run_id, offset, limit)


def _page(store: Store, run_id: str, offset: int, limit: int) -> ScorecardPage:
    info = store.run_info(run_id)
    wide = store.task_aggregates(info.run_id, RUN_WIDE)
    errors = harness_errors(store, info.run_id) if wide["harness_errors"].sum() else []
    whole = run_table_from_totals(with_rates_and_costs(wide), errors, info)
    shown = wide["task_id"][offset:offset + limit].to_list()
    rows = task_frame(task_totals(store, info.run_id, tasks=shown))
    result = RunResult(rows, **{name: getattr(whole, name) for name in RunResult.field_names()})
    buckets = {b: int(wide[f"fail_{b}"].sum()) for b in AGENT_BUCKETS}
    buckets["harness_error"] = int(wide["harness_errors"].sum())
    return ScorecardPage(result=result, tasks=wide["task_id"].to_list(),
                         buckets={b: n for b, n in buckets.items() if n}, offset=offset, limit=limit)

"""Per-task totals of a stored run, aggregated by SQLite: a thousand rows come back, not every attempt.

Fetching an attempt value costs a Python object, so a whole-run fetch of the fifteen columns the
per-task table needs was most of `load_run`'s time. Counts and sums are SQL aggregates here; only
latency, whose quantiles SQLite cannot take, is fetched per attempt (one float column) and
aggregated by polars, so the quantiles are the ones polars always gave. Float sums are SQLite's
(added in row order) where polars used a compensated sum: they agree to about 1e-15 relative.
Harness errors leave n (they are not the agent's failures) and are counted beside it.
"""

from __future__ import annotations

import polars as pl

from aeh.store import AGENT_BUCKETS, HARNESS_BUCKET, TASK_TOTALS, Store

__all__ = ["AGENT_BUCKETS", "HARNESS_BUCKET", "RUN_WIDE", "harness_errors", "task_counts", "task_totals",
           "with_rates_and_costs"]

_COUNT = pl.UInt32()  # the dtype polars gave these counts when it aggregated rows
_DTYPES: dict[str, pl.DataType] = {
    "tokens_in": pl.Int64(), "tokens_out": pl.Int64(), "_unpriced": pl.Boolean(), "cost_usd": pl.Float64(),
    "injected_faults": pl.Int64(), "tool_calls": pl.Int64(), "queue_s": pl.Float64(), "grading_s": pl.Float64(),
}  # fmt: skip

#: Everything else of the per-task table but latency, in the order of its columns: the store's
#: `TASK_TOTALS` (counts are UInt32, as polars gave them when it aggregated rows).
_TOTALS: dict[str, tuple[str, pl.DataType]] = {name: (sql, _DTYPES.get(name, _COUNT))
                                               for name, sql in TASK_TOTALS.items()}
#: What `compare` needs: attempts, valid attempts (n), their successes, harness errors.
_COUNTS = {k: _TOTALS[k] for k in ("attempts", "n", "successes", "harness_errors")}

#: What a run's summary needs of every task (suite rate, cost, buckets, the faults check), and no
#: more: a scorecard page reads these for the whole run and `_TOTALS` for its own tasks only.
RUN_WIDE: dict[str, tuple[str, pl.DataType]] = {
    k: _TOTALS[k] for k in ("attempts", "n", "successes", "harness_errors", *(f"fail_{b}" for b in AGENT_BUCKETS),
                            "_unpriced", "cost_usd", "injected_faults", "tool_calls")}
_LATENCY = ("latency_p50_s", "latency_p90_s")
_BEFORE_LATENCY = "injected_faults"


def task_counts(store: Store, run_id: str) -> pl.DataFrame:
    """task_id, attempts, n, successes, harness_errors and rate (NaN where n = 0), by task_id."""
    counts = store.task_aggregates(run_id, _COUNTS)
    return counts.with_columns((pl.col("successes") / pl.col("n")).alias("rate"))


def task_totals(store: Store, run_id: str, tasks: list[str] | None = None) -> pl.DataFrame:
    """The per-task table's polars frame: counts, buckets, tokens, cost, latency p50/p90, by task_id
    (of `tasks` only, if given).

    Call inside `store.snapshot()` so the totals and the latencies describe the same attempts.
    """
    totals = store.task_aggregates(run_id, _TOTALS, tasks=tasks)
    latency = _latency_quantiles(store, run_id, totals["attempts"], tasks)
    at = totals.columns.index(_BEFORE_LATENCY)
    return with_rates_and_costs(pl.concat([totals[:, :at], latency, totals[:, at:]], how="horizontal"))


def with_rates_and_costs(totals: pl.DataFrame) -> pl.DataFrame:
    """rate, and the cost columns None for a task with an unpriced attempt (`_unpriced`, dropped)."""
    unpriced = pl.col("_unpriced")
    return totals.with_columns(
        (pl.col("successes") / pl.col("n")).alias("rate"),
        pl.when(unpriced).then(None).otherwise(pl.col("cost_usd")).alias("cost_usd"),
        pl.when(unpriced).then(None).otherwise(pl.col("cost_usd") / pl.col("attempts")).alias("cost_per_attempt_usd"),
        # cost per success = total cost / successes; with no success it is undefined, not 0.
        pl.when(unpriced | (pl.col("successes") == 0)).then(None)
        .otherwise(pl.col("cost_usd") / pl.col("successes")).alias("cost_per_success_usd"),
        (~unpriced).alias("priced"),
    ).drop("_unpriced")


def _latency_quantiles(store: Store, run_id: str, attempts: pl.Series, tasks: list[str] | None) -> pl.DataFrame:
    """Median and p90 latency per task (linear interpolation), in the totals' task order.

    The latencies come in task order, so each task's rows are the next `attempts` ones: a
    task index repeated that many times groups them without fetching task_id per attempt.
    """
    latency = store.attempts_frame(run_id, ["latency_s"], tasks=tasks)["latency_s"]
    if latency.len() != attempts.sum():
        raise RuntimeError("latency rows and task totals disagree: read them inside store.snapshot()")
    task = pl.int_range(attempts.len(), eager=True).repeat_by(attempts).explode()
    return (
        pl.DataFrame({"task": task, "latency_s": latency})
        .group_by("task", maintain_order=True)
        .agg(pl.col("latency_s").quantile(0.5, "linear").alias(_LATENCY[0]),
             pl.col("latency_s").quantile(0.9, "linear").alias(_LATENCY[1]))
        .drop("task")
    )


def harness_errors(store: Store, run_id: str) -> list[str | None]:
    """The stored error of every harness-error attempt, in task and attempt order."""
    return store.attempts_frame(run_id, ["error"], failure_bucket=HARNESS_BUCKET)["error"].to_list()

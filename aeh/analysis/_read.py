"""DataFrames over stored runs: the per-task table, attempts, the run index, pass^k (spans: `_spans`)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from aeh.analysis._results import PassKResult, RunResult
from aeh.analysis._run_table import run_table_from_totals
from aeh.analysis._task_totals import harness_errors, task_totals
from aeh.stats import pass_at_k, pass_hat_k, pass_k_table
from aeh.store import ATTEMPTS_SCHEMA, Store, using_store

__all__ = ["StoreLike", "attempts", "load_run", "pass_k", "run_table", "runs"]

#: A Store (left open for its owner), a path, or None for the default db. A store opened here
#: from a path must exist (a read never creates one) and is closed before the function returns.
StoreLike = Store | str | Path | None


def run_table(run_id: str, db: StoreLike = None) -> RunResult:
    """The result of a stored run, its per-task table as `.table` (what `aeh.run` returns)."""
    with using_store(db) as store, store.snapshot():
        info = store.run_info(run_id)
        tasks = task_totals(store, info.run_id)
        errors = harness_errors(store, info.run_id) if tasks["harness_errors"].sum() else []
    return run_table_from_totals(tasks, errors, info)


load_run = run_table


def attempts(run_id: str, db: StoreLike = None) -> pd.DataFrame:
    """One row per attempt: success, bucket, cost, tokens, latency, grader verdicts, faults."""
    with using_store(db) as store, store.snapshot():  # verdicts of exactly these attempts
        full = store.resolve_run_id(run_id)
        keep = [c for c in ATTEMPTS_SCHEMA if c not in ("tool_calls", "invariant_results")]
        frame = store.attempts_frame(full, columns=keep)
        graders = store.grader_frame(full, ["task_id", "attempt", "name", "passed"], tier=0)
    if graders.height:
        verdicts = (
            graders.with_columns(pl.concat_str([pl.lit("grader:"), pl.col("name")]).alias("column"))
            .pivot(on="column", index=["task_id", "attempt"], values="passed", aggregate_function="first")
        )
        frame = frame.join(verdicts, on=["task_id", "attempt"], how="left", maintain_order="left")
    return frame.to_pandas()


def runs(db: StoreLike = None) -> pd.DataFrame:
    """The run index, newest first. `status` is `stale` for a run stored as running whose process
    is gone (killed): resume it with `aeh.run(resume=run_id)`."""
    with using_store(db) as store:
        rows = [info.model_dump(mode="json") for info in store.runs()]
    columns = ["run_id", "created_at", "finished_at", "status", "suite", "suite_hash", "adapter",
               "model", "seed", "attempts", "concurrency", "price_table_version",
               "price_table_date", "judge_model", "tier2_prompt_version", "parent_run_id", "aeh_version",
               "owner_pid", "owner_host", "heartbeat_at"]
    return pd.DataFrame(rows, columns=columns) if rows else pd.DataFrame(columns=columns)


def pass_k(run_id: str, db: StoreLike = None, kmax: int | None = None) -> PassKResult:
    """pass^k (all k succeed) and pass@k (at least one of k succeeds), unbiased, for k = 1..n.

    Rows per task and k ≤ that task's n, plus rows with task_id "<suite>" for k = 1..kmax:
    the mean over ONE set of tasks, those with n ≥ kmax, for every k (so the suite pass^k never
    rises with k). `kmax` defaults to the smallest n among tasks with attempts, so every task
    counts; a larger `kmax` leaves out tasks with fewer valid attempts, with a warning. The
    suite rows' `n` is the number of tasks they average; `.suite_tasks` lists them (the rows: `.table`).
    """
    table = run_table(run_id, db)
    rows: list[dict[str, Any]] = []
    counts: dict[str, tuple[int, int]] = {}
    for task_id, n, c in zip(table["task_id"], table["n"], table["successes"], strict=True):
        counts[task_id] = (int(n), int(c))
        for k in range(1, int(n) + 1):
            rows.append({"task_id": task_id, "k": k, "n": int(n), "successes": int(c),
                         "pass_hat_k": pass_hat_k(int(n), int(c), k),
                         "pass_at_k": pass_at_k(int(n), int(c), k)})
    frame = pd.DataFrame(rows, columns=["task_id", "k", "n", "successes", "pass_hat_k", "pass_at_k"])
    if frame.empty:
        return PassKResult(table=frame, run_id=table.run_id, suite_tasks=[], note="no attempts")
    suite = pd.DataFrame(pass_k_table(counts, kmax)).rename(columns={"tasks": "n"})
    top = int(suite["k"].max())
    kept = [t for t, (n, _) in counts.items() if n >= top]
    left_out = [t for t, (n, _) in counts.items() if n < top]
    notes = [f"suite rows: mean over the same {len(kept)} tasks (n ≥ {top}) at every k; n there counts them"]
    if left_out:
        message = (f"pass_k suite rows leave out {len(left_out)} task(s) with fewer than {top} valid "
                   f"attempts: {', '.join(left_out)}")
        warnings.warn(message, stacklevel=2)
        notes.append(message)
    elif top < max(n for n, _ in counts.values()):
        notes.append(f"suite rows stop at k = {top}, the fewest valid attempts of any task; "
                     "pass kmax= to go further over fewer tasks")
    suite["task_id"] = "<suite>"
    suite["successes"] = pd.NA
    frame = pd.concat([frame, suite[frame.columns]], ignore_index=True)
    return PassKResult(table=frame, run_id=table.run_id, suite_tasks=kept, note="; ".join(notes))

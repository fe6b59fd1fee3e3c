"""DataFrames over stored runs: the per-task table, attempts, spans, the run index, pass^k."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import polars as pl

from aeh.analysis._run_table import RUN_TABLE_COLUMNS, run_table_from_frames
from aeh.stats import pass_at_k, pass_hat_k
from aeh.store import ATTEMPTS_SCHEMA

__all__ = ["attempts", "load_run", "pass_k", "run_table", "runs", "spans"]

StoreLike = Any  # aeh.store.Store, a path, or None for the default db


def _store(db: StoreLike) -> Any:
    """The store to read; a missing file is an error, never a new empty store."""
    from aeh.store import open_store

    return open_store(db, must_exist=True)


def run_table(run_id: str, db: StoreLike = None) -> pd.DataFrame:
    """The per-task table of a stored run (what `aeh.run` returns)."""
    store = _store(db)
    info = store.run_info(run_id)
    frame = store.attempts_frame(info.run_id, columns=RUN_TABLE_COLUMNS)
    return run_table_from_frames(frame, info.model_dump(mode="json"))


load_run = run_table


def attempts(run_id: str, db: StoreLike = None) -> pd.DataFrame:
    """One row per attempt: success, bucket, cost, tokens, latency, grader verdicts, faults."""
    store = _store(db)
    full = store.resolve_run_id(run_id)
    keep = [c for c in ATTEMPTS_SCHEMA if c not in ("tool_calls", "invariant_results")]
    frame = store.attempts_frame(full, columns=keep)
    graders = store.grader_frame(full)
    if graders.height:
        verdicts = (
            graders.filter(pl.col("tier") == 0)
            .with_columns(pl.concat_str([pl.lit("grader:"), pl.col("name")]).alias("column"))
            .pivot(on="column", index=["task_id", "attempt"], values="passed", aggregate_function="first")
        )
        frame = frame.join(verdicts, on=["task_id", "attempt"], how="left")
    return frame.to_pandas()


def spans(run_id: str, db: StoreLike = None, task_id: str | None = None,
          attempt: int | None = None) -> pd.DataFrame:
    """One row per span; `attributes` is parsed into dicts."""
    store = _store(db)
    frame = store.spans_frame(store.resolve_run_id(run_id), task_id=task_id, attempt=attempt).to_pandas()
    frame["attributes"] = [json.loads(a) if a else {} for a in frame["attributes"]]
    return frame


def runs(db: StoreLike = None) -> pd.DataFrame:
    """The run index, newest first."""
    rows = [info.model_dump(mode="json") for info in _store(db).runs()]
    columns = ["run_id", "created_at", "finished_at", "status", "suite", "suite_hash", "adapter",
               "model", "seed", "attempts", "concurrency", "price_table_version",
               "price_table_date", "judge_model", "tier2_prompt_version", "parent_run_id", "aeh_version"]
    return pd.DataFrame(rows, columns=columns) if rows else pd.DataFrame(columns=columns)


def pass_k(run_id: str, db: StoreLike = None) -> pd.DataFrame:
    """pass^k (all k succeed) and pass@k (at least one of k succeeds), unbiased, for k = 1..n.

    Rows per task and k, plus rows with task_id "<suite>" holding the mean over tasks with n ≥ k.
    """
    table = run_table(run_id, db)
    rows: list[dict[str, Any]] = []
    for task_id, n, c in zip(table["task_id"], table["n"], table["successes"], strict=True):
        for k in range(1, int(n) + 1):
            rows.append({"task_id": task_id, "k": k, "n": int(n), "successes": int(c),
                         "pass_hat_k": pass_hat_k(int(n), int(c), k),
                         "pass_at_k": pass_at_k(int(n), int(c), k)})
    frame = pd.DataFrame(rows, columns=["task_id", "k", "n", "successes", "pass_hat_k", "pass_at_k"])
    if frame.empty:
        return frame
    suite = (frame.groupby("k").agg(pass_hat_k=("pass_hat_k", "mean"), pass_at_k=("pass_at_k", "mean"),
                                     n=("task_id", "size")).reset_index())
    suite["task_id"] = "<suite>"
    suite["successes"] = pd.NA
    suite = suite.rename(columns={"n": "n"})
    frame = pd.concat([frame, suite[frame.columns]], ignore_index=True)
    frame.attrs["run_id"] = table.attrs["run_id"]
    frame.attrs["note"] = "suite rows: mean over tasks with n ≥ k; n there counts those tasks"
    return frame

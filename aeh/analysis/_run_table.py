"""The per-task table of a run: every rate with its n and Wilson interval, cost, latency, buckets.

Polars aggregates over the store's attempt rows; the result crosses to pandas at the edge.
Harness errors leave n (they are not the agent's failures) and are counted beside it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
from statsmodels.stats.proportion import proportion_confint

from aeh.engine.fidelity import _planned_rate, warnings_from
from aeh.models import FAILURE_PRIORITY
from aeh.stats import suite_rate

__all__ = ["AGENT_BUCKETS", "BUCKET_ABBREVIATIONS", "HARNESS_ERROR_LIMIT", "RUN_TABLE_COLUMNS",
           "failure_summary", "harness_error_causes", "per_task_frame", "run_table_from_frames"]

#: The attempt columns the per-task table needs (the JSON columns are skipped for speed).
RUN_TABLE_COLUMNS = ("task_id", "attempt", "success", "clean_success", "failure_bucket", "tokens_in",
                     "tokens_out", "cost_usd", "latency_s", "n_injected_faults", "needs_human_review",
                     "error", "n_tool_calls", "queue_s", "grading_s")

#: Above this share of harness errors a run is not a valid measurement.
HARNESS_ERROR_LIMIT = 0.02
AGENT_BUCKETS = [b for b in FAILURE_PRIORITY if b != "harness_error"]


def per_task_frame(attempts: pl.DataFrame) -> pl.DataFrame:
    """Aggregate attempt rows (the store's attempts frame) to one row per task."""
    harness = (pl.col("failure_bucket") == "harness_error").fill_null(False)
    valid = ~harness
    bucket_cols = [
        (pl.col("failure_bucket") == b).fill_null(False).filter(valid).sum().alias(f"fail_{b}") for b in AGENT_BUCKETS
    ]
    grouped = attempts.group_by("task_id", maintain_order=True).agg(
        pl.len().alias("attempts"),
        valid.sum().alias("n"),
        pl.col("success").filter(valid).sum().alias("successes"),
        (pl.col("clean_success") & pl.col("success")).filter(valid).sum().alias("clean_successes"),
        (pl.col("success") & ~pl.col("clean_success")).filter(valid).sum().alias("successes_breaking_invariants"),
        harness.sum().alias("harness_errors"),
        *bucket_cols,
        pl.col("tokens_in").sum().alias("tokens_in"),
        pl.col("tokens_out").sum().alias("tokens_out"),
        pl.col("cost_usd").is_null().any().alias("_unpriced"),
        pl.col("cost_usd").sum().alias("cost_usd"),
        pl.col("latency_s").quantile(0.5, "linear").alias("latency_p50_s"),
        pl.col("latency_s").quantile(0.9, "linear").alias("latency_p90_s"),
        pl.col("n_injected_faults").sum().alias("injected_faults"),
        *([pl.col("n_tool_calls").sum().alias("tool_calls")] if "n_tool_calls" in attempts.columns else []),
        *([pl.col("queue_s").sum().alias("queue_s"), pl.col("grading_s").sum().alias("grading_s")]
          if "queue_s" in attempts.columns else []),
        pl.col("needs_human_review").sum().alias("needs_review"),
    )
    unpriced = pl.col("_unpriced")
    return grouped.with_columns(
        (pl.col("successes") / pl.col("n")).alias("rate"),
        pl.when(unpriced).then(None).otherwise(pl.col("cost_usd")).alias("cost_usd"),
        pl.when(unpriced).then(None).otherwise(pl.col("cost_usd") / pl.col("attempts")).alias("cost_per_attempt_usd"),
        # cost per success = total cost / successes; with no success it is undefined, not 0.
        pl.when(unpriced | (pl.col("successes") == 0)).then(None)
        .otherwise(pl.col("cost_usd") / pl.col("successes")).alias("cost_per_success_usd"),
        (~unpriced).alias("priced"),
    ).drop("_unpriced").sort("task_id")


#: Short names for the compact failure column of the CLI table (`wa:2 te:1`).
BUCKET_ABBREVIATIONS = {"tool_error": "te", "malformed_tool_call": "mtc", "hallucinated_tool": "ht",
                        "budget_exhausted": "be", "judge_unparseable": "ju", "wrong_answer": "wa",
                        "no_answer": "na",
                        "refusal": "ref"}


def failure_summary(row: dict[str, Any]) -> str:
    """`wa:2 te:1` from a per-task row's `fail_*` counts (most first); "" with no failure."""
    counts = [(b, int(row.get(f"fail_{b}") or 0)) for b in AGENT_BUCKETS]
    counts = sorted([c for c in counts if c[1]], key=lambda c: -c[1])
    return " ".join(f"{BUCKET_ABBREVIATIONS.get(b, b)}:{n}" for b, n in counts)


def _run_warnings(frame: pd.DataFrame, info: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The run's live checks (stored at run end) and its warnings; faults are re-derived from the
    attempt rows so runs stored before the checks existed still get the faults warning."""
    checks = dict((info.get("config") or {}).get("live_checks") or {})
    if (info.get("config") or {}).get("tools_probe"):
        checks["tools_probe"] = info["config"]["tools_probe"]
    if not checks and info.get("fault_profile"):
        checks = {"faults_planned_rate": _planned_rate(info.get("fault_profile"))}
    if len(frame) and "tool_calls" in frame.columns:
        checks["faults_injected"] = int(frame["injected_faults"].sum())
        checks["tool_calls"] = int(frame["tool_calls"].sum())
    checks.setdefault("faults_planned_rate", _planned_rate(info.get("fault_profile")))
    return checks, warnings_from(checks)


def _cause(error: str | None) -> str:
    first = (error or "").strip().split("\n", 1)[0].strip()
    # The provider's class name adds nothing to "model provider failed after …".
    first = first.removeprefix("ProviderError: ")
    return first[:240] or "(no error recorded)"


def harness_error_causes(attempts: pl.DataFrame) -> list[dict[str, Any]]:
    """Why attempts were harness errors: `[{"cause", "attempts"}]`, most common first.

    A cause is the first line of the stored error (e.g. "model provider failed after 4 tries:
    connection refused at http://127.0.0.1:9/v1"), so it is the same for a live run and a report.
    """
    if "error" not in attempts.columns or attempts.is_empty():
        return []
    errors = attempts.filter((pl.col("failure_bucket") == "harness_error").fill_null(False))["error"]
    counts: dict[str, int] = {}
    for error in errors.to_list():
        cause = _cause(error)
        counts[cause] = counts.get(cause, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: first seen wins ties
    return [{"cause": cause, "attempts": n} for cause, n in ranked]


def _with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Wilson 95% bounds for every task in one vectorised statsmodels call; NaN where n = 0."""
    k = frame["successes"].to_numpy(float)
    n = frame["n"].to_numpy(float)
    ok = n > 0
    low, high = proportion_confint(k, np.where(ok, n, 1), alpha=0.05, method="wilson")
    frame.insert(frame.columns.get_loc("rate") + 1, "low", np.where(ok, low, np.nan))
    frame.insert(frame.columns.get_loc("low") + 1, "high", np.where(ok, high, np.nan))
    return frame


_ORDER = ["task_id", "n", "successes", "rate", "low", "high", "clean_successes",
          "successes_breaking_invariants", "harness_errors", "attempts"]


def run_table_from_frames(attempts: pl.DataFrame, info: dict[str, Any]) -> pd.DataFrame:
    """Build the public per-task DataFrame, with the suite summary in `df.attrs`."""
    tasks = per_task_frame(attempts)
    frame = tasks.to_pandas()
    frame["rate"] = frame["rate"].astype(float)
    frame = _with_intervals(frame)
    rest = [c for c in frame.columns if c not in _ORDER]
    frame = frame[[c for c in _ORDER if c in frame.columns] + rest].reset_index(drop=True)

    rates = [r for r in frame["rate"].tolist() if not math.isnan(r)]
    summary = suite_rate(rates) if rates else None
    total = int(frame["attempts"].sum()) if len(frame) else 0
    errors = int(frame["harness_errors"].sum()) if len(frame) else 0
    error_rate = errors / total if total else 0.0
    priced = bool(frame["priced"].all()) if len(frame) else True
    total_cost = float(frame["cost_usd"].sum()) if priced and len(frame) else None
    successes = int(frame["successes"].sum()) if len(frame) else 0
    frame["failures"] = [failure_summary(r) for r in frame.to_dict("records")]
    checks, warnings = _run_warnings(frame, info)
    frame.attrs.update({
        "warnings": warnings,
        "live_checks": checks,
        "faults_planned_rate": checks.get("faults_planned_rate"),
        "faults_injected": checks.get("faults_injected"),
        "tool_calls": checks.get("tool_calls"),
        "judge_verdicts": checks.get("judge_verdicts"),
        "time_split_s": checks.get("time_s"),
        "run_id": info["run_id"],
        "run": info,
        "suite_rate": summary.mean if summary else float("nan"),
        "suite_low": summary.low if summary else float("nan"),
        "suite_high": summary.high if summary else float("nan"),
        "suite_se": summary.se if summary else float("nan"),
        "suite_rate_method": summary.method if summary else "no tasks",
        "n_tasks": len(rates),
        "attempts_total": total,
        "harness_errors": errors,
        "harness_error_rate": error_rate,
        "invalid_measurement": error_rate > HARNESS_ERROR_LIMIT,
        "harness_error_causes": harness_error_causes(attempts),
        "priced": priced,
        "total_cost_usd": total_cost,
        "cost_per_success_usd": (total_cost / successes) if total_cost is not None and successes else None,
        "price_table_version": info.get("price_table_version"),
        "price_table_date": info.get("price_table_date"),
        # Imported runs say how the source's results were counted (e.g. null results as failures).
        "import_policy": (info.get("config") or {}).get("import_policy"),
    })
    return frame

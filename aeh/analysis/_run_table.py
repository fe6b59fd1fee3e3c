"""The per-task table of a run: every rate with its n and Wilson interval, cost, latency, buckets.

The per-task totals (`_task_totals`, aggregated by SQLite) cross to pandas here and gain their
intervals; the suite summary and the run's warnings become the fields of a `RunResult`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from aeh.analysis._results import BUCKET_ABBREVIATIONS, RunResult
from aeh.analysis._task_totals import AGENT_BUCKETS
from aeh.engine import health_warnings, over_budget_warning
from aeh.engine.fidelity import _planned_rate, warnings_from
from aeh.errors import HARNESS_ERROR_LIMIT
from aeh.models import RunInfo
from aeh.stats import suite_rate
from aeh.stats import wilson_confint as proportion_confint

__all__ = ["BUCKET_ABBREVIATIONS", "HARNESS_ERROR_LIMIT", "counts_table", "failure_summaries",
           "harness_error_causes", "run_table_from_totals", "task_frame"]



def failure_summaries(frame: pd.DataFrame) -> list[str]:
    """Per task, `wa:2 te:1` from its `fail_*` counts (most first, ties in bucket order); "" with
    no failure. One pass over a plain list of counts: a dict per row cost more than the SQL."""
    names = [BUCKET_ABBREVIATIONS.get(b, b) for b in AGENT_BUCKETS]
    summaries = []
    for row in frame[[f"fail_{b}" for b in AGENT_BUCKETS]].to_numpy().tolist():
        counts = sorted([(name, n) for name, n in zip(names, row, strict=True) if n], key=lambda c: -c[1])
        summaries.append(" ".join(f"{name}:{n}" for name, n in counts))
    return summaries


def _run_warnings(frame: pd.DataFrame, run: RunInfo) -> tuple[dict[str, Any], list[str]]:
    """The run's live checks (stored at run end) and its warnings; faults are re-derived from the
    attempt rows so runs stored before the checks existed still get the faults warning."""
    config = run.config
    checks = config.live_checks.model_dump(mode="json", exclude_unset=True) if config.live_checks is not None else {}
    if config.tools_probe:
        checks["tools_probe"] = config.tools_probe
    if not checks and run.fault_profile:
        checks = {"faults_planned_rate": _planned_rate(run.fault_profile)}
    if len(frame) and "tool_calls" in frame.columns:
        checks["faults_injected"] = int(frame["injected_faults"].sum())
        checks["tool_calls"] = int(frame["tool_calls"].sum())
    checks.setdefault("faults_planned_rate", _planned_rate(run.fault_profile))
    over = over_budget_warning(config.facts)  # a graded recording ran over the suite's budget
    health = config.health.model_dump() if config.health is not None else None
    return checks, (warnings_from(checks) + health_warnings(health) + ([over] if over else []))


def _cause(error: str | None) -> str:
    first = (error or "").strip().split("\n", 1)[0].strip()
    # The provider's class name adds nothing to "model provider failed after …".
    first = first.removeprefix("ProviderError: ")
    return first[:240] or "(no error recorded)"


def harness_error_causes(errors: list[str | None]) -> list[dict[str, Any]]:
    """Why attempts were harness errors: `[{"cause", "attempts"}]`, most common first, from the
    stored errors of the harness-error attempts (in task and attempt order).

    A cause is the first line of the stored error (e.g. "model provider failed after 4 tries:
    connection refused at http://127.0.0.1:9/v1"), so it is the same for a live run and a report.
    """
    counts: dict[str, int] = {}
    for error in errors:
        cause = _cause(error)
        counts[cause] = counts.get(cause, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: first seen wins ties
    return [{"cause": cause, "attempts": n} for cause, n in ranked]


def _with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Wilson 95% bounds for every task in one vectorised statsmodels call; NaN where n = 0."""
    frame["rate"] = frame["rate"].astype(float)
    k = frame["successes"].to_numpy(float)
    n = frame["n"].to_numpy(float)
    ok = n > 0
    low, high = proportion_confint(k, np.where(ok, n, 1), alpha=0.05, method="wilson")
    frame.insert(frame.columns.get_loc("rate") + 1, "low", np.where(ok, low, np.nan))
    frame.insert(frame.columns.get_loc("low") + 1, "high", np.where(ok, high, np.nan))
    return frame


_ORDER = ["task_id", "n", "successes", "rate", "low", "high", "clean_successes",
          "successes_breaking_invariants", "harness_errors", "attempts"]


def run_table_from_totals(tasks: pl.DataFrame, errors: list[str | None], run: RunInfo) -> RunResult:
    """The run's result from the per-task totals (`task_totals`) and the stored errors of the
    harness-error attempts: the per-task table, the suite summary and the run's warnings."""
    frame = task_frame(tasks)
    priced = bool(frame["priced"].all()) if len(frame) else True
    total_cost = float(frame["cost_usd"].sum()) if priced and len(frame) else None
    successes = int(frame["successes"].sum()) if len(frame) else 0
    checks, warnings = _run_warnings(frame, run)
    return RunResult(
        table=frame, run=run, **_summary(frame, run.run_id),
        warnings=warnings,
        live_checks=checks,
        faults_planned_rate=checks.get("faults_planned_rate"),
        faults_injected=checks.get("faults_injected"),
        tool_calls=checks.get("tool_calls"),
        judge_verdicts=checks.get("judge_verdicts"),
        time_split_s=checks.get("time_s"),
        harness_health=run.config.health.model_dump() if run.config.health is not None else None,
        harness_error_causes=harness_error_causes(errors),
        priced=priced,
        total_cost_usd=total_cost,
        cost_per_success_usd=(total_cost / successes) if total_cost is not None and successes else None,
        **_evaluation_spend(checks.get("evaluation_spend"), total_cost if priced else None),
        price_table_version=run.price_table_version,
        price_table_date=run.price_table_date,
        # Imported runs say how the source's results were counted (e.g. null results as failures).
        import_policy=run.config.facts.get("import_policy"),
    )


def task_frame(tasks: pl.DataFrame) -> pd.DataFrame:
    """The per-task rows from per-task totals: Wilson intervals, the table's column order, and the
    failures summary (`wa:2 te:1`)."""
    frame = _with_intervals(tasks.to_pandas())
    rest = [c for c in frame.columns if c not in _ORDER]
    frame = frame[[c for c in _ORDER if c in frame.columns] + rest].reset_index(drop=True)
    frame["failures"] = failure_summaries(frame)
    return frame


def _evaluation_spend(spend: dict[str, Any] | None, agent_cost: float | None) -> dict[str, Any]:
    """Evaluation spend (judge graders, tier-2 localization, judged dimensions) beside the agent's:
    `evaluation_cost_usd` (None: unpriced or not recorded) and `run_cost_usd`, agent + evaluation."""
    if not spend:  # a run stored before evaluation spend was recorded: unknown, not $0
        return {"evaluation_spend": None, "evaluation_cost_usd": None, "run_cost_usd": None}
    usd = spend.get("usd")
    return {"evaluation_spend": spend, "evaluation_cost_usd": usd,
            "run_cost_usd": agent_cost + usd if agent_cost is not None and usd is not None else None}


def counts_table(counts: pl.DataFrame, run: RunInfo) -> RunResult:
    """The run's result cut to what `compare` reads: a table of task_id, n, successes, rate, low,
    high, harness_errors, attempts (from `task_counts`) and the suite summary; no cost or checks."""
    frame = _with_intervals(counts.to_pandas())
    frame = frame[[c for c in _ORDER if c in frame.columns]].reset_index(drop=True)
    return RunResult(table=frame, run=run, **_summary(frame, run.run_id))


def _summary(frame: pd.DataFrame, run_id: str) -> dict[str, Any]:
    """The run id, its suite rate with interval, and its harness-error share."""
    rates = [r for r in frame["rate"].tolist() if not math.isnan(r)]
    summary = suite_rate(rates) if rates else None
    total = int(frame["attempts"].sum()) if len(frame) else 0
    errors = int(frame["harness_errors"].sum()) if len(frame) else 0
    error_rate = errors / total if total else 0.0
    return {
        "run_id": run_id,
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
    }

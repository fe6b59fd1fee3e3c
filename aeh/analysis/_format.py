"""Plain-text rendering of analysis tables for the terminal."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from aeh._figure import figure, money
from aeh.errors import HARNESS_ERROR_LIMIT

if TYPE_CHECKING:
    from aeh.analysis._results import RunResult

__all__ = ["BUCKET_ABBREVIATIONS", "BUCKET_LEGEND", "evaluation_cost_text", "format_run_table", "judge_verdicts_text",
           "suite_interval_text"]

#: Short names for the compact failure column (`wa:2 te:1`) of the CLI table and the report.
BUCKET_ABBREVIATIONS = {"tool_error": "te", "malformed_tool_call": "mtc", "hallucinated_tool": "ht",
                        "budget_exhausted": "be", "judge_unparseable": "ju", "wrong_answer": "wa",
                        "no_answer": "na", "refusal": "ref"}

#: The key to those short names, as the CLI prints it under the table.
BUCKET_LEGEND = " · ".join(f"{short} {bucket}" for bucket, short in BUCKET_ABBREVIATIONS.items())


def suite_interval_text(result: RunResult) -> str:
    """`95% CI [0.412, 0.655]`, or why there is none: a suite interval needs tasks to spread across."""
    low, high, n_tasks = result.suite_low, result.suite_high, result.n_tasks
    if n_tasks < 2 or math.isnan(low) or math.isnan(high):
        return f"no interval with {'one task' if n_tasks == 1 else f'{n_tasks} tasks'} (a suite interval needs ≥ 2)"
    return f"95% CI [{low:.3f}, {high:.3f}]"


def judge_verdicts_text(judge: dict[str, object]) -> str:
    """`12 attempted, 10 valid, 1 failed (timeout 1), 1 unparseable (…), 0 automatic`."""
    reasons = ", ".join(f"{k} {v}" for k, v in (judge.get("failed_by_reason") or {}).items())  # type: ignore[attr-defined]
    text = (f"{judge.get('attempted', 0)} attempted, {judge.get('valid', 0)} valid, "
            f"{judge.get('failed', 0)} failed" + (f" ({reasons})" if reasons else ""))
    shadow = int(judge.get("shadow_unparseable") or 0)  # type: ignore[call-overload]
    deciding = int(judge.get("unparseable") or 0) - shadow  # type: ignore[call-overload]
    if deciding:
        text += (f", {deciding} unparseable (the agent's answer derailed the judge: counted as "
                 "not passed, bucket judge_unparseable, flagged for review)")
    if shadow:
        text += (f", {shadow} shadow verdicts unparseable (left out of agreement; the attempts keep "
                 "their graders' verdicts, not flagged)")
    return text + f", {judge.get('automatic', 0)} automatic"


def evaluation_cost_text(result: RunResult) -> str | None:
    """`evaluation $0.0006 (12 judge calls: judge grader 10, …), run total $0.1911`, or None when
    the run made no evaluation model call."""
    spend: dict[str, Any] | None = result.evaluation_spend
    if not spend or not spend.get("calls"):
        return None
    purposes = ", ".join(f"{k} {v}" for k, v in (spend.get("by_purpose") or {}).items())
    calls = f"{spend['calls']} judge call{'s' if spend['calls'] != 1 else ''}" + (f": {purposes}" if purposes else "")
    if spend.get("usd") is None:
        return (f"evaluation unpriced ({calls}; {spend.get('unpriced_calls', 0)} with a judge model missing "
                "from the price table)")
    total = result.run_cost_usd
    return (f"evaluation {figure(spend['usd'], '${:.4f}')} ({calls}), run total "
            + (figure(total, '${:.4f}') if total is not None else "unknown (the agent's cost is unpriced)"))


def format_run_table(result: RunResult) -> str:
    """The per-task table, the suite line, harness errors and the run id."""
    a, table = result, result.table
    cur = a.run.config.currency
    lines = [f"⚠ {w}" for w in a.warnings] + ([""] if a.warnings else [])
    lines.append(f"{'task':<34} {'n':>3} {'k':>3} {'rate':>5}  {'wilson 95%':<13} {'clean':>5} "
                 f"{'h.err':>5} {'cost/attempt':>12} {'cost/succ':>10} {'p50 s':>6}  failures")
    for row in table.itertuples(index=False):
        interval = f"[{row.low:.2f}, {row.high:.2f}]" if row.n else "—"
        rate = f"{row.rate:.2f}" if row.n else "—"
        failures = getattr(row, "failures", "") or ("—" if row.n == row.successes else "")
        lines.append(
            f"{row.task_id:<34} {row.n:>3} {row.successes:>3} {rate:>5}  {interval:<13} "
            f"{row.clean_successes:>5} {row.harness_errors:>5} {money(row.cost_per_attempt_usd, cur):>12} "
            f"{money(row.cost_per_success_usd, cur):>10} {row.latency_p50_s:>6.2f}  {failures}"
        )
    if "failures" in table.columns and any(table["failures"]):
        lines.append(f"failures: {BUCKET_LEGEND}")
    lines.append("")
    if a.n_tasks == 1:
        # No spread across tasks to build a suite interval from: show the task's own Wilson interval.
        only = table[table["n"] > 0].iloc[0]
        lines.append(
            f"suite rate {a.suite_rate:.3f} over 1 task — a suite interval needs ≥ 2 tasks; "
            f"the task's Wilson 95% CI [{only['low']:.3f}, {only['high']:.3f}] (n = {only['n']})"
        )
    elif a.n_tasks:
        lines.append(
            f"suite rate {a.suite_rate:.3f}  95% CI [{a.suite_low:.3f}, {a.suite_high:.3f}] "
            f"over {a.n_tasks} tasks — {a.suite_rate_method}"
        )
    per_success = (money(a.cost_per_success_usd, cur) if a.cost_per_success_usd is not None
                   else "— (no success)")
    unpriced = "unpriced (a model missing from the price table, or an agent that reported no model usage)"
    cost = unpriced if not a.priced else (
        f"total {money(a.total_cost_usd, cur)}, per success {per_success}")
    if cur != "USD":
        cost = f"{cost} (in {cur})"
    evaluation = evaluation_cost_text(a)
    if evaluation:  # the harness's spend beside the agent's, never inside its cost per success
        cost = f"{cost} (agent) · {evaluation}"
    lines.append(f"cost {cost} — price table {a.price_table_version} ({a.price_table_date})")
    errors = f"harness errors {a.harness_errors}/{a.attempts_total}"
    if a.invalid_measurement:
        errors += f" ({a.harness_error_rate:.1%} > {HARNESS_ERROR_LIMIT:.0%}): NOT A VALID MEASUREMENT"
    causes = a.harness_error_causes
    if causes:
        top = causes[0]
        errors += (
            f" — most common cause: {top['cause']} ({top['attempts']} attempt{'s' if top['attempts'] != 1 else ''})"
        )
        if len(causes) > 1:
            errors += f"; {len(causes) - 1} other cause{'s' if len(causes) > 2 else ''}"
    lines.append(errors)
    split = a.time_split_s
    if split:
        lines.append(f"time: agent {split.get('agent', 0):.2f} s (model + tools; latency columns and "
                     f"budgets), queued {split.get('queue', 0):.2f} s, grading {split.get('grading', 0):.2f} s")
    if a.faults_planned_rate:
        lines.append(f"faults: planned rate {a.faults_planned_rate:g}, injected {a.faults_injected or 0} "
                     f"over {a.tool_calls or 0} tool calls")
    judge = a.judge_verdicts or {}
    if judge.get("attempted") or judge.get("automatic"):
        lines.append(f"judge verdicts: {judge_verdicts_text(judge)}")
    if a.import_policy:
        lines.append(f"import policy: {a.import_policy}")
    lines.append(f"run id {a.run_id}")
    return "\n".join(lines)

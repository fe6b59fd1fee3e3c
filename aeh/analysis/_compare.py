"""`compare(run_a, run_b)`: per-task exact tests with Benjamini–Hochberg, a paired suite row, and the
two-level regression verdict (`CompareResult.verdict`) that the CLI, its exit code and the report read."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from aeh.analysis._results import CompareResult, CompareVerdict, MinimumDetectable, RunResult
from aeh.analysis._run_table import counts_table
from aeh.analysis._task_totals import task_counts
from aeh.analysis._validity import (
    CANNOT_JUDGE,
    CANNOT_JUDGE_HEADLINE,
    MIN_SHARED_TASKS,
    Measurement,
    Refusal,
    measurement_refusals,
    overlap_refusals,
    suite_refusals,
)
from aeh.errors import ConfigError
from aeh.models import RunWarning
from aeh.stats import SUITE_ALPHA, GateVerdict, TaskCounts, per_task_mde, regression_gate, suite_rate, two_sample_test
from aeh.store import Store, StoreLike, using_store

__all__ = ["SUITE_ROW", "compare", "comparison_warnings", "run_currency"]

SUITE_ROW = "<suite>"
TEST_METHOD = ("Boschloo's exact test per task (two-sided; exact and uniformly more powerful than "
               "Fisher's at n = 5–10; Fisher's exact test above 30 attempts per side), "
               "Benjamini–Hochberg q across tasks")

#: run field → (the warning's kind, its text) when the two runs differ in it
_WATCHED = {
    "suite_hash": ("suite_changed",
                   "suite definition changed (suite hash {a} → {b}): task pass rates may not be comparable"),
    "judge_model": ("judge_model_changed",
                    "judge model changed ({a} → {b}): judge verdicts and tier-2 localizations may differ"),
    "tier2_prompt_version": ("tier2_prompt_changed",
                             "tier-2 prompt version changed ({a} → {b}): localizations may differ"),
    "price_table_version": ("price_table_changed",
                            "price table changed ({a} → {b}): cost differences may be repricing, not behaviour"),
}


def run_currency(info: dict[str, Any]) -> str:
    """The one currency a run keeps its costs in (`--currency`; USD unless the run says otherwise)."""
    return str((info.get("config") or {}).get("cost_currency") or "USD")


def comparison_warnings(info_a: dict[str, Any], info_b: dict[str, Any]) -> list[RunWarning]:
    """Why a comparison may not be apples to apples (each warning with its `kind`)."""
    warnings = [RunWarning(msg.format(a=info_a.get(key), b=info_b.get(key)), kind)
                for key, (kind, msg) in _WATCHED.items() if info_a.get(key) != info_b.get(key)]
    cur_a, cur_b = run_currency(info_a), run_currency(info_b)
    if cur_a != cur_b:
        warnings.append(RunWarning(f"costs are in different currencies ({cur_a} → {cur_b}): cost figures of the two "
                                   "runs are not comparable; rerun one with --currency " + cur_a, "currency_differs"))
    for info, label in ((info_a, "A"), (info_b, "B")):
        if info.get("status") not in (None, "finished"):
            warnings.append(RunWarning(f"run {label} ({info['run_id']}) is {info.get('status')}, not finished",
                                       "unfinished"))
    return warnings


def _underpowered(counts: list[TaskCounts], fdr: float) -> RunWarning | None:
    """Say so when even the most extreme outcome (all pass in A, all fail in B) could not
    survive Benjamini–Hochberg for a lone task: then "no regression" means "could not tell"."""
    tested = [c for c in counts if c.n_a and c.n_b]
    if not tested:
        return None
    best = min(two_sample_test(c.n_a, c.n_a, 0, c.n_b) for c in tested)
    if best * len(tested) < fdr:
        return None
    n = max(max(c.n_a, c.n_b) for c in tested)
    return RunWarning(f"underpowered: with at most {n} attempts per task and {len(tested)} tasks, the smallest "
                      f"possible p ({best:.4f}) cannot pass BH at FDR {fdr} for a single task — a lone regressed "
                      "task cannot be flagged and the suite-level test decides alone; plan attempts with "
                      "aeh.power()", "underpowered")


def _counts(store: Store, run_id: str) -> RunResult:
    """The run's per-task counts with intervals and suite summary: what a comparison reads of the
    per-task table, without the cost, latency and bucket totals it does not."""
    with store.snapshot():
        info = store.run_info(run_id)
        counts = task_counts(store, info.run_id)
    return counts_table(counts, info)


def _refusals(table_a: RunResult, table_b: RunResult, shared: int, *, allow_unfinished: bool,
              overlap: bool, min_tasks: int) -> list[Refusal]:
    """Why the two runs cannot be judged against each other ([] when they can)."""
    a, b = (Measurement.of(t.run.model_dump(mode="json"), t.attempts_total, t.harness_errors)
            for t in (table_a, table_b))
    out = measurement_refusals(a, "run A", allow_unfinished=allow_unfinished)
    out += measurement_refusals(b, "run B", allow_unfinished=allow_unfinished)
    out += suite_refusals(a, b, overlap=overlap)
    return out + overlap_refusals(shared, min_tasks, already=out)


def compare(run_a: str, run_b: str, db: StoreLike = None, fdr: float = 0.05,
            suite_alpha: float = SUITE_ALPHA, *, allow_unfinished: bool = False, overlap: bool = False,
            min_tasks: int = MIN_SHARED_TASKS) -> CompareResult:
    """One row per task (A = baseline, B = new) plus a `<suite>` row over the tasks both runs
    tested (`.table`); the two-level verdict in `.verdict`, warnings in `.warnings`.

    `.verdict.status` is "regressed", "no regression" or "cannot judge": the latter
    when a run has harness errors over the limit or is unfinished (unless `allow_unfinished`),
    the runs measured different suites (unless `overlap`: judge the tasks both ran), or fewer than
    `min_tasks` tasks have valid attempts in both. Then `.verdict.regressed` is None, and
    `.verdict.reasons` (and `.verdict.cannot_judge`, each with check, reason, fix) say why and what to do.
    """
    for name, value in (("--fdr", fdr), ("suite_alpha", suite_alpha)):
        if not 0 < value < 1:  # also refuses nan
            raise ConfigError(f"{name} must be a probability between 0 and 1 (exclusive), got {value} — "
                              "e.g. --fdr 0.05")
    with using_store(db) as store:  # one connection for both runs
        result_a, result_b = _counts(store, run_a), _counts(store, run_b)
    a, b = _columns(result_a), _columns(result_b)
    task_ids = sorted(set(a["n"]) | set(b["n"]))
    counts = [TaskCounts(t, int(a["successes"].get(t, 0)), int(a["n"].get(t, 0)), int(b["successes"].get(t, 0)),
                         int(b["n"].get(t, 0)))
              for t in task_ids]
    gate = regression_gate(counts, fdr=fdr, suite_alpha=suite_alpha)
    paired = set(gate.paired)
    dropped = {
        "only_in_a": sorted(t for t in task_ids if t not in b["n"]),
        "only_in_b": sorted(t for t in task_ids if t not in a["n"]),
        "no_valid_attempts": sorted(t for t in task_ids if t in a["n"] and t in b["n"] and t not in paired),
    }
    dropped_note = (
        f"{sum(len(v) for v in dropped.values())} tasks dropped: only in A ({len(dropped['only_in_a'])}), only in B "
        f"({len(dropped['only_in_b'])}), no valid attempts ({len(dropped['no_valid_attempts'])})"
    )
    frame = pd.DataFrame([*_task_rows(gate, a, b), _suite_row(gate, dropped_note)])
    refusals = _refusals(result_a, result_b, len(paired), allow_unfinished=allow_unfinished, overlap=overlap,
                         min_tasks=min_tasks)
    warnings = _warnings(result_a, result_b, refusals, counts, fdr)
    if refusals:  # no verdict either way: no task is flagged regressed, improved or newly failing
        frame[["regressed", "improved"]] = False
    task_rows = frame[frame.task_id != SUITE_ROW]
    return CompareResult(
        table=frame,
        run_a=result_a.run_id,
        run_b=result_b.run_id,
        run_a_info=result_a.run,
        run_b_info=result_b.run,
        fdr=fdr,
        method=TEST_METHOD,
        verdict=_verdict(gate, refusals, counts, fdr, suite_alpha),
        warnings=list[str](warnings),
        regressed_tasks=task_rows.loc[task_rows.regressed, "task_id"].tolist(),
        improved_tasks=task_rows.loc[task_rows.improved, "task_id"].tolist(),
        newly_failing=[] if refusals else
        task_rows.loc[(task_rows.rate_a == 1.0) & (task_rows.rate_b < 1.0), "task_id"].tolist(),
        suite_a=result_a.suite,
        suite_b=result_b.suite,
        suite_dropped=dropped,
        suite_dropped_note=dropped_note,
    )


def _columns(result: RunResult) -> dict[str, dict[str, Any]]:
    """column → task → value of a run's per-task counts. Plain dicts: per-key lookups on a
    DataFrame cost more than on a dict."""
    table = result.table
    return {col: dict(zip(table["task_id"], table[col], strict=True))
            for col in ("successes", "n", "rate", "low", "high")}


def _task_rows(gate: GateVerdict, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per task of the gate, each run's interval beside its rate."""
    nan = math.nan
    rows = []
    for c in gate.tasks:
        note = c.note
        if c.task_id not in a["n"] or c.task_id not in b["n"]:
            note = f"only in run {'B' if c.task_id not in a['n'] else 'A'}: not tested"
        rows.append({
            "task_id": c.task_id,
            "n_a": c.n_a, "k_a": c.k_a, "rate_a": c.rate_a,
            "low_a": a["low"].get(c.task_id, nan), "high_a": a["high"].get(c.task_id, nan),
            "n_b": c.n_b, "k_b": c.k_b, "rate_b": c.rate_b,
            "low_b": b["low"].get(c.task_id, nan), "high_b": b["high"].get(c.task_id, nan),
            "delta": c.delta, "se": math.nan, "delta_low": c.delta_low, "delta_high": c.delta_high,
            "p_value": c.p, "q_value": c.q, "regressed": c.regressed, "improved": c.improved, "note": note,
        })
    return rows


def _suite_row(gate: GateVerdict, dropped_note: str) -> dict[str, Any]:
    """The suite row shows the rates its paired delta is computed from: the mean over the tasks
    both runs tested, not each run's own suite rate (which may cover other tasks)."""
    paired = set(gate.paired)
    shared_a = suite_rate([c.rate_a for c in gate.tasks if c.task_id in paired])
    shared_b = suite_rate([c.rate_b for c in gate.tasks if c.task_id in paired])
    diff = gate.suite
    return {
        "task_id": SUITE_ROW,
        "n_a": len(paired), "k_a": None, "rate_a": shared_a.mean, "low_a": shared_a.low, "high_a": shared_a.high,
        "n_b": len(paired), "k_b": None, "rate_b": shared_b.mean, "low_b": shared_b.low, "high_b": shared_b.high,
        "delta": diff.mean_delta, "se": diff.se, "delta_low": diff.low, "delta_high": diff.high,
        "p_value": diff.p, "q_value": math.nan, "regressed": gate.suite_level, "improved": gate.suite_improved,
        "note": f"paired over {diff.n_tasks} tasks; n = tasks; {dropped_note}; {diff.method}",
    }


def _warnings(result_a: RunResult, result_b: RunResult, refusals: list[Refusal], counts: list[TaskCounts],
              fdr: float) -> list[RunWarning]:
    warnings = comparison_warnings(result_a.run.model_dump(mode="json"), result_b.run.model_dump(mode="json"))
    # where a refusal says it, with the fix, its warning would only repeat it
    repeated = {"unfinished": "unfinished", "suite_differs": "suite_changed"}
    said = {repeated[r.check] for r in refusals if r.check in repeated}
    warnings = [w for w in warnings if w.kind not in said]
    power_note = _underpowered(counts, fdr)
    if power_note:
        warnings.append(power_note)
    return warnings


def _verdict(gate: GateVerdict, refusals: list[Refusal], counts: list[TaskCounts], fdr: float,
             suite_alpha: float) -> CompareVerdict:
    mde = per_task_mde(counts, fdr=fdr)
    if refusals:
        return CompareVerdict(status=CANNOT_JUDGE, regressed=None, headline=CANNOT_JUDGE_HEADLINE,
                              reasons=[str(r) for r in refusals], cannot_judge=refusals,
                              task_level=list(gate.task_level), suite_level=gate.suite_level, fdr=fdr,
                              suite_alpha=suite_alpha, mde=None)
    return CompareVerdict(
        status="regressed" if gate.regressed else "no regression", regressed=gate.regressed, headline=gate.headline,
        reasons=list(gate.reasons), cannot_judge=refusals, task_level=list(gate.task_level),
        suite_level=gate.suite_level, fdr=fdr, suite_alpha=suite_alpha,
        mde=None if mde is None else MinimumDetectable(
            drop=mde.drop, n=mde.n, base_rate=mde.base_rate, n_tasks=mde.n_tasks, power=mde.power,
            lone_task_flaggable=mde.lone_task_flaggable, text=mde.text))

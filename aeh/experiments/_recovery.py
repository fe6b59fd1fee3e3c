"""Recovery curves: success rate under injected tool faults, per fail rate and error kind.

    frame = aeh.recovery_curve("core", adapter="mock", rates=(0, 0.1, 0.3, 0.5), mode="burst")
    aeh.report.views.plot_recovery_curve(frame)

For every rate r > 0 it runs the suite once per error kind (a profile injecting only that kind
at per-call rate r) and once with all `kinds` together (r split evenly over them), through the
normal `aeh.run` path, so every run is stored, reproducible and inspectable like any other.
Rate 0 is run once and reported under every kind (no fault of any kind is the same condition).

Success rate here is the suite rate of each run: the mean of per-task rates (harness errors
excluded) with the task-clustered 95% interval `aeh.run` reports (`aeh.stats.suite_rate`: SE
across tasks, t-interval; Wilson over tasks when every task scored the same). Repeats of one
task share its difficulty, so a Wilson interval over pooled attempts would be too narrow.
`low`/`high` and `suite_low`/`suite_high` hold the same interval; `n` and `successes` are the
pooled counts, for reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from aeh.api import run_async, run_sync
from aeh.stats import SUITE_RATE_METHOD, suite_rate
from aeh.store import StoreLike, using_store
from aeh.tools.faults import FAULT_KINDS, FaultProfile

__all__ = ["COLUMNS", "format_recovery_table", "recovery_curve", "recovery_curve_async"]

COLUMNS = ["mode", "rate", "error_kind", "n", "successes", "success_rate", "low", "high",
           "suite_low", "suite_high", "tool_calls", "injected_faults", "observed_fault_rate",
           "harness_errors", "run_id", "burst_length"]


def _title(suite: str | Path, modes: Sequence[str], burst_length: int | None, adapter: str, model: str | None) -> str:
    parts = []
    for m in modes:
        parts.append(f"burst faults (windows of {burst_length} calls)" if m == "burst" and burst_length
                     else f"{m} faults")
    who = f"{adapter}" + (f"/{model}" if model else "")
    return f"Recovery curve — {suite} · {who} · {' vs '.join(parts)}"


def _profile(mode: str, rate: float, kinds: Sequence[str], burst_length: int,
             tools: list[str] | None, timeout_s: float | None) -> dict[str, Any]:
    label = kinds[0] if len(kinds) == 1 else "all"
    profile = FaultProfile(
        name=f"recovery {mode} {label} @ {rate:g}", mode=mode,
        rates={k: rate / len(kinds) for k in kinds},
        burst_length=burst_length, tools=tools, timeout_s=timeout_s,
    )
    return profile.model_dump(mode="json")


def _row(table: pd.DataFrame, run_id: str, calls: int, *, mode: str, rate: float, kind: str) -> dict[str, Any]:
    n = int(table["n"].sum()) if len(table) else 0
    k = int(table["successes"].sum()) if len(table) else 0
    # Tasks are the unit: the same interval as the suite rate of `aeh.run`, not pooled attempts.
    rates = [float(r) for r, m in zip(table["rate"], table["n"], strict=True) if m > 0] if len(table) else []
    nan = float("nan")
    summary = suite_rate(rates) if rates else None
    low, high = (summary.low, summary.high) if summary else (nan, nan)
    injected = int(table["injected_faults"].sum()) if "injected_faults" in table else 0
    return {
        "mode": mode, "rate": float(rate), "error_kind": kind, "n": n, "successes": k,
        "success_rate": summary.mean if summary else nan, "low": low, "high": high,
        "suite_low": low, "suite_high": high,
        "tool_calls": calls, "injected_faults": injected,
        "observed_fault_rate": (injected / calls) if calls else 0.0,
        "harness_errors": int(table["harness_errors"].sum()) if "harness_errors" in table else 0,
        "run_id": run_id,
    }


def _count_calls(run_id: str, db: StoreLike) -> int:
    with using_store(db) as store:
        return int(store.attempts_frame(run_id, columns=["n_tool_calls"])["n_tool_calls"].sum())


async def recovery_curve_async(
    suite: str | Path | Any,
    adapter: str | Any = "mock",
    rates: Sequence[float] = (0, 0.1, 0.3, 0.5),
    mode: str = "burst",
    attempts: int = 5,
    kinds: Sequence[str] = FAULT_KINDS,
    seed: int = 0,
    db: str | Path | None = None,
    concurrency: int = 4,
    model: str | None = None,
    *,
    burst_length: int = 5,
    tools: list[str] | None = None,
    timeout_s: float | None = None,
    per_kind: bool = True,
    **kw: Any,
) -> pd.DataFrame:
    """The async twin of `recovery_curve` (same arguments, same frame)."""
    if mode not in ("uniform", "burst"):
        raise ValueError(f"mode must be 'uniform' or 'burst', got {mode!r}")
    kinds = list(kinds)
    unknown = sorted(set(kinds) - set(FAULT_KINDS))
    if not kinds or unknown:
        raise ValueError(f"kinds must be a non-empty subset of {FAULT_KINDS}, got {kinds}")
    if any(not 0 <= r <= 1 for r in rates):
        raise ValueError(f"rates must be probabilities in [0, 1], got {list(rates)}")
    labels = ([(k, [k]) for k in kinds] if per_kind and len(kinds) > 1 else []) + [("all", kinds)]
    if per_kind and len(kinds) == 1:
        labels = [(kinds[0], kinds)]
    rows: list[dict[str, Any]] = []
    for rate in rates:
        conditions = [("none", kinds)] if rate == 0 else labels
        for label, chosen in conditions:
            profile = _profile(mode, float(rate), chosen, burst_length, tools, timeout_s)
            table = await run_async(suite, adapter, attempts=attempts, concurrency=concurrency, seed=seed,
                                    db=db, model=model, fault_profile=profile, **kw)
            calls = _count_calls(table.run_id, db)
            if rate == 0:  # no faults is one condition, shown under every kind
                rows += [_row(table.table, table.run_id, calls, mode=mode, rate=0.0, kind=lab) for lab, _ in labels]
            else:
                rows.append(_row(table.table, table.run_id, calls, mode=mode, rate=float(rate), kind=label))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    # A column, not only attrs: it survives pd.concat of several modes' curves, which charts read.
    frame["burst_length"] = burst_length if mode == "burst" else None
    adapter_name = adapter if isinstance(adapter, str) else getattr(adapter, "name", "adapter")
    model_name = model or (None if isinstance(adapter, str) else getattr(adapter, "model", None))
    suite_name = suite if isinstance(suite, str | Path) else getattr(suite, "name", "suite")
    frame.attrs.update({
        "title": _title(suite_name, [mode], burst_length, str(adapter_name), model_name),
        "mode": mode, "burst_length": burst_length if mode == "burst" else None,
        "attempts": attempts, "seed": seed, "suite": str(suite_name),
        "interval_method": f"suite rate per run: {SUITE_RATE_METHOD}",
    })
    return frame


def recovery_curve(
    suite: str | Path | Any,
    adapter: str | Any = "mock",
    rates: Sequence[float] = (0, 0.1, 0.3, 0.5),
    mode: str = "burst",
    attempts: int = 5,
    kinds: Sequence[str] = FAULT_KINDS,
    seed: int = 0,
    db: str | Path | None = None,
    concurrency: int = 4,
    model: str | None = None,
    **kw: Any,
) -> pd.DataFrame:
    """Suite success rate with its task-clustered 95% interval per fail rate and error kind.

    One row per (rate, kind), also for "all" kinds together.

    Columns: mode, rate, error_kind, n, successes, success_rate, low, high, suite_low,
    suite_high, tool_calls, injected_faults, observed_fault_rate, harness_errors, run_id.
    `frame.attrs["title"]` names the mode. Extra keywords (`burst_length`, `tools`,
    `timeout_s`, `per_kind`, and anything `aeh.run` takes, e.g. `tasks`) are passed on.
    """
    return run_sync(recovery_curve_async(suite, adapter, rates, mode, attempts, kinds, seed, db,
                                         concurrency, model, **kw))


def format_recovery_table(*frames: pd.DataFrame) -> str:
    """A Markdown table of one or more recovery frames (e.g. burst and uniform side by side)."""
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    modes = list(dict.fromkeys(frame["mode"]))
    kinds = list(dict.fromkeys(frame["error_kind"]))
    header = "| fail rate | error kind | " + " | ".join(f"{m}: success [95% CI]" for m in modes) + " |"
    lines = [header, "|---|---|" + "---|" * len(modes)]
    for rate in sorted(set(frame["rate"])):
        for kind in kinds:
            cells = []
            for m in modes:
                hit = frame[(frame["mode"] == m) & (frame["rate"] == rate) & (frame["error_kind"] == kind)]
                if hit.empty:
                    cells.append("—")
                    continue
                r = hit.iloc[0]
                cells.append(f"{r.success_rate:.2f} [{r.low:.2f}, {r.high:.2f}] ({r.successes}/{r.n})")
            lines.append(f"| {rate:g} | {kind} | " + " | ".join(cells) + " |")
    titles = [f.attrs.get("title") for f in frames if f.attrs.get("title")]
    return ("\n".join(f"**{t}**" for t in titles) + "\n\n" if titles else "") + "\n".join(lines)

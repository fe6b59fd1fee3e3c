"""`drift(suite)`: is the agent slowly getting worse across its recent runs?"""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl

from aeh.analysis._read import _store, run_table
from aeh.errors import ConfigError
from aeh.stats import drift_trend

__all__ = ["drift"]


def _window(store: Any, suite: str | None, runs: list[str] | None, window: int) -> tuple[list[Any], list[str]]:
    """The runs to fit, oldest first, and notes about runs left out."""
    if runs:
        infos = [store.run_info(r) for r in runs]
        return sorted(infos, key=lambda i: i.created_at), []
    if suite is None:
        raise ConfigError("give a suite name or an explicit list of run ids")
    same = [i for i in store.runs() if i.suite == suite and i.status == "finished"]
    if not same:
        raise ConfigError(f"no finished run of suite {suite!r} in {store.path} — list runs with `aeh runs`")
    newest_hash = same[0].suite_hash
    kept = [i for i in same if i.suite_hash == newest_hash][:window]
    notes = []
    if len(kept) < min(window, len(same)):
        notes.append(f"runs of an older definition of {suite!r} (suite hash ≠ {newest_hash}) were left out")
    return list(reversed(kept)), notes


def drift(suite: str | None = None, *, runs: list[str] | None = None, window: int = 5,
          threshold: float = 0.08, db: Any = None) -> pd.DataFrame:
    """One row per run in the window (oldest first) with its suite rate; the trend in `attrs`.

    `attrs["drifting"]` is True when the slope is significantly negative (its 95% interval lies
    below 0) *and* the modelled cumulative drop over the window exceeds `threshold` — a decline
    that can hide when each run is only compared with the one before it.
    """
    store = _store(db)
    infos, notes = _window(store, suite, runs, window)
    frames, rows = [], []
    for index, info in enumerate(infos):
        table = run_table(info.run_id, store)
        attempts = store.attempts_frame(info.run_id, columns=["task_id", "success", "failure_bucket"])
        valid = attempts.filter(pl.col("failure_bucket").fill_null("") != "harness_error")
        frames.append(valid.with_columns(pl.lit(index).alias("run_index")))
        rows.append({"run_index": index, "run_id": info.run_id, "created_at": info.created_at,
                     "model": info.model, "suite_rate": table.attrs["suite_rate"],
                     "low": table.attrs["suite_low"], "high": table.attrs["suite_high"],
                     "n_tasks": table.attrs["n_tasks"], "attempts": table.attrs["attempts_total"]})
    data = pl.concat(frames) if frames else pl.DataFrame()
    trend = drift_trend(data["task_id"].to_list(), data["run_index"].to_list(), data["success"].to_list()) \
        if frames else None
    frame = pd.DataFrame(rows)
    if trend is not None and trend.runs < 3:
        notes.append("fewer than 3 runs: a trend needs at least 3 (use compare for two)")
    frame.attrs.update({
        "suite": suite or (infos[0].suite if infos else None), "window": window, "threshold": threshold,
        "slope": trend.slope if trend else float("nan"), "slope_se": trend.se if trend else float("nan"),
        "slope_low": trend.low if trend else float("nan"), "slope_high": trend.high if trend else float("nan"),
        "p_value": trend.p if trend else float("nan"),
        "cumulative": trend.cumulative if trend else float("nan"),
        "drifting": bool(trend and trend.high < 0 and -trend.cumulative > threshold),
        "method": trend.method if trend else "no runs", "notes": notes,
    })
    return frame

"""`drift(suite)`: is the agent slowly getting worse across its recent runs?"""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl

from aeh.analysis._dimensions import OVERALL, scores
from aeh.analysis._read import run_table
from aeh.analysis._results import DriftResult
from aeh.analysis._validity import CANNOT_JUDGE, Refusal, check_range, measurement, measurement_refusals
from aeh.errors import ConfigError
from aeh.grading.judged_scorers import JUDGED_DIMENSIONS
from aeh.models import RunInfo, RunWarning
from aeh.stats import MIN_DRIFT_RUNS, drift_trend
from aeh.store import Store, StoreLike, using_store

__all__ = ["CANNOT_JUDGE", "DEFAULT_DIMENSION_THRESHOLD", "DRIFT_STATUSES", "drift"]

DRIFTING, NOT_DRIFTING, NOT_ENOUGH_RUNS = "drifting", "no significant drift", "not enough runs to judge"
DRIFT_STATUSES = (DRIFTING, NOT_DRIFTING, NOT_ENOUGH_RUNS, CANNOT_JUDGE)


def _window(store: Store, suite: str | None, runs: list[str] | None, window: int,
            allow_unfinished: bool) -> tuple[list[RunInfo], list[str], list[Refusal]]:
    """The runs to fit, oldest first, notes about runs left out, and why the runs named
    explicitly cannot be judged (a window chosen by suite skips invalid runs instead)."""
    if runs:
        infos = sorted((store.run_info(r) for r in runs), key=lambda i: i.created_at)
        refusals = [r for i in infos for r in
                    measurement_refusals(measurement(store, i.run_id), allow_unfinished=allow_unfinished)]
        return infos, [], refusals
    if suite is None:
        raise ConfigError("give a suite name or an explicit list of run ids")
    same = [i for i in store.runs() if i.suite == suite and i.status == "finished"]
    if not same:
        raise ConfigError(f"no finished run of suite {suite!r} in {store.path} — list runs with `aeh runs`")
    newest_hash = same[0].suite_hash
    kept: list[Any] = []
    invalid: list[str] = []
    for info in (i for i in same if i.suite_hash == newest_hash):
        if len(kept) == window:
            break
        if measurement_refusals(measurement(store, info.run_id)):
            invalid.append(info.run_id)
        else:
            kept.append(info)
    notes = []
    if len(kept) + len(invalid) < min(window, len(same)):
        notes.append(f"runs of an older definition of {suite!r} (suite hash ≠ {newest_hash}) were left out")
    if invalid:
        notes.append(f"left out {len(invalid)} run(s) with harness errors over the limit (not valid "
                     f"measurements): {', '.join(invalid)}")
    return list(reversed(kept)), notes, []


def _mixed(infos: list[Any]) -> list[str]:
    """What differs between the runs that a trend over them must hold fixed."""
    out = []
    for field, label in (("suite", "suites"), ("suite_hash", "suite hashes"), ("adapter", "adapters"),
                         ("model", "models")):
        values = list(dict.fromkeys(str(getattr(i, field)) for i in infos))
        if len(values) > 1:
            out.append(f"{label} {', '.join(values)}")
    return out


DEFAULT_DIMENSION_THRESHOLD = 0.05
DIMENSION_METHOD = ("per dimension: the same run-level OLS on each run's mean score over the tasks scored in "
                    "every run; one-sided p (declining), Benjamini–Hochberg across the dimensions")


def _dimension_drift(store: Store, infos: list[RunInfo], threshold: float, alpha: float = 0.05) -> pd.DataFrame:
    """One row per trajectory dimension (and `overall`): its trend over the runs and a verdict."""
    # heavy: loaded on first use
    from statsmodels.stats.multitest import multipletests

    long = []
    for index, info in enumerate(infos):
        frame = scores(info.run_id, store).table
        if not len(frame):
            continue
        frame = frame[["task_id", "attempt", "dimension", "score"]].copy()
        per_attempt = frame.pivot_table(index=["task_id", "attempt"], columns="dimension", values="score")
        per_attempt.columns.name = None
        exact = [c for c in per_attempt.columns if c not in JUDGED_DIMENSIONS]
        if exact:  # the same `overall` the gate uses: the mean of the reproducible dimensions
            per_attempt[OVERALL] = per_attempt[exact].mean(axis=1)
        melted = per_attempt.reset_index().melt(id_vars=["task_id", "attempt"], var_name="dimension",
                                                value_name="score")
        long.append(melted.dropna().assign(run_index=index))
    columns = ["dimension", "runs", "slope", "low", "high", "cumulative", "p_one_sided", "q", "status"]
    if not long:
        return pd.DataFrame(columns=columns)
    data = pd.concat(long)
    rows = []
    for dimension, part in data.groupby("dimension", sort=True):
        trend = drift_trend(part["task_id"].tolist(), part["run_index"].tolist(), part["score"].tolist())
        if not trend.fitted:
            rows.append({"dimension": dimension, "runs": trend.runs, "slope": float("nan"), "low": float("nan"),
                         "high": float("nan"), "cumulative": float("nan"), "p_one_sided": float("nan")})
            continue
        one_sided = trend.p / 2 if trend.slope < 0 else 1 - trend.p / 2
        rows.append({"dimension": dimension, "runs": trend.runs, "slope": trend.slope, "low": trend.low,
                     "high": trend.high, "cumulative": trend.cumulative, "p_one_sided": one_sided})
    out = pd.DataFrame(rows)
    fitted = out["p_one_sided"].notna()
    out["q"] = float("nan")
    if fitted.any():
        out.loc[fitted, "q"] = multipletests(out.loc[fitted, "p_one_sided"], alpha=alpha, method="fdr_bh")[1]
    out["status"] = [
        NOT_ENOUGH_RUNS if pd.isna(q) else DRIFTING if q < alpha and -cum > threshold else NOT_DRIFTING
        for q, cum in zip(out["q"], out["cumulative"], strict=True)]
    return out[columns]


def drift(suite: str | None = None, *, runs: list[str] | None = None, window: int = 5,
          threshold: float = 0.08, allow_mixed: bool = False, db: StoreLike = None,
          dimension_threshold: float = DEFAULT_DIMENSION_THRESHOLD, dimensions: bool = True,
          allow_unfinished: bool = False) -> DriftResult:
    """One row per run in the window (oldest first) with its suite rate (`.table`); the trend
    and its verdict as fields.

    `.status` is one of "drifting" (the slope's 95% interval lies below 0 *and* the
    modelled cumulative drop over the window exceeds `threshold`), "no significant drift", or
    "not enough runs to judge" (fewer than 4 runs: no verdict, never "no drift"). Runs that mix
    suites, suite hashes, adapters or models raise `ConfigError` unless `allow_mixed=True`, which
    fits anyway and puts a warning first in `.notes`.

    With `dimensions` (default), `.dimensions` holds the same trend per trajectory
    dimension (scores stored with the runs, scored now where missing): "drifting" when its
    Benjamini–Hochberg q over the dimensions is < 0.05 and the modelled drop exceeds
    `dimension_threshold`; `.drifting_dimensions` names them.

    Every run fitted must be a valid measurement: a window chosen by `suite` leaves out runs
    with harness errors over the limit (noted); among explicit `runs`, such a run, or one not
    finished (unless `allow_unfinished`), makes the status "cannot judge". Both that and "not
    enough runs to judge" list their reasons and fixes in `.cannot_judge`.
    """
    if not isinstance(window, int) or window < MIN_DRIFT_RUNS:
        raise ConfigError(f"--window must be a whole number of runs ≥ {MIN_DRIFT_RUNS} (a trend needs at least "
                          f"{MIN_DRIFT_RUNS}), got {window} — e.g. --window 5")
    check_range("--threshold", threshold, 0, 1, example="--threshold 0.08")
    check_range("--dimension-threshold", dimension_threshold, 0, 1, example="--dimension-threshold 0.05")
    with using_store(db) as store:
        infos, notes, refusals = _window(store, suite, runs, window, allow_unfinished)
        mixed = _mixed(infos)
        if mixed and not allow_mixed:
            raise ConfigError(f"the runs mix {'; '.join(mixed)}: a trend across them measures the change "
                              "of setup, not drift — choose runs of one setup, or pass --allow-mixed")
        if mixed:
            notes.insert(0, RunWarning(f"WARNING: the runs mix {'; '.join(mixed)}; the trend mixes a change of "
                                       "setup with drift", "mixed_setup"))
        frames, rows = [], []
        for index, info in enumerate(infos):
            table = run_table(info.run_id, store)
            attempts = store.attempts_frame(info.run_id, columns=["task_id", "success", "failure_bucket"])
            valid = attempts.filter(pl.col("failure_bucket").fill_null("") != "harness_error")
            frames.append(valid.with_columns(pl.lit(index).alias("run_index")))
            rows.append({"run_index": index, "run_id": info.run_id, "created_at": info.created_at,
                         "model": info.model, "suite_rate": table.suite_rate,
                         "low": table.suite_low, "high": table.suite_high,
                         "n_tasks": table.n_tasks, "attempts": table.attempts_total})
        data = pl.concat(frames) if frames else pl.DataFrame()
        trend = drift_trend(data["task_id"].to_list(), data["run_index"].to_list(), data["success"].to_list()) \
            if frames else None
        frame = pd.DataFrame(rows)
        nan = float("nan")
        if refusals:
            status = CANNOT_JUDGE
        elif trend is None or not trend.fitted:
            status = NOT_ENOUGH_RUNS
            notes.append(f"{len(infos)} run(s): a trend needs at least {MIN_DRIFT_RUNS} "
                         "(use compare for two) — no verdict either way")
            refusals.append(Refusal("too_few_runs", f"{len(infos)} run(s) in the window: a trend needs at least "
                                    f"{MIN_DRIFT_RUNS} with a task in common", "run the suite again, or use "
                                    "`aeh compare` for two runs"))
        elif trend.high < 0 and -trend.cumulative > threshold:
            status = DRIFTING
        else:
            status = NOT_DRIFTING
        if trend is not None and trend.fitted and frame["n_tasks"].max() > trend.tasks:
            notes.append(f"the trend averages the {trend.tasks} tasks present in every run")
        dims = _dimension_drift(store, infos, dimension_threshold) if dimensions else pd.DataFrame()
        return DriftResult(
            table=frame, suite=suite or (infos[0].suite if infos else None), window=window, threshold=threshold,
            slope=trend.slope if trend else nan, slope_se=trend.se if trend else nan,
            slope_low=trend.low if trend else nan, slope_high=trend.high if trend else nan,
            p_value=trend.p if trend else nan,
            cumulative=trend.cumulative if trend else nan,
            status=status, drifting=status == DRIFTING, mixed=mixed,
            cannot_judge=refusals,
            method=trend.method if trend else "no runs", notes=notes,
            dimensions=dims, dimension_threshold=dimension_threshold, dimension_method=DIMENSION_METHOD,
            drifting_dimensions=dims.loc[dims["status"] == DRIFTING, "dimension"].tolist()
            if len(dims) and not refusals else [],
        )

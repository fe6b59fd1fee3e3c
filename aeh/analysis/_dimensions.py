"""Trajectory scores of stored runs: scoring, per-dimension summaries and committed baselines
(the gate that compares a run against one is `_gate`)."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from aeh._version import __version__
from aeh.analysis._baseline import (
    BASELINE_FORMAT,
)
from aeh.analysis._results import ScoresResult
from aeh.analysis._validity import (
    CannotJudgeError,
    measurement,
    measurement_refusals,
)
from aeh.grading import DEFAULT_PROFILE, ScoringProfile, scoring_profile
from aeh.grading.judged_scorers import JUDGED_DIMENSIONS
from aeh.grading.scorers import (
    DEFAULT_LOOP_N,
    ScoreInput,
    learned_optimal_steps,
    score_attempt,
)
from aeh.models import Attempt, GoldenTrace, Span, Task
from aeh.stats import (
    summarize_scores,
)
from aeh.store import Store, StoreLike, redactor_for_run, using_store

if TYPE_CHECKING:
    from aeh.suite import EvalSuite

__all__ = [
    "BASELINE_FORMAT",
    "baseline_from_frame",
    "build_baseline",
    "save_baseline",
    "score_run",
    "scores",
    "summarize",
    "task_weighted",
    "weighted_overall",
    "within_task_sd",
]

OVERALL = "overall"


def _load_suite_for(store: Store, run_id: str,
                    suite: str | Path | EvalSuite | None) -> tuple[dict[str, Task], dict[str, GoldenTrace]]:
    """The tasks and goldens of the suite the run measured: `suite`, else the stored location, its
    hash checked (SuiteNotFoundError when gone or changed). Empty only for a run that recorded no
    suite (an import), never as a fallback for a suite that cannot be found."""
    # heavy: loaded on first use (reading stored scores, what a report does, needs no suite)
    from aeh.suite import reload_run_suite

    loaded = reload_run_suite(store.run_info(run_id), suite)
    if loaded is None:
        return {}, {}
    return {t.id: t for t in loaded.tasks()}, dict(loaded.golden_traces())


def _input(a: Attempt, task: Task | None, goldens: dict[str, GoldenTrace], optimal: int | None,
           loop_n: int, spans: list[Span] | None = None) -> ScoreInput:
    golden = goldens.get(task.golden) if task is not None and task.golden else None
    return ScoreInput.of_attempt(a, task, golden, optimal_steps=optimal, loop_n=loop_n, spans=spans or [])


def run_scoring(store: Store, run_id: str, scoring: str | None = None) -> ScoringProfile:
    """The profile `scoring` names, else the one the run was scored with (`config.scoring`), else aeh's."""
    return scoring_profile(scoring or store.run_info(run_id).config.scoring or DEFAULT_PROFILE)


def _records(store: Store, run_id: str) -> list[Attempt]:
    keys = store.attempts_frame(run_id, ["task_id", "attempt"]).iter_rows()
    return [store.attempt_record(run_id, t, a) for t, a in keys]


def score_run(run_id: str, db: StoreLike = None, *, suite: str | Path | EvalSuite | None = None,
              loop_n: int = DEFAULT_LOOP_N,
              optimal_steps: dict[str, int] | None = None, write: bool = True,
              scoring: str | None = None) -> pd.DataFrame:
    """Score every attempt of a stored run on every registered dimension (no re-run).

    `suite` defaults to the one the run recorded; `optimal_steps` (task → count, e.g. learned by
    a baseline) is used for the tasks that declare no `optimal_steps`. `scoring` names the scoring
    profile (default: the one the run recorded, else aeh's own; `aeh.grading.scoring_profiles`).
    With `write`, the scores are stored (replacing earlier ones) and the profile recorded on the
    run. Returns one row per attempt × dimension.
    """
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        profile = run_scoring(store, full, scoring)
        tasks, goldens = _load_suite_for(store, full, suite)
        rows: list[dict[str, Any]] = []
        for a in _records(store, full):
            if a.is_harness_error:
                continue  # a broken harness says nothing about the trajectory
            opt = (optimal_steps or {}).get(a.task_id)
            spans = store.attempt_spans(full, a.task_id, a.attempt) if profile.reads_spans else None
            inp = _input(a, tasks.get(a.task_id), goldens, opt, loop_n, spans)
            for s in score_attempt(inp, replacing=profile.scorers):
                rows.append({"task_id": a.task_id, "attempt": a.attempt, "dimension": s.dimension,
                             "score": s.score, "evidence": s.evidence.model_dump(), "success": a.success,
                             "steps": len(a.tool_calls)})
        if write:
            store.write_dimension_scores(full, [
                (r["task_id"], r["attempt"], r["dimension"], r["score"], json.dumps(r["evidence"])) for r in rows])
            config = store.run_info(full).config
            if (config.scoring or DEFAULT_PROFILE) != profile.name:
                config.scoring = profile.name
                store.update_run(full, config=config)
    frame = pd.DataFrame(rows, columns=["task_id", "attempt", "dimension", "score", "evidence", "success", "steps"])
    frame.attrs["run_id"] = full
    frame.attrs["scoring"] = profile.name
    return frame


def scores(run_id: str, db: StoreLike = None, *, rescore: bool = False) -> ScoresResult:
    """One row per attempt × dimension (score, evidence) in `.table`; scored now when nothing is stored.

    `.tasks` holds per task × dimension mean/sd/n and `.suite` per dimension.
    """
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        stored = store.dimension_scores_frame(full)
        if rescore or stored.height == 0:
            frame = score_run(full, store)[["task_id", "attempt", "dimension", "score", "evidence"]]
        else:
            frame = stored.to_pandas()
            frame["evidence"] = frame["evidence"].map(json.loads)
        weights = store.run_info(full).config.task_weights
    tasks, suite = summarize(frame)
    return ScoresResult(table=frame, run_id=full, tasks=tasks, suite=suite, task_weights=dict(weights))


def weighted_overall(tasks: pd.DataFrame, weights: dict[str, float]) -> float | None:
    """Σ weight × task overall / Σ weight over the tasks scored (a task without a weight counts 1),
    as a suite with task weights defines its overall score; None when no task has an overall."""
    rows = tasks[tasks["dimension"] == OVERALL]
    pairs = [(float(weights.get(t, 1.0)), float(m)) for t, m in rows[["task_id", "mean"]].itertuples(index=False)]
    total = sum(w for w, _ in pairs)
    return sum(w * m for w, m in pairs) / total if total else None


def task_weighted(tasks: pd.DataFrame, weights: dict[str, float]) -> dict[str, float]:
    """Per dimension (and `overall`), Σ weight × task mean / Σ weight over the tasks scored on it
    (a task without a weight counts 1) — the suite figures agent-eval-harness prints, computed
    as it computes them: each task's mean rounded to 4 decimals, then the weighted mean to 4."""
    out: dict[str, float] = {}
    for dim, rows in tasks.groupby("dimension", sort=True):
        pairs = [(float(weights.get(str(t), 1.0)), round(float(m), 4))
                 for t, m in rows[["task_id", "mean"]].itertuples(index=False) if not math.isnan(float(m))]
        total = sum(w for w, _ in pairs)
        if total:
            out[str(dim)] = round(sum(w * m for w, m in pairs) / total, 4)
    return out


def within_task_sd(tasks: pd.DataFrame) -> dict[str, float]:
    """Per dimension, the mean over tasks of each task's sd across its attempts: the spread
    agent-eval-harness prints beside a suite figure (run-to-run noise, not the spread between tasks)."""
    out: dict[str, float] = {}
    for dim, rows in tasks.groupby("dimension", sort=True):
        sds = [0.0 if math.isnan(float(v)) else float(v) for v in rows["sd"]]
        out[str(dim)] = round(statistics.fmean(sds), 4) if sds else 0.0
    return out


def _with_overall(frame: pd.DataFrame) -> dict[tuple[str, int], dict[str, float]]:
    by_attempt: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for t, a, d, s in frame[["task_id", "attempt", "dimension", "score"]].itertuples(index=False):
        by_attempt[(t, int(a))][d] = float(s)
    for dims in by_attempt.values():
        # judged scores depend on a model and on whether anyone paid for them: they stand apart,
        # so `overall` stays comparable between judged and unjudged runs of the same agent
        exact = [v for d, v in dims.items() if d not in JUDGED_DIMENSIONS]
        if exact:
            dims[OVERALL] = statistics.fmean(exact)
    return by_attempt


def summarize(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per task × dimension, per dimension) mean, sd and n; `overall` is the attempt's mean over
    the exactly reproducible dimensions (the judged ones are reported, not averaged in)."""
    by_attempt = _with_overall(frame)
    per_task: dict[tuple[str, str], list[float]] = defaultdict(list)
    per_dim: dict[str, list[float]] = defaultdict(list)
    for (t, _), dims in by_attempt.items():
        for d, s in dims.items():
            per_task[(t, d)].append(s)
            per_dim[d].append(s)
    task_rows = [{"task_id": t, "dimension": d, **summarize_scores(v)._asdict()} for (t, d), v in per_task.items()]
    dim_rows = [{"dimension": d, **summarize_scores(v)._asdict()} for d, v in per_dim.items()]
    tasks = pd.DataFrame(task_rows, columns=["task_id", "dimension", "mean", "sd", "n"])
    if len(tasks):  # worst first
        order = tasks[tasks["dimension"] == OVERALL].sort_values("mean")["task_id"].tolist()
        tasks["_o"] = tasks["task_id"].map({t: i for i, t in enumerate(order)})
        tasks = tasks.sort_values(["_o", "dimension"]).drop(columns="_o").reset_index(drop=True)
    suite = pd.DataFrame(dim_rows, columns=["dimension", "mean", "sd", "n"]).sort_values("dimension")
    return tasks, suite.reset_index(drop=True)


# -- baselines -----------------------------------------------------------------------------------


def _summary_dict(values: list[float], keep: bool = False) -> dict[str, Any]:
    s = summarize_scores(values)
    # a task's own scores go along: its band check is a rank test on them (the suite's is not)
    return {"mean": s.mean, "sd": s.sd, "n": s.n, **({"scores": [round(v, 6) for v in values]} if keep else {})}


def _summaries(frame: pd.DataFrame) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    by_attempt = _with_overall(frame)
    per_task: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_dim: dict[str, list[float]] = defaultdict(list)
    for (t, _), dims in sorted(by_attempt.items()):
        for d, s in dims.items():
            per_task[t][d].append(s)
            per_dim[d].append(s)
    return ({t: {d: _summary_dict(v, keep=True) for d, v in sorted(dims.items())}
             for t, dims in sorted(per_task.items())},
            {d: _summary_dict(v) for d, v in sorted(per_dim.items())})


def _success_counts(store: Store, run_id: str) -> dict[str, dict[str, int]]:
    frame = store.attempts_frame(run_id, ["task_id", "success", "failure_bucket"]).to_pandas()
    frame = frame[frame["failure_bucket"] != "harness_error"]
    out: dict[str, dict[str, int]] = {}
    for task_id, group in frame.groupby("task_id"):
        out[str(task_id)] = {"successes": int(group["success"].sum()), "attempts": int(len(group))}
    return out


def baseline_from_frame(frame: pd.DataFrame, counts: dict[str, dict[str, int]], **fields: Any) -> dict[str, Any]:
    """A baseline dict from scored attempts and success counts (what `build_baseline` writes)."""
    tasks, dims = _summaries(frame)
    return {
        "format": BASELINE_FORMAT, "aeh_version": __version__, "loop_n": DEFAULT_LOOP_N,
        "learned_optimal_steps": {}, "scoring": DEFAULT_PROFILE, **fields, "dimensions": dims,
        "tasks": {t: {"successes": counts.get(t, {}).get("successes", 0),
                      "attempts": counts.get(t, {}).get("attempts", 0), "dimensions": d}
                  for t, d in tasks.items()},
    }


def build_baseline(run_id: str, db: StoreLike = None, *, suite: str | Path | EvalSuite | None = None,
                   loop_n: int = DEFAULT_LOOP_N,
                   last_n: int = 20, allow_unfinished: bool = False, scoring: str | None = None) -> dict[str, Any]:
    """Everything the gate needs from a run, with no runs.db: per task × dimension summaries,
    success counts, suite hash, aeh version, model, the scoring profile (`scoring`: default the
    one the run was scored with) and the learned optimal step counts — the median steps of the
    last `last_n` passing attempts of each task that declares no `optimal_steps` (a declared
    count is used as declared; `declared_optimal_steps` lists those tasks). A run that is not a
    valid measurement (harness errors over the limit; unfinished unless `allow_unfinished`)
    raises CannotJudgeError (exit 4)."""
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        info = store.run_info(full)
        refusals = measurement_refusals(measurement(store, full), allow_unfinished=allow_unfinished)
        if refusals:  # a baseline is the yardstick of every later gate: it must be a measurement
            raise CannotJudgeError("cannot save a baseline from this run:\n" + "\n".join(f"  {r}" for r in refusals))
        profile = run_scoring(store, full, scoring)
        tasks, _ = _load_suite_for(store, full, suite)
        declared = {t: int(task.optimal_steps) for t, task in sorted(tasks.items()) if task.optimal_steps}
        records = [a for a in _records(store, full) if not a.is_harness_error]
        passing: dict[str, list[int]] = defaultdict(list)
        for a in records:
            if a.success and a.task_id not in declared:
                passing[a.task_id].append(len(a.tool_calls))
        learned = {t: n for t, v in sorted(passing.items()) if (n := learned_optimal_steps(v, last_n)) is not None}
        frame = score_run(full, store, suite=suite, loop_n=loop_n, optimal_steps=learned, write=False,
                          scoring=profile.name)
        counts = _success_counts(store, full)
    return baseline_from_frame(
        frame, counts, run_id=full, suite=info.suite, suite_hash=info.suite_hash, model=info.model,
        adapter=info.adapter, attempts_per_task=info.attempts, loop_n=loop_n, learned_optimal_steps=learned,
        declared_optimal_steps=declared, scoring=profile.name)


def save_baseline(run_id: str, out: str | Path, db: StoreLike = None, **kwargs: Any) -> dict[str, Any]:
    """Write `build_baseline(run_id)` as JSON to `out` (meant to be committed)."""
    baseline: dict[str, Any] = build_baseline(run_id, db, **kwargs)
    with using_store(db) as store:  # a committed file: redacted like every other sink
        baseline = redactor_for_run(store.run_info(baseline["run_id"]).config).redact(baseline)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n")
    return baseline

"""Trajectory scores of stored runs: scoring, per-dimension summaries, committed baselines and the
gate that compares a run against one, each dimension against its own measured noise band."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from aeh._files import InputFileError, InputJsonError, load_json_file
from aeh._version import __version__
from aeh.errors import ConfigError, Problem
from aeh.grading.judged_scorers import JUDGED_DIMENSIONS
from aeh.grading.scorers import (
    DEFAULT_LOOP_N,
    ScoreInput,
    learned_optimal_steps,
    score_attempt,
)
from aeh.models import Attempt, GoldenTrace, Task
from aeh.stats import ScoreSummary, TaskCounts, noise_band, regression_gate, summarize_scores, two_sample_test
from aeh.store import Store, redactor_for_run, using_store
from aeh.suite import load_suite

__all__ = [
    "BASELINE_FORMAT",
    "DEFAULT_OVERALL_THRESHOLD",
    "DEFAULT_THRESHOLD",
    "BaselineMismatchError",
    "load_baseline",
    "GateFinding",
    "GateResult",
    "baseline_from_frame",
    "build_baseline",
    "gate_frame",
    "gate",
    "save_baseline",
    "score_run",
    "scores",
    "summarize",
]

BASELINE_FORMAT = "aeh-baseline/1"
DEFAULT_THRESHOLD = 0.05
DEFAULT_OVERALL_THRESHOLD = 0.03
OVERALL = "overall"


class BaselineMismatchError(ConfigError):
    """The baseline was recorded on a different suite: its scores are not comparable."""

    exit_code = 5  # EXIT_BASELINE_MISMATCH of `aeh gate`


def _load_suite_for(store: Store, run_id: str, suite: Any) -> tuple[dict[str, Task], dict[str, GoldenTrace]]:
    if suite is None:
        spec = store.run_info(run_id).config.get("suite_spec")
        if spec is None:
            return {}, {}
        try:
            suite = load_suite(spec)
        except Exception:  # the suite moved or is gone: score from the stored attempt alone
            return {}, {}
    elif isinstance(suite, str | Path):
        suite = load_suite(suite)
    return {t.id: t for t in suite.tasks()}, dict(suite.golden_traces())


def _input(a: Attempt, task: Task | None, goldens: dict[str, GoldenTrace], optimal: int | None,
           loop_n: int) -> ScoreInput:
    golden = goldens.get(task.golden) if task is not None and task.golden else None
    return ScoreInput.of_attempt(a, task, golden, optimal_steps=optimal, loop_n=loop_n)


def _records(store: Store, run_id: str) -> list[Attempt]:
    keys = store.attempts_frame(run_id, ["task_id", "attempt"]).iter_rows()
    return [store.attempt_record(run_id, t, a) for t, a in keys]


def score_run(run_id: str, db: Any = None, *, suite: Any = None, loop_n: int = DEFAULT_LOOP_N,
              optimal_steps: dict[str, int] | None = None, write: bool = True) -> pd.DataFrame:
    """Score every attempt of a stored run on every registered dimension (no re-run).

    `suite` defaults to the one the run recorded; `optimal_steps` (task → count, e.g. learned by
    a baseline) overrides the tasks' own. With `write`, the scores are stored (replacing earlier
    ones). Returns one row per attempt × dimension.
    """
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        tasks, goldens = _load_suite_for(store, full, suite)
        rows: list[dict[str, Any]] = []
        for a in _records(store, full):
            if a.is_harness_error:
                continue  # a broken harness says nothing about the trajectory
            opt = (optimal_steps or {}).get(a.task_id)
            for s in score_attempt(_input(a, tasks.get(a.task_id), goldens, opt, loop_n)):
                rows.append({"task_id": a.task_id, "attempt": a.attempt, "dimension": s.dimension,
                             "score": s.score, "evidence": s.evidence.model_dump(), "success": a.success,
                             "steps": len(a.tool_calls)})
        if write:
            store.write_dimension_scores(full, [
                (r["task_id"], r["attempt"], r["dimension"], r["score"], json.dumps(r["evidence"])) for r in rows])
    frame = pd.DataFrame(rows, columns=["task_id", "attempt", "dimension", "score", "evidence", "success", "steps"])
    frame.attrs["run_id"] = full
    return frame


def scores(run_id: str, db: Any = None, *, rescore: bool = False) -> pd.DataFrame:
    """One row per attempt × dimension (score, evidence); scored now when nothing is stored.

    `attrs["tasks"]` holds per task × dimension mean/sd/n and `attrs["suite"]` per dimension.
    """
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        stored = store.dimension_scores_frame(full)
        if rescore or stored.height == 0:
            frame = score_run(full, store)[["task_id", "attempt", "dimension", "score", "evidence"]]
        else:
            frame = stored.to_pandas()
            frame["evidence"] = frame["evidence"].map(json.loads)
    frame.attrs["run_id"] = full
    tasks, suite = summarize(frame)
    frame.attrs["tasks"] = tasks
    frame.attrs["suite"] = suite
    return frame


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


def _summary_dict(values: list[float]) -> dict[str, float | int]:
    s = summarize_scores(values)
    return {"mean": s.mean, "sd": s.sd, "n": s.n}


def _summaries(frame: pd.DataFrame) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    by_attempt = _with_overall(frame)
    per_task: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_dim: dict[str, list[float]] = defaultdict(list)
    for (t, _), dims in sorted(by_attempt.items()):
        for d, s in dims.items():
            per_task[t][d].append(s)
            per_dim[d].append(s)
    return ({t: {d: _summary_dict(v) for d, v in sorted(dims.items())} for t, dims in sorted(per_task.items())},
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
        "learned_optimal_steps": {}, **fields, "dimensions": dims,
        "tasks": {t: {"successes": counts.get(t, {}).get("successes", 0),
                      "attempts": counts.get(t, {}).get("attempts", 0), "dimensions": d}
                  for t, d in tasks.items()},
    }


def build_baseline(run_id: str, db: Any = None, *, suite: Any = None, loop_n: int = DEFAULT_LOOP_N,
                   last_n: int = 20) -> dict[str, Any]:
    """Everything the gate needs from a run, with no runs.db: per task × dimension summaries,
    success counts, suite hash, aeh version, model and the learned optimal step counts
    (median steps of the last `last_n` passing attempts per task)."""
    with using_store(db) as store:
        full = store.resolve_run_id(run_id)
        info = store.run_info(full)
        records = [a for a in _records(store, full) if not a.is_harness_error]
        passing: dict[str, list[int]] = defaultdict(list)
        for a in records:
            if a.success:
                passing[a.task_id].append(len(a.tool_calls))
        learned = {t: n for t, v in sorted(passing.items()) if (n := learned_optimal_steps(v, last_n)) is not None}
        frame = score_run(full, store, suite=suite, loop_n=loop_n, optimal_steps=learned, write=False)
        counts = _success_counts(store, full)
    return baseline_from_frame(
        frame, counts, run_id=full, suite=info.suite, suite_hash=info.suite_hash, model=info.model,
        adapter=info.adapter, attempts_per_task=info.attempts, loop_n=loop_n, learned_optimal_steps=learned)


def save_baseline(run_id: str, out: str | Path, db: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Write `build_baseline(run_id)` as JSON to `out` (meant to be committed)."""
    baseline = build_baseline(run_id, db, **kwargs)
    with using_store(db) as store:  # a committed file: redacted like every other sink
        baseline = redactor_for_run(store.run_info(baseline["run_id"]).config).redact(baseline)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n")
    return baseline


def load_baseline(path: str | Path) -> dict[str, Any]:
    try:
        data, _ = load_json_file(path)
    except InputFileError as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc} — pass the file `aeh baseline save` wrote") from None
    except OSError as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"baseline {path} is not JSON: {exc}") from None
    except InputJsonError as exc:
        raise ConfigError(f"baseline {Problem.from_json_error(path, exc)}") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise ConfigError(f"{path} is not an aeh baseline (expected format {BASELINE_FORMAT!r}) — "
                          "write one with `aeh baseline save RUN --out FILE`")
    return data


# -- the gate ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateFinding:
    """One dimension (or `overall`) of the suite or of one task: baseline vs candidate."""

    task_id: str | None
    dimension: str
    base: float
    new: float
    band: float
    threshold: float

    @property
    def delta(self) -> float:
        return self.new - self.base

    @property
    def regressed(self) -> bool:
        return -self.delta > self.threshold and -self.delta > self.band


@dataclass
class GateResult:
    baseline: dict[str, Any]
    run_id: str
    suite: list[GateFinding]
    tasks: list[GateFinding]
    newly_failing: list[str]
    success_verdict: Any
    reasons: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return bool(self.reasons)

    @property
    def regressed_dimensions(self) -> list[str]:
        return sorted({f.dimension for f in self.suite + self.tasks if f.regressed and f.dimension != OVERALL})

    def worst(self) -> tuple[str, str, float] | None:
        """(task, dimension, delta) of the worst task's worst dimension."""
        overall = [f for f in self.tasks if f.dimension == OVERALL]
        if not overall:
            return None
        task = min(overall, key=lambda f: f.delta).task_id
        dims = [f for f in self.tasks if f.task_id == task and f.dimension != OVERALL]
        if not dims:
            return None
        w = min(dims, key=lambda f: f.delta)
        return str(task), w.dimension, w.delta

    def text(self) -> str:
        lines = [f"baseline {self.baseline.get('run_id', '?')} vs run {self.run_id}"]
        for f in self.suite:
            mark = "REGRESSION" if f.regressed else "noise" if f.delta < 0 else "ok"
            lines.append(f"  {f.dimension:<18} {f.base:.3f} -> {f.new:.3f} ({f.delta:+.3f} ±{f.band:.3f})  {mark}")
        hit = [f for f in self.tasks if f.regressed]
        for f in hit:
            lines.append(f"  task {f.task_id}: {f.dimension} {f.base:.3f} -> {f.new:.3f} "
                         f"({f.delta:+.3f} ±{f.band:.3f})")
        for t in self.newly_failing:
            lines.append(f"  newly failing: {t}")
        lines.append(f"  success rate: {self.success_verdict.headline}")
        w = self.worst()
        if w is not None and w[2] < 0:
            lines.append(f"  worst: task {w[0]}, {w[1]} {w[2]:+.3f}")
        if self.regressed:
            lines.append("HARD REGRESSION: " + "; ".join(self.reasons))
        else:
            lines.append("no hard regression")
        return "\n".join(lines)

    def markdown(self) -> str:
        head = "❌ **Hard regression**" if self.regressed else "✅ **No hard regression**"
        out = [f"### Trajectory gate: {head}", "",
               f"Baseline `{self.baseline.get('run_id', '?')}` ({self.baseline.get('model')}) vs run "
               f"`{self.run_id}`. Bands are 2σ of the difference of means (floor 0.01).", "",
               "| dimension | baseline | run | Δ | band | verdict |", "|---|---|---|---|---|---|"]
        for f in self.suite:
            verdict = "**regression**" if f.regressed else "within noise" if f.delta < 0 else "ok"
            out.append(f"| {f.dimension} | {f.base:.3f} | {f.new:.3f} | {f.delta:+.3f} | ±{f.band:.3f} | {verdict} |")
        hit = [f for f in self.tasks if f.regressed]
        if hit:
            out += ["", "**Task-level regressions** (each task against its own band):", ""]
            out += [f"- `{f.task_id}`: {f.dimension} {f.base:.3f} → {f.new:.3f} ({f.delta:+.3f}, band ±{f.band:.3f})"
                    for f in hit]
        if self.newly_failing:
            out += ["", "**Newly failing tasks:** " + ", ".join(f"`{t}`" for t in self.newly_failing)]
        out += ["", f"**Success rate:** {self.success_verdict.headline}"]
        w = self.worst()
        if w is not None and w[2] < 0:
            out += ["", f"**Worst:** task `{w[0]}`, dimension `{w[1]}` ({w[2]:+.3f})"]
        if self.reasons:
            out += ["", "Reasons: " + "; ".join(self.reasons)]
        return "\n".join(out) + "\n"


def _summary(d: dict[str, Any]) -> ScoreSummary:
    return ScoreSummary(float(d["mean"]), float(d["sd"]), int(d["n"]))


def _compare(task: str | None, base: dict[str, Any], new: dict[str, Any], threshold: float,
             overall_threshold: float) -> list[GateFinding]:
    out = []
    for dim in sorted(set(base) & set(new)):
        a, b = _summary(base[dim]), _summary(new[dim])
        if a.n == 0 or b.n == 0 or math.isnan(a.mean) or math.isnan(b.mean):
            continue
        out.append(GateFinding(task, dim, a.mean, b.mean, noise_band(a, b),
                               overall_threshold if dim == OVERALL else threshold))
    return out


def gate(baseline: str | Path | dict[str, Any], run_id: str | None = None, db: Any = None, *,
         threshold: float = DEFAULT_THRESHOLD, overall_threshold: float = DEFAULT_OVERALL_THRESHOLD,
         fdr: float = 0.05, suite: Any = None) -> GateResult:
    """Compare a run (default: the newest) against a committed baseline.

    A hard regression is: a dimension (or `overall`) of the suite or of one task dropping by more
    than its threshold *and* its noise band; a task that passed in the baseline (majority of
    attempts) now failing (majority) with an exact test p < 0.05; or the success-rate gate of
    `aeh compare` (per-task exact tests + BH, paired suite test) run on the stored counts.
    A baseline from another suite hash raises BaselineMismatchError.
    """
    base = baseline if isinstance(baseline, dict) else load_baseline(baseline)
    with using_store(db) as store:
        if run_id is None:
            run_id = store.latest_run_id()
            if run_id is None:
                raise ConfigError(f"no runs in {store.path} — run `aeh run` first or pass --run")
        full = store.resolve_run_id(run_id)
        info = store.run_info(full)
        if info.suite_hash != base.get("suite_hash"):
            raise BaselineMismatchError(
                f"baseline was recorded on suite {base.get('suite')!r} (hash {str(base.get('suite_hash'))[:12]}) "
                f"but run {full[:12]} ran {info.suite!r} (hash {info.suite_hash[:12]}): the tasks differ, so "
                "their scores are not comparable — refresh the baseline with `aeh baseline save`")
        frame = score_run(full, store, suite=suite, loop_n=int(base.get("loop_n", DEFAULT_LOOP_N)),
                          optimal_steps=dict(base.get("learned_optimal_steps") or {}), write=False)
        counts = _success_counts(store, full)
    return gate_frame(base, frame, counts, full, threshold=threshold, overall_threshold=overall_threshold, fdr=fdr)


def gate_frame(base: dict[str, Any], frame: pd.DataFrame, counts: dict[str, dict[str, int]], run_id: str = "?", *,
               threshold: float = DEFAULT_THRESHOLD, overall_threshold: float = DEFAULT_OVERALL_THRESHOLD,
               fdr: float = 0.05) -> GateResult:
    """The gate on already-scored attempts (`frame`: task_id, attempt, dimension, score) and
    success counts (task → successes, attempts); `gate` and the benchmarks share it."""
    full = run_id
    new_tasks, new_dims = _summaries(frame)
    suite_findings = _compare(None, base["dimensions"], new_dims, threshold, overall_threshold)
    task_findings: list[GateFinding] = []
    for t, entry in sorted(base["tasks"].items()):
        if t in new_tasks:
            task_findings += _compare(t, entry["dimensions"], new_tasks[t], threshold, overall_threshold)
    rows, newly_failing = [], []
    for t, entry in sorted(base["tasks"].items()):
        k_a, n_a = int(entry["successes"]), int(entry["attempts"])
        c = counts.get(t)
        if c is None or n_a == 0:
            continue
        k_b, n_b = c["successes"], c["attempts"]
        rows.append(TaskCounts(t, k_a, n_a, k_b, n_b))
        if n_b and k_a / n_a >= 0.5 > k_b / n_b and two_sample_test(k_a, n_a, k_b, n_b) < 0.05:
            newly_failing.append(t)
    verdict = regression_gate(rows, fdr=fdr)
    result = GateResult(base, full, suite_findings, task_findings, newly_failing, verdict)
    dims = sorted({f.dimension for f in suite_findings + task_findings if f.regressed})
    if dims:
        result.reasons.append("dimension(s) cleared their noise band: " + ", ".join(dims))
    if newly_failing:
        result.reasons.append("previously passing task(s) now failing: " + ", ".join(newly_failing))
    if verdict.regressed:
        result.reasons.append("success rate: " + verdict.headline)
    return result

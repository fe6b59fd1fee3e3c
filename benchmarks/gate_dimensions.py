"""The trajectory gate's same-agent false-alarm rate (A/A) and its power, by simulation.

    .venv/bin/python benchmarks/gate_dimensions.py [--pairs 350] [--pool 40] [--seeds 3] [--write]

Pools: each mock profile (strong, degraded, loopy) runs `core` (32 tasks) and `smoke` (5 tasks)
once per seed with `--pool` attempts per task; every attempt is scored by aeh's own six scorers.
Synthetic 32-task suites whose tasks differ in noise are drawn from numpy instead (per task a
share of "troubled" attempts from 0 to 0.4, or to 0.6 for the noisier one; troubled attempts
score U[0.2, 0.9] per dimension and succeed 30% of the time). A CI-sized pair takes n attempts
per task for the baseline and n others for the candidate (disjoint, without replacement) and goes through the whole gate
(`gate_summaries`: suite bands, the per-task family under Benjamini–Hochberg, newly failing
tasks, the success-rate gate of `aeh compare`). A/A pairs draw both sides from one pool; power
pairs draw the candidate from mock-loopy, or from the synthetic suite with one always-passing
task turned mostly failing. Rates carry Wilson 95% intervals over all seeds' pairs.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from _results import machine, publish

import aeh
from aeh.analysis._dimensions import OVERALL, baseline_from_frame, score_run
from aeh.analysis._gate import GateResult, gate_frame, gate_summaries
from aeh.grading.judged_scorers import JUDGED_DIMENSIONS
from aeh.stats import two_sample_test, wilson_interval

SYNTHETIC_TASKS = 32


@dataclass
class Pool:
    """Attempts of one suite × profile: scores[task, attempt, dimension] (nan = skipped)."""

    tasks: list[str]
    dims: list[str]
    scores: np.ndarray
    success: np.ndarray


def engine_pool(suite: str, profile: str, attempts: int, db: str, seed: int) -> Pool:
    """Run the mock engine once and score every attempt with aeh's scorers."""
    table = aeh.run(suite, "mock", model=f"mock-{profile}", attempts=attempts, seed=seed, db=db, progress=False)
    rid = table.run_id
    frame = score_run(rid, db, write=False)
    att = aeh.attempts(rid, db=db)
    att = att[att["failure_bucket"] != "harness_error"]
    tasks = sorted(att["task_id"].unique())
    dims = sorted(d for d in frame["dimension"].unique() if d not in JUDGED_DIMENSIONS)
    # the same number of attempts for every task, so that draws are one array operation
    per_task = min(att.groupby("task_id").size())
    scores = np.full((len(tasks), per_task, len(dims)), np.nan)
    success = np.zeros((len(tasks), per_task), dtype=bool)
    wide = frame.pivot_table(index=["task_id", "attempt"], columns="dimension", values="score")
    for i, t in enumerate(tasks):
        rows = att[att["task_id"] == t].sort_values("attempt").head(per_task)
        success[i] = rows["success"].to_numpy(dtype=bool)
        for j, a in enumerate(rows["attempt"]):
            if (t, a) in wide.index:
                scores[i, j] = wide.loc[(t, a)].reindex(dims).to_numpy(dtype=float)
    return Pool(tasks, dims, scores, success)


def synthetic_pool(rng: np.random.Generator, attempts: int, broken_task: bool = False,
                   trouble_max: float = 0.4) -> Pool:
    """32 tasks whose share of troubled attempts runs from 0 to `trouble_max`; with `broken_task` the
    first (always passing) task is troubled in 80% of attempts and then succeeds 10% of the time."""
    dims = ["error_recovery", "loop_detection", "step_efficiency", "task_completion", "tool_selection"]
    trouble = np.linspace(0.0, trouble_max, SYNTHETIC_TASKS)
    if broken_task:
        trouble[0] = 0.8
    troubled = rng.random((SYNTHETIC_TASKS, attempts)) < trouble[:, None]
    good = np.clip(1.0 - np.abs(rng.normal(0, 0.02, (SYNTHETIC_TASKS, attempts, len(dims)))), 0, 1)
    bad = rng.uniform(0.2, 0.9, (SYNTHETIC_TASKS, attempts, len(dims)))
    scores = np.where(troubled[:, :, None], bad, good)
    p_success = np.where(troubled, 0.3, 0.99)
    if broken_task:
        p_success[0] = np.where(troubled[0], 0.1, 0.99)
    success = rng.random((SYNTHETIC_TASKS, attempts)) < p_success
    if not broken_task:
        scores[0], success[0] = 1.0, True  # the task the power scenario breaks: always passing
    return Pool([f"task_{i:02d}" for i in range(SYNTHETIC_TASKS)], dims, scores, success)


def _with_overall(scores: np.ndarray) -> tuple[np.ndarray, list[str]]:
    with np.errstate(all="ignore"):
        overall = np.nanmean(scores, axis=-1, keepdims=True)
    return np.concatenate([scores, overall], axis=-1), [OVERALL]


def summaries(pool: Pool, idx: np.ndarray) -> tuple[dict, dict, dict]:
    """(task → dim → mean/sd/n, dim → mean/sd/n, task → counts) of the drawn attempts, as
    `baseline_from_frame` and `_summaries` build them."""
    picked = np.take_along_axis(pool.scores, idx[:, :, None], axis=1)
    picked, extra = _with_overall(picked)
    dims = pool.dims + extra
    ok = ~np.isnan(picked)
    n = ok.sum(axis=1)
    with np.errstate(all="ignore"):
        mean = np.nanmean(picked, axis=1)
        sd = np.nan_to_num(np.nanstd(picked, axis=1, ddof=1))
    flat = picked.reshape(-1, len(dims))
    flat_ok = ~np.isnan(flat)
    with np.errstate(all="ignore"):
        s_mean = np.nanmean(flat, axis=0)
        s_sd = np.nan_to_num(np.nanstd(flat, axis=0, ddof=1))
    tasks = {t: {d: {"mean": float(mean[i, j]), "sd": float(sd[i, j]), "n": int(n[i, j]),
                     "scores": [round(float(v), 6) for v in picked[i, ok[i, :, j], j]]}
                 for j, d in enumerate(dims) if n[i, j]} for i, t in enumerate(pool.tasks)}
    suite = {d: {"mean": float(s_mean[j]), "sd": float(s_sd[j]), "n": int(flat_ok[:, j].sum())}
             for j, d in enumerate(dims) if flat_ok[:, j].any()}
    succ = np.take_along_axis(pool.success, idx, axis=1)
    counts = {t: {"successes": int(succ[i].sum()), "attempts": int(idx.shape[1])} for i, t in enumerate(pool.tasks)}
    return tasks, suite, counts


def baseline(tasks: dict, suite: dict, counts: dict) -> dict:
    return {"dimensions": suite, "tasks": {t: {**counts[t], "dimensions": d} for t, d in tasks.items()}}


def frame_of(pool: Pool, idx: np.ndarray) -> tuple[pd.DataFrame, dict]:
    """The drawn attempts as a score frame, for the check against `gate_frame`."""
    rows = [(t, int(a), d, float(pool.scores[i, a, j])) for i, t in enumerate(pool.tasks) for a in idx[i]
            for j, d in enumerate(pool.dims) if not np.isnan(pool.scores[i, a, j])]
    succ = np.take_along_axis(pool.success, idx, axis=1)
    counts = {t: {"successes": int(succ[i].sum()), "attempts": int(idx.shape[1])} for i, t in enumerate(pool.tasks)}
    return pd.DataFrame(rows, columns=["task_id", "attempt", "dimension", "score"]), counts


def check_against_frame(base_pool: Pool, cand_pool: Pool, rng: np.random.Generator, n: int) -> None:
    """The vectorised summaries must give the gate exactly what `gate_frame` computes."""
    bi, ci = draw(base_pool, cand_pool, n, rng)
    fast = gate_summaries(baseline(*summaries(base_pool, bi)), *summaries(cand_pool, ci))
    bf, bc = frame_of(base_pool, bi)
    cf, cc = frame_of(cand_pool, ci)
    slow = gate_frame(baseline_from_frame(bf, bc), cf, cc)
    key = [(f.task_id, f.dimension, round(f.delta, 9), round(f.p, 9)) for f in fast.tasks]
    assert key == [(f.task_id, f.dimension, round(f.delta, 9), round(f.p, 9)) for f in slow.tasks]
    assert fast.regressed == slow.regressed and fast.reasons == slow.reasons


def draw(base: Pool, cand: Pool, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Attempt indices per task: n for the baseline, n others for the candidate."""
    size = base.scores.shape[1]
    order = rng.permuted(np.tile(np.arange(size), (len(base.tasks), 1)), axis=1)
    if base is cand:
        return order[:, :n], order[:, n:2 * n]
    other = rng.permuted(np.tile(np.arange(cand.scores.shape[1]), (len(cand.tasks), 1)), axis=1)
    return order[:, :n], other[:, :n]


def _uncorrected(result: GateResult, base: dict, counts: dict) -> bool:
    """Whether the per-task rules read one at a time would have fired: any task band cleared
    (threshold and 2σ), or any passing → failing task at exact p < 0.05."""
    if any(-f.delta > f.threshold and -f.delta > f.band for f in result.tasks):
        return True
    for t, entry in base["tasks"].items():
        k_a, n_a, c = entry["successes"], entry["attempts"], counts[t]
        if k_a / n_a >= 0.5 > c["successes"] / c["attempts"] and \
                two_sample_test(k_a, n_a, c["successes"], c["attempts"]) < 0.05:
            return True
    return False


def run_pairs(base: Pool, cand: Pool, n: int, pairs: int, rng: np.random.Generator) -> tuple[int, Counter[str]]:
    fired, why = 0, Counter[str]()
    for _ in range(pairs):
        bi, ci = draw(base, cand, n, rng)
        b = baseline(*summaries(base, bi))
        tasks, suite, counts = summaries(cand, ci)
        result = gate_summaries(b, tasks, suite, counts)
        if _uncorrected(result, b, counts):
            why["uncorrected"] += 1
        if result.regressed:
            fired += 1
            if any(f.regressed for f in result.suite):
                why["suite band"] += 1
            if any(f.regressed for f in result.tasks):
                why["task band"] += 1
            if result.failing:
                why["newly failing"] += 1
            if result.success_verdict.regressed:
                why["success-rate gate"] += 1
    return fired, why


def rate_text(k: int, trials: int) -> str:
    low, high = wilson_interval(k, trials)
    return f"{k / trials:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=350, help="pairs per setting and seed")
    ap.add_argument("--pool", type=int, default=40, help="mock attempts per task per profile and seed")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="record the table in benchmarks/RESULTS.md")
    args = ap.parse_args()
    cpu0, t0 = time.process_time(), time.perf_counter()
    tally: dict[tuple[str, str, int], list] = {}
    for seed in range(args.seeds):
        rng = np.random.default_rng(1000 + seed)
        with tempfile.TemporaryDirectory() as d:
            db = str(Path(d) / "pool.db")
            pools = {(s, p): engine_pool(s, p, args.pool, db, 10 * seed + k)
                     for k, (s, p) in enumerate([(s, p) for s in ("core", "smoke")
                                                 for p in ("strong", "degraded", "loopy")])}
        synth = synthetic_pool(rng, max(args.pool, 40))
        broken = synthetic_pool(rng, max(args.pool, 40), broken_task=True)
        noisier = synthetic_pool(rng, max(args.pool, 40), trouble_max=0.6)
        if seed == 0:
            check_against_frame(pools[("core", "degraded")], pools[("core", "degraded")], rng, 5)
            check_against_frame(synth, broken, rng, 5)
        settings = [
            ("A/A", "core (32), mock-strong", pools[("core", "strong")], pools[("core", "strong")]),
            ("A/A", "core (32), mock-degraded", pools[("core", "degraded")], pools[("core", "degraded")]),
            ("A/A", "synthetic 32 tasks, troubled share 0–0.4", synth, synth),
            ("A/A", "synthetic 32 tasks, troubled share 0–0.6", noisier, noisier),
            ("A/A", "smoke (5), mock-strong", pools[("smoke", "strong")], pools[("smoke", "strong")]),
            ("power", "core (32), mock-strong → mock-loopy", pools[("core", "strong")], pools[("core", "loopy")]),
            ("power", "smoke (5), mock-strong → mock-loopy", pools[("smoke", "strong")], pools[("smoke", "loopy")]),
            ("power", "synthetic: 1 task always passing → mostly failing", synth, broken),
        ]
        for kind, name, b, c in settings:
            for n in (5, 10):
                fired, why = run_pairs(b, c, n, args.pairs, rng)
                entry = tally.setdefault((kind, name, n), [0, 0, Counter()])
                entry[0] += fired
                entry[1] += args.pairs
                entry[2].update(why)
                print(kind, name, n, seed, fired, flush=True)
    cpu = time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"`benchmarks/gate_dimensions.py --pairs {args.pairs} --pool {args.pool} --seeds {args.seeds}`: "
        f"{cpu:.0f} s CPU ({time.perf_counter() - t0:.0f} s wall), peak RSS {peak:.0f} MB. {machine()}", "",
        "The whole trajectory gate per pair (suite bands at threshold 0.05 / overall 0.03 and 2σ with a "
        "0.01 floor, upheld by Holm at 0.05 over the suite's checks; per-task bands and newly-failing "
        "tests under Benjamini–Hochberg at 0.05 over the "
        "whole per-task family; the success-rate gate of `aeh compare`). Pools of "
        f"{args.pool} mock attempts per task per profile and seed; pairs of n attempts per task per side. "
        "Rates over all seeds with Wilson 95% intervals. The last column is how often the per-task "
        "rules read one at a time (2σ bands, newly failing at exact p < 0.05) would have fired.", "",
        "| kind | suite, profiles | n | pairs | gate fired | what fired (pairs) | per-task rules uncorrected |",
        "| --- | --- | ---: | ---: | --- | --- | --- |",
    ]
    for (kind, name, n), (fired, total, why) in tally.items():
        old = why.pop("uncorrected", 0)
        detail = ", ".join(f"{k} {v}" for k, v in why.most_common()) or "—"
        lines.append(f"| {kind} | {name} | {n} | {total:,} | {rate_text(fired, total)} | {detail} | "
                     f"{rate_text(old, total)} |")
    publish("gate_dimensions", "## gate_dimensions — the trajectory gate\n\n" + "\n".join(lines), args.write)


if __name__ == "__main__":
    main()

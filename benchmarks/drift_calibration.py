"""Drift calibration: false alarms under A/A with run-to-run noise, and power for a slow decline.

    .venv/bin/python benchmarks/drift_calibration.py                 # 1,000 sequences per cell
    .venv/bin/python benchmarks/drift_calibration.py --sims 200      # quicker, noisier

Each simulated sequence: 32 tasks with true rates drawn once, uniformly from [0.1, 0.95]
(`default_rng(2024)`, as in docs/statistics.md), R runs (5 or 10) × 5 attempts per task. Run
noise: every run r gets one offset d_r ~ N(0, sd) added to all its task rates (clipped to
[0, 1]) — the provider's day, load or sampling drift that moves a whole run together. A/A: no
other change. Decline: every task's rate falls by `step` per run on top of that.

Methods compared:
- old: attempt-level OLS `success ~ run + C(task)` with cluster-robust SE by task (what
  `aeh.drift` fitted before; runs are not a level of variation in it);
- new: `aeh.stats.drift_trend`, OLS of each run's mean per-task rate on run index (n = runs).

Reported per cell: `p < 0.05` (two-sided test of any trend), `decline` (the slope's 95% interval
lies below 0) and `drifting` (that, and a modelled drop > 0.08 over the window: the verdict
`aeh drift` prints). Prints a Markdown section; `--append` adds it to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from pathlib import Path

import numpy as np
import statsmodels.api as sm

from aeh.stats import drift_trend

TASKS, ATTEMPTS, THRESHOLD = 32, 5, 0.08


def _old(task: np.ndarray, run: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """The previous attempt-level fit: slope, its interval's upper end, p (cluster by task)."""
    dummies = (task[:, None] == np.arange(1, TASKS)[None, :]).astype(float)
    x = np.column_stack([np.ones_like(y), run, dummies])
    fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": task}, use_t=True)
    return float(fit.params[1]), float(fit.conf_int()[1, 1]), float(fit.pvalues[1])


def _simulate(rng: np.random.Generator, base: np.ndarray, runs: int, sd: float,
              step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    offsets = rng.normal(0.0, sd, runs) if sd > 0 else np.zeros(runs)
    p = np.clip(base[None, :] + offsets[:, None] - step * np.arange(runs)[:, None], 0.0, 1.0)
    y = rng.random((runs, TASKS, ATTEMPTS)) < p[:, :, None]
    run, task, _ = np.meshgrid(np.arange(runs), np.arange(TASKS), np.arange(ATTEMPTS), indexing="ij")
    return task.ravel(), run.ravel().astype(float), y.ravel().astype(float)


def cell(base: np.ndarray, runs: int, sd: float, step: float, sims: int, seed: int) -> dict[str, float]:
    """Share of sequences flagged by each method and criterion."""
    rng = np.random.default_rng(seed)
    hits = {f"{m}_{c}": 0 for m in ("old", "new") for c in ("p", "decline", "drifting")}
    for _ in range(sims):
        task, run, y = _simulate(rng, base, runs, sd, step)
        slope, high, p = _old(task, run, y)
        hits["old_p"] += p < 0.05
        hits["old_decline"] += high < 0
        hits["old_drifting"] += high < 0 and -slope * (runs - 1) > THRESHOLD
        t = drift_trend([str(i) for i in task], run.astype(int).tolist(), y.astype(bool).tolist())
        hits["new_p"] += t.p < 0.05
        hits["new_decline"] += t.high < 0
        hits["new_drifting"] += t.high < 0 and -t.cumulative > THRESHOLD
    return {k: v / sims for k, v in hits.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="A/A sequences per row")
    parser.add_argument("--power-sims", type=int, default=400, help="declining sequences per row")
    parser.add_argument("--append", action="store_true", help="append the section to benchmarks/RESULTS.md")
    args = parser.parse_args()
    base = np.random.default_rng(2024).uniform(0.1, 0.95, TASKS)
    started = time.perf_counter()
    lines = [("| scenario | runs | run-noise sd | old p<0.05 | old decline | old drifting | "
              "new p<0.05 | new decline | new drifting |"),
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    seed = 100
    scenarios = [("A/A", 0.0, sd) for sd in (0.0, 0.01, 0.03)] + [("decline 0.02/run", 0.02, 0.01),
                                                                  ("decline 0.03/run", 0.03, 0.01)]
    for label, step, sd in scenarios:
        for runs in (5, 10):
            seed += 1
            r = cell(base, runs, sd, step, args.sims if step == 0 else args.power_sims, seed)
            lines.append(f"| {label} | {runs} | {sd:g} | " + " | ".join(
                f"{r[k]:.3f}" for k in ("old_p", "old_decline", "old_drifting", "new_p", "new_decline",
                                        "new_drifting")) + " |")
            print(lines[-1], flush=True)
    elapsed = time.perf_counter() - started
    mc = 0.05 if args.sims <= 0 else (0.05 * 0.95 / args.sims) ** 0.5
    section = "\n".join([
        "", f"## Drift calibration ({dt.date.today().isoformat()}, `benchmarks/drift_calibration.py`)", "",
        (f"{args.sims:,} simulated A/A sequences per row ({args.power_sims:,} per decline row): {TASKS} tasks (true rates uniform on [0.1, 0.95], "
        f"`default_rng(2024)`) × {ATTEMPTS} attempts per run; run noise = one N(0, sd) offset per run "
        "added to every task's rate. \"old\" = attempt-level OLS `success ~ run + C(task)`, "
        "cluster-robust by task (the previous `aeh drift`); \"new\" = OLS of per-run mean task rates "
        "on run index (n = runs, t with runs − 2 df, the current `aeh drift`). \"p<0.05\": two-sided "
        "test of any trend (nominal 0.05); \"decline\": slope's 95% interval below 0 (nominal 0.025); "
        "\"drifting\": that and a modelled drop > 0.08 over the window (the verdict `aeh drift` "
        f"prints). Monte Carlo SE at a true 0.05: {mc:.3f}. Elapsed {elapsed:.0f} s."), "", *lines, ""])
    print(section)
    if args.append:
        path = Path(__file__).with_name("RESULTS.md")
        with path.open("a", encoding="utf-8") as fh:  # append only: others add sections too
            fh.write(section)


if __name__ == "__main__":
    main()

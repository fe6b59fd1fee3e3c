"""Calibrate the two-level regression gate of `aeh compare` by simulation.

    .venv/bin/python benchmarks/gate_calibration.py [--trials 700] [--seeds 3] [--write]

Runs the real gate (`aeh.stats.regression_gate`: Boschloo + Benjamini–Hochberg per task, and
the paired suite test) on simulated pairs of runs, binomial attempts, at n = 5 and n = 10
attempts per task, over `--seeds` seeds of `--trials` pairs each, and reports how often it fires,
with Wilson 95% intervals over all seeds' trials:

- core-sized (32 tasks) A/A for three sets of true rates — an even spread 0.50–0.98, 32 rates
  drawn from U[0.1, 0.95], and a strong agent (26 tasks at 0.97–1.00, 6 at 0.60–0.90);
- smoke-sized (5 tasks) A/A, rates 0.90–0.99;
- power: every one of 32 tasks drops 0.15; 3 of 32 drop 0.9 → 0.2; all 5 smoke tasks drop 0.3;
- A/A with run-to-run noise: every run's rates shifted together by N(0, 0.03).

Each setting runs at both candidate suite levels (95% and 97.5% two-sided intervals, BH at 0.05),
the figures `aeh.stats.SUITE_ALPHA` was chosen from. `--write` records the table in
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _results import machine, publish

from aeh.stats import SUITE_ALPHA, simulate_gate, wilson_interval

LEVELS = (0.05, 0.025)
RUN_SD = 0.03


def scenarios() -> list[tuple[str, str, np.ndarray, np.ndarray, float]]:
    """(kind, name, base rates, new rates, run-noise sd)."""
    spread = np.linspace(0.50, 0.98, 32)
    drawn = np.random.default_rng(2024).uniform(0.1, 0.95, 32)
    strong = np.concatenate([np.linspace(0.97, 1.0, 26), np.linspace(0.6, 0.9, 6)])
    smoke = np.linspace(0.90, 0.99, 5)
    three = spread.copy()
    three[:3] = 0.9
    three_new = three.copy()
    three_new[:3] = 0.2
    return [
        ("A/A", "32 tasks, rates 0.50–0.98", spread, spread, 0.0),
        ("A/A", "32 tasks, rates U[0.1, 0.95]", drawn, drawn, 0.0),
        ("A/A", "32 tasks, strong agent (26 at 0.97–1.00)", strong, strong, 0.0),
        ("A/A", "5 tasks, rates 0.90–0.99", smoke, smoke, 0.0),
        ("A/A", f"32 tasks 0.50–0.98, run noise sd {RUN_SD}", spread, spread, RUN_SD),
        ("power", "32 tasks all drop 0.15", spread, np.clip(spread - 0.15, 0, 1), 0.0),
        ("power", "3 of 32 drop 0.9 → 0.2", three, three_new, 0.0),
        ("power", "5 tasks all drop 0.3", smoke, smoke - 0.3, 0.0),
    ]


def rate_text(hits: int, trials: int) -> str:
    low, high = wilson_interval(hits, trials)
    return f"{hits / trials:.3f} [{low:.3f}, {high:.3f}]"


def run(trials: int, seeds: int, seed: int) -> tuple[str, float]:
    """The Markdown table and the CPU seconds it took."""
    started = time.process_time()
    lines = ["| kind | scenario | suite level | n | trials | gate fires | task level (BH) | suite level fires |",
             "| --- | --- | --- | ---: | ---: | --- | --- | --- |"]
    for i, (kind, name, base, new, run_sd) in enumerate(scenarios()):
        for alpha in LEVELS:
            for n in (5, 10):
                gate = task = suite = 0
                for s in range(seeds):
                    res = simulate_gate(base, new, n=n, trials=trials, seed=seed + 1000 * s + 100 * i + n,
                                        fdr=0.05, suite_alpha=alpha, run_sd=run_sd)
                    gate += round(res.gate_rate * trials)
                    task += round(res.task_level_rate * trials)
                    suite += round(res.suite_level_rate * trials)
                total = trials * seeds
                shipped = " (shipped)" if alpha == SUITE_ALPHA else ""
                lines.append(f"| {kind} | {name} | {1 - alpha:.1%}{shipped} | {n} | {total:,} | "
                             f"{rate_text(gate, total)} | {rate_text(task, total)} | {rate_text(suite, total)} |")
                print(lines[-1], flush=True)
    return "\n".join(lines), time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=700, help="pairs per seed and cell")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--write", action="store_true", help="record the table in benchmarks/RESULTS.md")
    args = parser.parse_args()
    table, cpu = run(args.trials, args.seeds, args.seed)
    body = "\n".join([
        "## gate_calibration — the success-rate gate of `aeh compare`", "",
        f"`benchmarks/gate_calibration.py --trials {args.trials} --seeds {args.seeds} --seed {args.seed}`, "
        f"{cpu:.0f} s CPU. {machine()} Binomial attempts, the real `aeh.stats.regression_gate` (BH at "
        "FDR 0.05 per task, the paired suite interval at the level shown); rates over all seeds with "
        "Wilson 95% intervals. A/A rows are false alarms (target ≤ 0.05 for the whole gate); power rows "
        "are the share of pairs in which the gate fired.", "",
        table,
    ])
    publish("gate_calibration", body, args.write)


if __name__ == "__main__":
    main()

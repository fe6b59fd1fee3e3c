"""Calibrate the two-level regression gate of `aeh compare` by simulation.

    .venv/bin/python benchmarks/gate_calibration.py [--trials 2000] [--seed 20261130] [--write]

Runs the real gate (`aeh.stats.regression_gate`: Boschloo + Benjamini–Hochberg per task, and
the paired suite test) on simulated pairs of runs with 32 tasks at n = 5 and n = 10 attempts
per task, binomial attempts, and reports how often it fires:

- A/A (no true change): the false-alarm rate of the whole gate and of each level, for two sets
  of true rates — an even spread 0.50–0.98 and 32 rates drawn uniformly from [0.1, 0.95];
- a uniform drop of 0.15 on every task (spread rates);
- 3 of 32 tasks dropping 0.9 → 0.2, the other 29 unchanged.

Each setting runs three times: the shipped levels (BH at FDR 0.05, the suite interval at
97.5%, i.e. a one-sided 1.25% test) and, for reference, the unsplit levels (BH 0.05, suite 95%)
and an even Bonferroni split (BH at 0.025, suite 97.5%).
Every rate comes with a Wilson 95% interval. Boschloo p-values are cached per count table
(exact), so the cost is dominated by the first visit of each table. `--write` appends the
table as a dated section to benchmarks/RESULTS.md (replacing an earlier section of this
script, leaving the rest of the file alone).
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import time
from pathlib import Path

import numpy as np

from aeh.stats import SUITE_ALPHA, simulate_gate, wilson_interval

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
START, END = "<!-- gate_calibration -->", "<!-- /gate_calibration -->"
N_TASKS = 32


def scenarios() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, base rates, new rates), 32 tasks each."""
    spread = np.linspace(0.50, 0.98, N_TASKS)
    drawn = np.random.default_rng(2024).uniform(0.1, 0.95, N_TASKS)
    three = spread.copy()
    three[:3] = 0.9
    three_new = three.copy()
    three_new[:3] = 0.2
    return [
        ("A/A, rates 0.50–0.98", spread, spread),
        ("A/A, rates U[0.1, 0.95]", drawn, drawn),
        ("all 32 tasks drop 0.15", spread, np.clip(spread - 0.15, 0, 1)),
        ("3 of 32 drop 0.9 → 0.2", three, three_new),
    ]


def _rate(hits: float, trials: int) -> str:
    k = round(hits * trials)
    low, high = wilson_interval(k, trials)
    return f"{hits:.3f} [{low:.3f}, {high:.3f}]"


def run(trials: int, seed: int) -> tuple[str, float]:
    """The Markdown table and the seconds it took."""
    started = time.perf_counter()
    configs = [(f"shipped: FDR 0.05, suite {1 - SUITE_ALPHA:.1%} CI", 0.05, SUITE_ALPHA),
               ("unsplit: FDR 0.05, suite 95% CI", 0.05, 0.05),
               ("Bonferroni split: FDR 0.025, suite 97.5% CI", 0.025, 0.025)]
    lines = ["| levels | scenario | n | trials | gate fires (either level) | task level (BH) | "
             "suite level | per-task detection | s |",
             "| --- | --- | ---: | ---: | --- | --- | --- | ---: | ---: |"]
    for label, fdr, suite_alpha in configs:
        for i, (name, base, new) in enumerate(scenarios()):
            for n in (5, 10):
                res = simulate_gate(base, new, n=n, trials=trials, seed=seed + 100 * i + n,
                                    fdr=fdr, suite_alpha=suite_alpha)
                detection = "—" if np.isnan(res.per_task_detection) else f"{res.per_task_detection:.3f}"
                lines.append(f"| {label} | {name} | {n} | {trials:,} | {_rate(res.gate_rate, trials)} | "
                             f"{_rate(res.task_level_rate, trials)} | {_rate(res.suite_level_rate, trials)} | "
                             f"{detection} | {res.seconds:.1f} |")
                print(lines[-1], flush=True)
    return "\n".join(lines), time.perf_counter() - started


def write_section(table: str, trials: int, seed: int, seconds: float) -> None:
    """Append (or replace) this script's dated section; re-read the file right before writing
    so that sections other scripts appended meanwhile are kept."""
    section = "\n".join([
        START,
        f"## gate_calibration — {dt.date.today().isoformat()}",
        "",
        f"Machine: CPython {platform.python_version()}, {platform.system()} {platform.release()}. "
        f"`benchmarks/gate_calibration.py --trials {trials} --seed {seed}`, {seconds:.0f} s in all. "
        f"32 tasks, binomial attempts, the real `aeh.stats.regression_gate`; rates with Wilson 95% intervals.",
        "",
        table,
        "",
        "A/A rows are false alarms (target ≤ 0.05 for the whole gate); drop rows are power. "
        "\"per-task detection\" is the mean share of truly dropped tasks flagged by BH.",
        END,
    ])
    text = RESULTS.read_text()
    if START in text and END in text:
        before, rest = text.split(START, 1)
        text = before + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--write", action="store_true", help="append the table to benchmarks/RESULTS.md")
    args = parser.parse_args()
    table, seconds = run(args.trials, args.seed)
    print(f"\n{seconds:.0f} s")
    if args.write:
        write_section(table, args.trials, args.seed, seconds)
        print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()

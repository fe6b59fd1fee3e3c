"""Coverage of the suite-rate interval (`aeh.stats.suite_rate`) beside the plain t-interval.

    .venv/bin/python benchmarks/suite_rate_coverage.py [--trials 4000] [--write]

Per setting: draw T true task rates from a population, n binomial attempts per task, compute
the interval from the observed per-task rates, and count how often it covers the population's
mean rate. The t-interval is mean ± t_{T-1}·SE clipped to [0, 1] (what aeh shipped before); the
shipped interval is Wilson's at the effective number of tasks m(1 - m)/SE² with the t_{T-1}
critical value. Coverage carries a Wilson 95% Monte-Carlo interval.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from _results import machine, publish
from scipy import stats

from aeh.stats import suite_rate, wilson_interval

Population = Callable[[np.random.Generator, int], np.ndarray]

POPULATIONS: list[tuple[str, Population, float]] = [
    ("strong: Beta(9, 1), mean 0.90", lambda r, t: r.beta(9, 1, t), 0.9),
    ("skewed: Beta(4, 1), mean 0.80", lambda r, t: r.beta(4, 1, t), 0.8),
    ("even: U[0.1, 0.95]", lambda r, t: r.uniform(0.1, 0.95, t), 0.525),
    ("flat: Beta(1, 1)", lambda r, t: r.beta(1, 1, t), 0.5),
]


def t_interval(rates: np.ndarray) -> tuple[float, float]:
    """The t-interval on the SE across tasks, clipped (Wilson's with tasks as units at SE 0)."""
    t_count, mean = len(rates), float(rates.mean())
    se = float(rates.std(ddof=1) / math.sqrt(t_count))
    if se == 0:
        return suite_rate(rates.tolist()).low, suite_rate(rates.tolist()).high
    half = float(stats.t.ppf(0.975, t_count - 1)) * se
    return max(0.0, mean - half), min(1.0, mean + half)


def coverage(pop: Population, truth: float, tasks: int, n: int, trials: int,
             rng: np.random.Generator) -> tuple[int, int]:
    hits_t = hits_s = 0
    for _ in range(trials):
        rates = rng.binomial(n, pop(rng, tasks)) / n
        low, high = t_interval(rates)
        hits_t += low <= truth <= high
        s = suite_rate(rates.tolist())
        hits_s += s.low <= truth <= s.high
    return hits_t, hits_s


def text(hits: int, trials: int) -> str:
    low, high = wilson_interval(hits, trials)
    return f"{hits / trials:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="record the table in benchmarks/RESULTS.md")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    lines = ["| population | tasks | n | t-interval (before) | shipped: Wilson at effective n |",
             "| --- | ---: | ---: | --- | --- |"]
    for name, pop, truth in POPULATIONS:
        for tasks in (5, 10, 32):
            for n in (5, 10):
                hits_t, hits_s = coverage(pop, truth, tasks, n, args.trials, rng)
                lines.append(f"| {name} | {tasks} | {n} | {text(hits_t, args.trials)} | {text(hits_s, args.trials)} |")
                print(lines[-1], flush=True)
    body = "\n".join([
        "## suite_rate_coverage — the suite-rate interval", "",
        f"`benchmarks/suite_rate_coverage.py --trials {args.trials} --seed {args.seed}`, "
        f"{time.process_time() - started:.0f} s CPU. {machine()} Share of {args.trials:,} draws whose 95% "
        "interval covers the population's mean rate, with Wilson 95% Monte-Carlo intervals.", "",
        *lines,
    ])
    publish("suite_rate_coverage", body, args.write)


if __name__ == "__main__":
    main()

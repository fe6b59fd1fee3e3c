"""Per-attempt harness overhead: what aeh adds to each attempt beyond the agent's own work.

    .venv/bin/python benchmarks/attempt_overhead.py [--sizes 100 1000 5000] [--write]

The agent is the mock adapter with `latency_s=0` (no simulated model time) on the smoke suite's
tool-loop task `draft_and_count` (two model turns around two tool calls, graded by two graders,
stored with its spans in a temp store). The run's wall time is measured at several sizes and
fitted with least squares, wall = fixed + per_attempt × N, so the per-attempt figure excludes the
fixed start (suite load, store creation). The baseline, measured in the same process: the same
two tool functions called directly, N times — the work no harness can avoid. Target: ≤ 0.4 ms
per attempt of harness overhead.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _results import machine, write_section

import aeh
from aeh.tools.registry import ToolEnv

TASK = "draft_and_count"


def run_wall(n: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        aeh.run("smoke", adapter="mock", attempts=n, concurrency=concurrency, seed=1, db=Path(tmp) / "runs.db",
                tasks=[TASK], progress=False, adapter_options={"latency_s": 0})
        return time.perf_counter() - start


def direct_wall(n: int) -> float:
    """The same tool calls made straight on the suite's registry, no harness around them."""
    import asyncio
    import inspect
    import random

    suite = aeh.load_suite("smoke")
    registry = suite.tool_registry()
    task = next(t for t in suite.tasks() if t.id == TASK)
    steps = [(s.tool, s.args) for s in task.plan]

    async def go() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            env = ToolEnv(workspace=Path(tmp), resources={}, rng=random.Random(0))
            for _ in range(n):
                for name, args in steps:
                    spec = registry.get(name)
                    parsed = spec.params.model_validate(args) if spec.params is not None else args
                    result = spec.fn(parsed, env)
                    if inspect.isawaitable(result):
                        await result

    start = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - start


def fit(sizes: list[int], walls: list[float]) -> tuple[float, float]:
    slope, intercept = statistics.linear_regression(sizes, walls)
    return intercept, slope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs per size")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    run_wall(20, args.concurrency)  # warm imports and caches
    walls = [min(run_wall(n, args.concurrency) for _ in range(args.repeats)) for n in args.sizes]
    direct = [min(direct_wall(n) for _ in range(args.repeats)) for n in args.sizes]
    fixed, per = fit(args.sizes, walls)
    _, per_direct = fit(args.sizes, direct)
    overhead_ms = (per - per_direct) * 1000
    rows = ["| N attempts | aeh run wall (s) | direct tool calls (s) |", "| ---: | ---: | ---: |"]
    rows += [f"| {n:,} | {w:.3f} | {d:.4f} |" for n, w, d in zip(args.sizes, walls, direct, strict=True)]
    verdict = "meets" if overhead_ms <= 0.4 else "misses"
    body = "\n".join([
        f"## attempt_overhead — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/attempt_overhead.py --sizes {' '.join(map(str, args.sizes))}`: smoke `{TASK}`, mock "
        f"adapter with `latency_s=0`, concurrency {args.concurrency}, best of {args.repeats}.", "",
        *rows, "",
        f"Fit wall = fixed + per-attempt × N: fixed {fixed:.3f} s, **{per * 1000:.3f} ms per attempt**; the "
        f"direct tool calls cost {per_direct * 1000:.4f} ms per attempt, so aeh's own overhead is "
        f"**{overhead_ms:.3f} ms per attempt** ({verdict} the 0.4 ms target).",
    ])
    print(body)
    if args.write:
        write_section("attempt_overhead", body)


if __name__ == "__main__":
    main()

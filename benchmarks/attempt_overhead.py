"""Per-attempt harness overhead: what aeh adds to each attempt beyond the agent's own work.

    .venv/bin/python benchmarks/attempt_overhead.py [--sizes 200 1000 2000] [--write]

The agent is the mock adapter with `latency_s=0` (no simulated model time) on two smoke tasks:
`draft_and_count` (the tool loop: write a file, count its words — four model turns around two
sync file tools, two graders) and `capital_first_alphabetically` (two lookups with a pure,
`blocking=False` tool, no file at all). Each run is stored with its spans in a temp store.
Wall and process CPU are measured at several sizes and fitted with least squares
(wall = fixed + per_attempt × N), so the per-attempt figures exclude the fixed start.

Baselines measured in the same process:
- the task's own tool calls made directly, N times — work no harness can avoid;
- this machine's file-system floor for one isolated attempt: `mkdir` of a workspace, the tool's
  file write, and its removal (an attempt that writes a file pays it in any harness);
- one worker-thread hand-off (how a blocking sync tool is kept off the event loop).
Target: ≤ 0.4 ms per attempt of harness overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from _results import machine, publish

import aeh
from aeh.engine.toolthreads import run_in_worker
from aeh.tools._tools import ToolEnv

TASKS = ("draft_and_count", "capital_first_alphabetically")
TARGET_MS = 0.4


def run_cost(task: str, n: int, concurrency: int) -> tuple[float, float]:
    """(wall s, process CPU s) of one aeh.run of `n` attempts of `task`."""
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        aeh.run("smoke", adapter="mock", attempts=n, concurrency=concurrency, seed=1, db=Path(tmp) / "runs.db",
                tasks=[task], progress=False, adapter_options={"latency_s": 0})
        return time.perf_counter() - wall, time.process_time() - cpu


def direct_cost(task_id: str, n: int) -> float:
    """The task's plan, tool by tool, called straight on the suite's registry: no harness around it."""
    import inspect
    import random

    suite = aeh.load_suite("smoke")
    registry = suite.tool_registry()
    task = next(t for t in suite.tasks() if t.id == task_id)
    steps = [(registry.get(s.tool), s.args) for s in task.plan]

    async def go() -> float:
        lifespan = suite.lifespan()
        assert lifespan is not None
        async with lifespan as resources, _temp_dir() as tmp:
            env = ToolEnv(workspace=tmp, resources=resources, rng=random.Random(0))
            start = time.perf_counter()
            for _ in range(n):
                for spec, args in steps:
                    parsed = spec.params.model_validate(args) if spec.params is not None else args
                    result = spec.fn(parsed, env)
                    if inspect.isawaitable(result):
                        await result
            return time.perf_counter() - start

    return asyncio.run(go())


@contextlib.asynccontextmanager
async def _temp_dir() -> AsyncIterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def fs_floor_ms(n: int = 500) -> float:
    """mkdir + one small file write + removal of one workspace, per attempt, on the temp file system."""
    root = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    for i in range(n):
        ws = root / str(i)
        ws.mkdir()
        (ws / "draft.txt").write_text("the quick brown fox jumps over the lazy dog")
    shutil.rmtree(root)
    return (time.perf_counter() - start) / n * 1000


def hand_off_ms(n: int = 1000) -> float:
    async def go() -> float:
        for _ in range(50):
            await run_in_worker(int, 1)
        start = time.perf_counter()
        for _ in range(n):
            await run_in_worker(int, 1)
        return (time.perf_counter() - start) / n * 1000

    return asyncio.run(go())


def fit(sizes: list[int], values: list[float]) -> tuple[float, float]:
    slope, intercept = statistics.linear_regression(sizes, values)
    return intercept, slope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 2000])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs per size")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    run_cost(TASKS[0], 20, args.concurrency)  # warm imports and caches
    load = os.getloadavg()[0]
    floor, hop = fs_floor_ms(), hand_off_ms()
    rows = ["| task | per attempt, wall (ms) | per attempt, CPU (ms) | direct tool calls (ms) | "
            "file-system floor (ms) | aeh's own, wall (ms) | aeh's own, CPU (ms) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    verdicts = []
    for task in TASKS:
        costs = [min(run_cost(task, n, args.concurrency) for _ in range(args.repeats)) for n in args.sizes]
        _, wall = fit(args.sizes, [c[0] for c in costs])
        _, cpu = fit(args.sizes, [c[1] for c in costs])
        _, direct = fit(args.sizes, [min(direct_cost(task, n) for _ in range(args.repeats)) for n in args.sizes])
        fs = floor if task == TASKS[0] else 0.0
        own_wall = wall * 1000 - direct * 1000 - fs
        own_cpu = cpu * 1000 - direct * 1000 - fs
        verdicts.append((task, own_wall, own_cpu))
        rows.append(f"| `{task}` | {wall * 1000:.3f} | {cpu * 1000:.3f} | {direct * 1000:.4f} | "
                    f"{fs:.3f} | **{own_wall:.3f}** | {own_cpu:.3f} |")
        print(rows[-1], flush=True)
    load_after = os.getloadavg()[0]
    summary = "; ".join(f"`{t}` {w:.2f} ms wall / {c:.2f} ms CPU ({'meets' if w <= TARGET_MS else 'misses'} "
                        f"the {TARGET_MS} ms target)" for t, w, c in verdicts)
    body = "\n".join([
        f"## attempt_overhead — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/attempt_overhead.py --sizes {' '.join(map(str, args.sizes))}`: mock adapter with "
        f"`latency_s=0`, concurrency {args.concurrency}, best of {args.repeats}; load average {load:.1f} before, "
        f"{load_after:.1f} after. Per-attempt figures are least-squares slopes over the sizes; \"aeh's own\" "
        "subtracts the direct tool calls and, for the file task, the file-system floor.", "",
        *rows, "",
        f"Baselines in the same run: file-system floor (mkdir + one file write + removal) {floor:.3f} ms per "
        f"attempt; one worker-thread hand-off {hop:.3f} ms.", "",
        f"aeh's own overhead per attempt: {summary}.",
    ])
    publish("attempt_overhead", body, args.write)


if __name__ == "__main__":
    main()

"""Ray speed-up on CPU-bound attempts: the local executor vs Ray with 1 and 2 workers.

    .venv/bin/python benchmarks/ray_speedup.py [--attempts 40] [--repeats 2] [--write]

The suite (`benchmarks/cpu_suite`) has four tasks whose one tool burns ~50 ms of CPU while
holding the GIL; the mock adapter runs with no simulated model time (`latency_s=0`), so an
attempt is almost all CPU. The local executor runs every attempt in one process (concurrency 4),
so it uses one core; each Ray worker is its own process. The local Ray cluster (2 CPUs, loopback,
no dashboard) is started once before timing and its start-up is reported apart. Each
configuration runs `--repeats` times; the best wall time counts (the machine is shared).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from pathlib import Path

from _results import machine, write_section

import aeh

SUITE = str(Path(__file__).with_name("cpu_suite"))


def wall(attempts: int, executor: str, workers: int | None) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        aeh.run(SUITE, adapter="mock", attempts=attempts, concurrency=4, seed=1, db=Path(tmp) / "runs.db",
                progress=False, adapter_options={"latency_s": 0}, executor=executor, ray_workers=workers)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=40, help="attempts per task (4 tasks)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="record the figures in RESULTS.md")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # bind to loopback only
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False)
    start_s = time.perf_counter() - started
    rows = []
    try:
        for label, executor, workers in (("local (1 process, concurrency 4)", "local", None),
                                         ("ray, 1 worker", "ray", 1), ("ray, 2 workers", "ray", 2)):
            small = min(wall(1, executor, workers) for _ in range(args.repeats))
            big = min(wall(args.attempts, executor, workers) for _ in range(args.repeats))
            per = (big - small) / (4 * (args.attempts - 1))
            rows.append((label, small, big, per))
            print(f"{label:34} 4 attempts {small:6.2f} s   {4 * args.attempts} attempts {big:6.2f} s   "
                  f"marginal {1000 * per:5.1f} ms/attempt", flush=True)
    finally:
        ray.shutdown()
    base, base_per = rows[0][2], rows[0][3]
    n = 4 * args.attempts
    lines = [f"## ray_speedup — {time.strftime('%Y-%m-%d')}", "", machine(), "",
             f"`benchmarks/cpu_suite` (4 tasks, one ~50 ms CPU-burning tool call per attempt; mock adapter with "
             f"latency_s=0), concurrency 4 per process, best of {args.repeats}. Local Ray cluster with 2 CPUs, "
             f"started once before timing in {start_s:.1f} s (not counted). \"fixed\" is a run of 4 attempts: "
             "for Ray it includes starting the worker processes and loading suite and adapter there. "
             "\"marginal\" is (wall at N − wall at 4) / (N − 4).", "",
             f"| executor | fixed, 4 attempts (s) | wall, {n} attempts (s) | marginal (ms/attempt) "
             "| speed-up, whole run | speed-up, marginal |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for label, small, big, per in rows:
        lines.append(f"| {label} | {small:.2f} | {big:.2f} | {1000 * per:.1f} | {base / big:.2f}× | "
                     f"{base_per / per:.2f}× |")
        print(f"speed-up {label}: whole run {base / big:.2f}x, marginal {base_per / per:.2f}x")
    if args.write:
        write_section("ray_speedup", "\n".join(lines))


if __name__ == "__main__":
    main()

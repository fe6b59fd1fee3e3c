"""Ray speed-up on CPU-bound attempts: the local executor vs Ray with 1 and 2 workers.

    .venv/bin/python benchmarks/ray_speedup.py [--attempts 40] [--repeats 5] [--write]

The suite (`benchmarks/cpu_suite`) has four tasks whose one tool burns ~50 ms of CPU while
holding the GIL; the mock adapter runs with no simulated model time (`latency_s=0`), so an
attempt is almost all CPU. The local executor runs every attempt in one process (concurrency 4),
so it uses one core; each Ray worker is its own process. The local Ray cluster (2 CPUs, loopback,
no dashboard) is started once before timing and its start-up is reported apart.

Measured as in a notebook: the first Ray run of the process starts the workers (reported as
"first run"); every later run reuses them. Then `--repeats` rounds, each running local, Ray with
1 worker and Ray with 2 workers back to back (interleaved, so a change in the machine's load
hits all three alike); the speed-up is the median of the per-round ratios of wall times.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

from _results import machine, write_section

import aeh

SUITE = str(Path(__file__).with_name("cpu_suite"))
CONFIGS = (("local (1 process, concurrency 4)", "local", None), ("ray, 1 worker", "ray", 1),
           ("ray, 2 workers", "ray", 2))


def wall(attempts: int, executor: str, workers: int | None) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        aeh.run(SUITE, adapter="mock", attempts=attempts, concurrency=4, seed=1, db=Path(tmp) / "runs.db",
                progress=False, adapter_options={"latency_s": 0}, executor=executor, ray_workers=workers)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=40, help="attempts per task (4 tasks)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--write", action="store_true", help="record the figures in RESULTS.md")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # bind to loopback only
    import ray

    from aeh.integrations import ray as ray_integration

    started = time.perf_counter()
    for attempt in range(3):  # Ray's start-up deadlines are fixed: a loaded machine may miss one
        before = ray_integration._descendants()
        try:
            ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
            break
        except Exception as exc:  # noqa: BLE001 — "The current node timed out during startup"
            ray.shutdown()
            ray_integration._stop(ray_integration._descendants() - before)  # what the failed start left
            if attempt == 2 or "timed out during startup" not in str(exc):
                raise
            print(f"Ray did not start ({exc}); again", flush=True)
    start_s = time.perf_counter() - started
    n = 4 * args.attempts
    try:
        first_local = wall(args.attempts, "local", None)
        first_ray = wall(args.attempts, "ray", 2)  # starts the two workers
        print(f"first run, {n} attempts: local {first_local:.2f} s, ray 2 workers {first_ray:.2f} s "
              f"(with worker start-up) = {first_local / first_ray:.2f}x", flush=True)
        small = {label: min(wall(1, ex, w) for _ in range(2)) for label, ex, w in CONFIGS}
        rounds: list[dict[str, float]] = []
        for k in range(args.repeats):
            rounds.append({label: wall(args.attempts, ex, w) for label, ex, w in CONFIGS})
            print(f"round {k + 1}: " + "   ".join(f"{label} {t:.2f} s" for label, t in rounds[-1].items())
                  + f"   load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        ray_integration.stop_workers()
        ray.shutdown()
    load = os.getloadavg()[0]
    base = CONFIGS[0][0]
    lines = [f"## ray_speedup — {time.strftime('%Y-%m-%d')}", "", machine(), "",
             f"`benchmarks/cpu_suite` (4 tasks, one ~50 ms CPU-burning tool call per attempt; mock adapter with "
             f"latency_s=0), concurrency 4 per process. Local Ray cluster with 2 CPUs, started once before timing "
             f"in {start_s:.1f} s (not counted). Workers are started by the first Ray run and reused by every "
             f"later one, as in a notebook. {args.repeats} interleaved rounds of local / 1 worker / 2 workers; "
             f"wall times are median (best), the speed-up is the median of the per-round ratios. 1-minute load "
             f"average at the end: {load:.2f} (the 2 cores are shared with other work and with the driver, "
             "which stores every attempt).", "",
             f"First Ray run of the process ({n} attempts, 2 workers, including their start-up): "
             f"{first_ray:.2f} s vs local {first_local:.2f} s = **{first_local / first_ray:.2f}×**.", "",
             f"| executor | 4 attempts, warm (s) | {n} attempts, median (best) (s) | speed-up, whole run (median) |",
             "| --- | ---: | ---: | ---: |"]
    for label, _, _ in CONFIGS:
        times = [r[label] for r in rounds]
        ratio = statistics.median(r[base] / r[label] for r in rounds)
        lines.append(f"| {label} | {small[label]:.2f} | {statistics.median(times):.2f} ({min(times):.2f}) | "
                     f"{ratio:.2f}× |")
        print(f"speed-up {label}: whole run {ratio:.2f}x (median of {args.repeats} interleaved rounds)")
    lines += ["", "Before (workers started by every run, 2026-11-30): 2 workers 1.02× a whole run, 1 worker 0.78×."]
    if args.write:
        write_section("ray_speedup", "\n".join(lines))


if __name__ == "__main__":
    main()

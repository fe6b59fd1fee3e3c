"""What `@aeh.record_step` costs: per call with no recorder active (production) and with one.

    .venv/bin/python benchmarks/record_step_overhead.py [--calls 1000000]

Times a trivial function plain, decorated with no recorder active (the path production code
takes), and decorated inside `aeh.Recorder` (each call becomes a span). Best of 5 repeats, in
nanoseconds per call; prints a Markdown table to paste into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import platform
import timeit

import aeh


def plain(x: int) -> int:
    return x + 1


decorated = aeh.record_step(kind="tool", name="plain")(plain)


def best_ns(fn: object, calls: int) -> float:
    timer = timeit.Timer("f(1)", globals={"f": fn})
    return min(timer.repeat(repeat=5, number=calls)) / calls * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    args = parser.parse_args()
    base = best_ns(plain, args.calls)
    idle = best_ns(decorated, args.calls)
    with aeh.Recorder(task_id="bench"):
        recording = best_ns(decorated, max(args.calls // 100, 1000))
    print(f"Python {platform.python_version()}, {args.calls:,} calls, best of 5\n")
    print("| | ns per call | added |")
    print("| --- | --- | --- |")
    print(f"| plain function | {base:.0f} | |")
    print(f"| `@record_step`, no recorder active | {idle:.0f} | +{idle - base:.0f} ns |")
    print(f"| `@record_step` inside `aeh.Recorder` (a span per call) | {recording:.0f} | +{recording - base:.0f} ns |")


if __name__ == "__main__":
    main()

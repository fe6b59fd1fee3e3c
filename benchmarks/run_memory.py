"""Peak memory of a long run: does `aeh run` stream attempts and spans to the store, or hold them?

    .venv/bin/python benchmarks/run_memory.py [--sizes 1000 10000 100000] [--write]

Each size is a fresh `aeh run` process, as a user starts it: a copy of the smoke suite widened to
100 tasks (its five, plus clones of `capital_first_alphabetically`, since one run allows at most
10,000 attempts per task), the mock adapter with `latency_s=0`, concurrency 8, `--log-level
silent`, into a temp store. The figure is the process's peak resident set (`ru_maxrss` of the finished child).
Baseline, measured in the same run: the peak of a one-attempt-per-task run — interpreter, imports, suite
and store, before any attempt piles up. Target: a 100,000-attempt run in ≤ 1 GB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import machine, publish

AEH = str(Path(sys.executable).parent / "aeh")
TARGET_MB = 1024


def wide_suite(root: Path, tasks: int) -> Path:
    """The smoke suite copied under `root`, with clones of one task until it has `tasks` tasks."""
    import shutil

    import aeh

    source = Path(aeh.__file__).parent / "_bundled" / "suites" / "smoke"
    suite = root / "smoke_wide"
    shutil.copytree(source, suite, symlinks=False)
    template = (suite / "tasks" / "capital_first_alphabetically.yaml").read_text()
    have = len(list((suite / "tasks").glob("*.yaml")))
    for i in range(tasks - have):
        clone = template.replace("id: capital_first_alphabetically", f"id: capital_clone_{i:03d}")
        (suite / "tasks" / f"capital_clone_{i:03d}.yaml").write_text(clone)
    return suite


def peak_rss_mb(attempts: int, concurrency: int, tasks: int) -> tuple[float, float, int]:
    """(peak RSS in MB, wall s, store size in bytes) of one fresh `aeh run` of `attempts` in all."""
    per_task = max(1, attempts // tasks)
    with tempfile.TemporaryDirectory() as tmp:
        suite = wide_suite(Path(tmp), tasks)
        db = Path(tmp) / "runs.db"
        code = (
            "import resource, subprocess, sys, json, time\n"
            "t = time.perf_counter()\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
            "wall = time.perf_counter() - t\n"
            "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, wall]))\n"
        )
        cmd = [sys.executable, "-c", code, AEH, "run", "--suite", str(suite), "--adapter", "mock",
               "--adapter-option", "latency_s=0", "--attempts", str(per_task), "--seed", "1",
               "--concurrency", str(concurrency), "--db", str(db), "--log-level", "silent"]
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CI": "true"})
        if out.returncode != 0:
            raise SystemExit(f"aeh run of {attempts:,} attempts failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
        kb, wall = (float(x) for x in out.stdout.strip().splitlines()[-1].strip("[]").split(","))
        return kb / 1024, wall, db.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    base_mb, base_wall, _ = peak_rss_mb(args.tasks, args.concurrency, args.tasks)
    rows = ["| attempts | peak RSS (MB) | above the baseline (MB) | per 1,000 attempts (MB) | "
            "store (MB) | wall (s) |", "| ---: | ---: | ---: | ---: | ---: | ---: |",
            f"| {args.tasks} (baseline) | {base_mb:.0f} | — | — | — | {base_wall:.1f} |"]
    last = base_mb
    for n in args.sizes:
        mb, wall, size = peak_rss_mb(n, args.concurrency, args.tasks)
        last = mb
        rows.append(f"| {n:,} | {mb:.0f} | {mb - base_mb:.0f} | {(mb - base_mb) / n * 1000:.2f} | "
                    f"{size / 2**20:.0f} | {wall:.1f} |")
        print(rows[-1], flush=True)
    biggest = max(args.sizes)
    verdict = "meets" if last <= TARGET_MB else "misses"
    body = "\n".join([
        f"## run_memory — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/run_memory.py --sizes {' '.join(map(str, args.sizes))}`: fresh `aeh run --suite <smoke widened "
        f"to {args.tasks} tasks> --adapter mock --adapter-option latency_s=0 --concurrency {args.concurrency} "
        "--log-level silent`, "
        "peak resident set of the process.", "", *rows, "",
        f"The {biggest:,}-attempt run peaks at **{last:.0f} MB** ({verdict} the ≤ {TARGET_MB} MB target).",
    ])
    publish("run_memory", body, args.write)


if __name__ == "__main__":
    main()

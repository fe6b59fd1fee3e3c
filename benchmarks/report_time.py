"""How long `aeh report` takes on a smoke run and on a core run, as a user runs it (a fresh process).

    .venv/bin/python benchmarks/report_time.py [--runs 3] [--write]

Each figure is the median wall time of `--runs` fresh `aeh report` processes (papermill executes
the run_suite notebook in a kernel, nbconvert writes one self-contained HTML file). The baseline
measured beside it: a fresh `python -c "import aeh, pandas, matplotlib"` — the imports the kernel
cannot avoid. Targets: ≤ 3 s on a smoke run, ≤ 5 s on a core run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import machine, write_section

import aeh

AEH = [sys.executable, "-m", "aeh.cli"] if not (Path(sys.executable).parent / "aeh").exists() \
    else [str(Path(sys.executable).parent / "aeh")]


def _median(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        env = {**os.environ, "AEH_DB": str(db)}
        runs = {suite: aeh.run(suite, attempts=5, seed=1, db=db, progress=False).attrs["run_id"]
                for suite in ("smoke", "core")}
        baseline = _median([sys.executable, "-c", "import aeh, pandas, matplotlib.pyplot"], args.runs, env)
        figures = {suite: _median([*AEH, "report", "--run-id", rid, "--out", str(Path(tmp) / f"{suite}.html")],
                                  args.runs, env) for suite, rid in runs.items()}
    targets = {"smoke": 3.0, "core": 5.0}
    rows = ["| run | `aeh report` median (s) | target | |", "| --- | ---: | ---: | --- |"]
    rows += [f"| {s} (5 attempts/task) | {v:.2f} | ≤ {targets[s]:.0f} s | {'ok' if v <= targets[s] else 'missed'} |"
             for s, v in figures.items()]
    body = "\n".join([f"## report_time — {time.strftime('%Y-%m-%d')}", "", machine(), "",
                      f"`benchmarks/report_time.py --runs {args.runs}`: fresh processes, median.", "", *rows, "",
                      f"Baseline in the same run: `import aeh, pandas, matplotlib.pyplot` in a fresh process "
                      f"takes {baseline:.2f} s."])
    print(body)
    if args.write:
        write_section("report_time", body)


if __name__ == "__main__":
    main()

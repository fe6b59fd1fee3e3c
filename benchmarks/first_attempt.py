"""CPU time and memory of `import aeh; aeh.run(...)` up to its first attempt, in fresh processes.

    .venv/bin/python benchmarks/first_attempt.py [--runs 5] [--write]

Warm bytecode: aeh, site-packages and the stdlib are byte-compiled first into a private
PYTHONPYCACHEPREFIX (as `import_time.py` does; nothing is written into the repository or the
virtualenv). Each fresh process wraps the mock adapter's `run`, and on its first call records
process CPU (`time.process_time()`, interpreter start included), peak RSS (`ru_maxrss`) and which
heavy modules are loaded. Same window: `python -c pass`, the import of aeh's own dependencies
(pydantic, yaml, regex, orjson, sqlite3, asyncio: the floor of a run) and `import inspect_ai`.
Targets: ≤ 0.4 s CPU, ≤ 150 MB RSS, no pandas/polars/pyarrow/scipy/statsmodels/matplotlib.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _results import machine, publish
from import_time import ROOT, _env, _warm

HEAVY = ("pandas", "polars", "pyarrow", "numpy", "scipy", "statsmodels", "matplotlib")
_REPORT = ("import json, resource, sys, time\n"
           "def report():\n"
           "    print(json.dumps({'cpu': time.process_time(), 'rss_mb': resource.getrusage(resource.RUSAGE_SELF)"
           ".ru_maxrss / 1024, 'heavy': sorted(m for m in HEAVY if m in sys.modules)}), flush=True)\n")
FIRST_ATTEMPT = _REPORT + """
import aeh
from aeh.adapters.mock import MockAdapter
original = MockAdapter.run
async def run(self, task, ctx):
    if not getattr(run, "done", False):
        run.done = True
        report()
    return await original(self, task, ctx)
MockAdapter.run = run
aeh.run("smoke", adapter="mock", attempts=1, seed=1, db=DB, progress=False)
"""
PROGRAMS = {
    "python -c pass (interpreter start)": _REPORT + "report()\n",
    # What any run of aeh loads before its own code: the floor of a pydantic-based harness.
    "import pydantic, yaml, regex, orjson, sqlite3, asyncio (aeh's dependencies: floor)":
        _REPORT + "import asyncio, sqlite3\nimport orjson, pydantic, regex, yaml\nfrom pydantic import BaseModel\n"
        "report()\n",
    "import inspect_ai (peer)": _REPORT + "import inspect_ai\nreport()\n",
    "aeh.run(smoke, mock) at its first attempt": FIRST_ATTEMPT,
}


def measure(program: str, env: dict[str, str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        code = f"HEAVY = {HEAVY!r}; DB = {os.path.join(tmp, 'runs.db')!r}\n{program}"
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
    first: dict[str, object] = json.loads(out.strip().splitlines()[0])
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per program (default 5)")
    parser.add_argument("--prefix", help="an already byte-compiled PYTHONPYCACHEPREFIX to reuse (skips compiling)")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as fresh:
        prefix = args.prefix or fresh
        _warm(prefix)  # quick when `prefix` is already compiled
        env = _env(prefix)
        load = os.getloadavg()[0]
        results: dict[str, list[dict[str, object]]] = {label: [] for label in PROGRAMS}
        for _ in range(args.runs):  # interleaved, so load changes hit every program alike
            for label, program in PROGRAMS.items():
                results[label].append(measure(program, env))
        load_after = os.getloadavg()[0]
    rows = ["| process, measured at | CPU best (s) | CPU median (s) | peak RSS (MB) | heavy modules loaded |",
            "| --- | ---: | ---: | ---: | --- |"]
    for label, runs in results.items():
        cpus = [float(r["cpu"]) for r in runs]  # type: ignore[arg-type]
        rss = max(float(r["rss_mb"]) for r in runs)  # type: ignore[arg-type]
        heavy = sorted({m for r in runs for m in r["heavy"]}) or "none"  # type: ignore[attr-defined]
        rows.append(f"| {label} | {min(cpus):.3f} | {statistics.median(cpus):.3f} | {rss:.0f} | {heavy} |")
    body = "\n".join([
        f"## first_attempt — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/first_attempt.py --runs {args.runs}`: fresh processes with warm bytecode, the "
        f"programs interleaved; process CPU (`time.process_time()`, interpreter start included) and peak RSS at "
        f"the moment the mock adapter's first attempt starts. Load average {load:.1f} before, {load_after:.1f} "
        "after. Targets: ≤ 0.4 s CPU, ≤ 150 MB RSS.", "", *rows])
    publish("first_attempt", body, args.write)


if __name__ == "__main__":
    main()

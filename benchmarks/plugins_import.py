"""CPU time of `import aeh.plugins` against `import aeh`, in fresh processes, warm bytecode.

    .venv/bin/python benchmarks/plugins_import.py [--runs 15] [--write]

Each run starts a fresh interpreter that imports one module; its CPU time (user + system, from
the operating system's accounting of the finished child) is taken, the two commands in turn
(A B A B …) so a drift in the shared machine's speed hits both. Prints the medians and the
median of the per-pair ratios; the target is `import aeh.plugins` ≤ 2× `import aeh`. Also
prints `from aeh.plugins import EvalSuite, Task, ToolRegistry` (what a suite pays) for context.
With --write the figures replace this benchmark's section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine, publish  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = {
    "import aeh": "import aeh",
    "import aeh.plugins": "import aeh.plugins",
    "from aeh.plugins import EvalSuite, Task, ToolRegistry": "from aeh.plugins import EvalSuite, Task, ToolRegistry",
    "python -c pass": "pass",
}


def _cpu_s(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per command (default 15)")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-c", "import aeh.plugins, aeh.models, aeh.suite, aeh.tools"], cwd=ROOT,
                   check=True)  # byte-compile first: warm, the state after an install
    times: dict[str, list[float]] = {label: [] for label in PROGRAMS}
    for _ in range(args.runs):
        for label, code in PROGRAMS.items():
            times[label].append(_cpu_s(code))
    ratios = [p / a for p, a in zip(times["import aeh.plugins"], times["import aeh"], strict=True)]
    ratio = statistics.median(ratios)
    load = os.getloadavg()[0]
    rows = "\n".join(f"| `{label}` | {statistics.median(t):.3f} | {min(t):.3f} | {max(t):.3f} |"
                     for label, t in times.items())
    body = (f"## plugins_import — {date.today().isoformat()}\n\n{machine()} Load {load:.2f} (1-minute average).\n\n"
            f"CPU seconds (user + system) of a fresh process, warm bytecode, {args.runs} runs each, interleaved.\n\n"
            "| command | median | min | max |\n| --- | ---: | ---: | ---: |\n" + rows + "\n\n"
            f"`import aeh.plugins` / `import aeh`, median of the per-run ratios: {ratio:.2f}× "
            f"(target ≤ 2×: {'met' if ratio <= 2 else 'MISSED'}).")
    publish("plugins_import", body, args.write)


if __name__ == "__main__":
    main()

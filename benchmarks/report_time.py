"""How long `aeh report` takes on a smoke run and on a core run, as a user runs it (a fresh process).

    .venv/bin/python benchmarks/report_time.py [--runs 3] [--write] [--no-warm]

Each figure is the median wall time of `--runs` fresh `aeh report` processes, run alternately:
the default (the notebook runs in-process) beside `--kernel python3` (a kernel process, how every
report ran before), so both see the same machine load. Also in the same run, the baseline: a fresh
`python -c "import aeh, pandas, matplotlib.pyplot"`. CPU seconds (user + system, the process and
its kernel) are printed beside each wall time: on a shared machine they move less with the load.

Cold: no byte-compiled files, as this machine's PYTHONDONTWRITEBYTECODE=1 leaves a venv: every
process compiles what it imports. Warm (skipped with --no-warm): every module byte-compiled first
into a private PYTHONPYCACHEPREFIX, the state after a normal `pip install`; nothing is written
into the repository or the virtualenv.

Then one more in-process run of each, timed by phase from inside (`--phases-child`): start-up
imports, papermill import, kernel start, each notebook cell (papermill's per-cell durations),
HTML export. Targets: ≤ 3 s on a smoke run, ≤ 5 s on a core run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from _results import machine, write_section

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"smoke": 3.0, "core": 5.0}
KERNELS = {"in-process": [], "python3 kernel": ["--kernel", "python3"]}


def _aeh() -> list[str]:
    script = Path(sys.executable).parent / "aeh"
    return [str(script)] if script.exists() else [sys.executable, "-m", "aeh.cli"]


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, children included) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def _measure(cmds: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Median wall and CPU per command, the commands interleaved run by run."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            samples[name].append(_timed(cmd, env))
    return {name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
            for name, s in samples.items()}


def _warm(prefix: str) -> None:
    paths = [str(ROOT / "aeh"), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"]]
    env = {**os.environ, "PYTHONPYCACHEPREFIX": prefix, "PYTHONDONTWRITEBYTECODE": ""}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *paths], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def phases_child(run_id: str, db: str, out: str) -> None:
    """Run `aeh report` in this process with timers around its phases; print them as JSON."""
    start = time.perf_counter()
    phases: dict[str, float] = {}

    def timer(label: str, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[label] = phases.get(label, 0.0) + time.perf_counter() - t
        return wrapped

    import aeh.report._lean_imports as lean
    import aeh.report._render as render
    from aeh.cli import main
    phases["start-up imports (aeh CLI, store, report)"] = time.perf_counter() - start
    lean.import_lean = timer("import papermill", lean.import_lean)
    render.export_html = timer("HTML export (nbconvert import + render)", render.export_html)
    render.execute_notebook = timer("papermill execute (total)", render.execute_notebook)
    render.Redactor.redact_text = timer("redaction of the HTML and notebook", render.Redactor.redact_text)
    import nbclient.client as nbc
    for name in ("start_new_kernel", "start_new_kernel_client"):  # the sync wrappers papermill calls
        setattr(nbc.NotebookClient, name, timer("kernel start", getattr(nbc.NotebookClient, name)))
    main(["report", "--run-id", run_id, "--db", db, "--out", out, "--keep-ipynb"])
    phases["total"] = time.perf_counter() - start
    cells = []
    for cell in json.loads(Path(out).with_suffix(".ipynb").read_text())["cells"]:
        if cell["cell_type"] == "code":
            lines = [ln for ln in "".join(cell["source"]).splitlines() if ln.strip() and not ln.startswith("#")]
            cells.append([lines[0][:48] if lines else "", cell["metadata"]["papermill"]["duration"]])
    print(json.dumps({"phases": phases, "cells": cells}))


def _phases(run_id: str, db: Path, out: Path, env: dict[str, str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--phases-child", run_id, str(db), str(out)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _phase_rows(found: dict[str, dict[str, Any]]) -> list[str]:
    suites = list(found)
    rows = [f"| phase (in-process, cold) | {' | '.join(f'{s} (s)' for s in suites)} |",
            "| --- |" + " ---: |" * len(suites)]
    order = ["start-up imports (aeh CLI, store, report)", "import papermill", "kernel start"]
    for label in order:
        rows.append(f"| {label} | " + " | ".join(f"{found[s]['phases'].get(label, 0):.2f}" for s in suites) + " |")
    for i, (source, _) in enumerate(found[suites[0]]["cells"]):
        rows.append(f"| cell {i + 1}: `{source.replace('|', '/')}` | "
                    + " | ".join(f"{found[s]['cells'][i][1]:.2f}" for s in suites) + " |")
    for label in ("HTML export (nbconvert import + render)", "redaction of the HTML and notebook", "total"):
        rows.append(f"| {label} | " + " | ".join(f"{found[s]['phases'].get(label, 0):.2f}" for s in suites) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    parser.add_argument("--no-warm", action="store_true", help="skip the byte-compiled (warm) measurement")
    parser.add_argument("--phases-child", nargs=3, metavar=("RUN_ID", "DB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases_child:
        phases_child(*args.phases_child)
        return
    import aeh

    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        cold = {**os.environ, "AEH_DB": str(db), "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONPYCACHEPREFIX": str(Path(tmp) / "empty-pycache")}
        runs = {suite: aeh.run(suite, attempts=5, seed=1, db=db, progress=False).run_id
                for suite in TARGETS}
        cmds = {"baseline": [sys.executable, "-c", "import aeh, pandas, matplotlib.pyplot"]}
        for suite, rid in runs.items():
            for kernel, extra in KERNELS.items():
                cmds[f"{suite}/{kernel}"] = [*_aeh(), "report", "--run-id", rid,
                                             "--out", str(Path(tmp) / f"{suite}.html"), *extra]
        states = {"cold": cold}
        if not args.no_warm:
            _warm(str(Path(tmp) / "pycache"))
            states["warm"] = {**cold, "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache")}
        figures = {state: _measure(cmds, args.runs, env) for state, env in states.items()}
        loads.append(_load())
        found = {suite: _phases(rid, db, Path(tmp) / f"phases-{suite}.html", cold) for suite, rid in runs.items()}
        loads.append(_load())

    rows = ["| run | bytecode | in-process: wall (s) | CPU (s) | `--kernel python3`: wall (s) | CPU (s) "
            "| target | |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for suite, target in TARGETS.items():
        for state, figs in figures.items():
            wall, cpu = figs[f"{suite}/in-process"]
            old_wall, old_cpu = figs[f"{suite}/python3 kernel"]
            rows.append(f"| {suite} (5 attempts/task) | {state} | {wall:.2f} | {cpu:.2f} | {old_wall:.2f} | "
                        f"{old_cpu:.2f} | ≤ {target:.0f} s | {'ok' if wall <= target else 'missed'} |")
    base = "; ".join(f"{state} {figs['baseline'][0]:.2f} s (CPU {figs['baseline'][1]:.2f} s)"
                     for state, figs in figures.items())
    body = "\n".join([
        f"## report_time — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/report_time.py --runs {args.runs}`: fresh processes, median; in-process and "
        f"`--kernel python3` interleaved. Load average (1 min) at start / after timing / after phases: "
        f"{' / '.join(loads)}.", "", *rows, "",
        f"Baseline in the same run: `import aeh, pandas, matplotlib.pyplot` in a fresh process: {base}.", "",
        "Where an in-process report's time goes (one cold run each, timed inside the process; the `import aeh` cell "
        "imports the analysis stack — aeh.analysis, scipy, statsmodels — and draws nothing):", "",
        *_phase_rows(found)])
    print(body)
    if args.write:
        write_section("report_time", body)


if __name__ == "__main__":
    main()

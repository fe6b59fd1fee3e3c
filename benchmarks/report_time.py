"""How long `aeh report` takes on a smoke run and on a core run, as a user runs it (a fresh process).

    .venv/bin/python benchmarks/report_time.py [--runs 5] [--write] [--cold] [--kernel-process] [--before REV]

As installed: what `uv pip install --compile-bytecode` leaves. site-packages is byte-compiled in
place (its `__pycache__` directories), the interpreter's stdlib is as shipped (with its own
`__pycache__`), and the project is byte-compiled too (`compileall` of `aeh/` into its own
`__pycache__`, as a non-editable install would have it). No PYTHONPYCACHEPREFIX is set: with one,
Python ignores every `__pycache__` beside the sources, stdlib's included. Before timing, one
report runs under `python -v` and the modules it compiled from source are counted (must be 0).

Each figure is the median of `--runs` fresh processes, the commands interleaved run by run so all
see the same machine load: wall time and CPU seconds (user + system, the process and its
children), CPU moving less with the load of a shared machine. Beside the ratio of the medians, a
percentile-bootstrap 95% interval of it (rounds resampled whole): how far the verdict is from the
target in this window. In the same window, the floor: a
fresh `python -c "import aeh, pandas, matplotlib.pyplot"`; and, for comparison, the same floor with
OpenBLAS loaded with one thread, as `aeh report` loads it (numpy's default second thread spins for
~0.1 s of CPU after loading, which the floor pays and the report no longer does). `--kernel-process` adds the same
reports with `--kernel python3`; `--cold` repeats everything with no byte-compiled file at all;
`--before REV` adds the same in-process reports run by the aeh of git revision REV (exported and
byte-compiled into a temporary directory, first on sys.path), interleaved with today's.

Then one more in-process run of each, timed by phase from inside (`--phases-child`): start-up
imports, papermill import, each notebook cell (papermill's per-cell durations),
HTML export, the redaction of what is written. And, in the same window, what the mechanism alone
costs: the floor's imports plus papermill's and nbconvert's, and a one-cell notebook run and
exported the way `aeh report` runs and exports the report (its cell importing the floor's modules, and
again importing only `aeh, pandas`, what a run report that draws no figure imports). Targets: CPU ≤ 1.5 × the floor measured in the same
window, for smoke × 5 and core × 5, and a core × 5 report ≤ 1.5 MB (every attempt's trace embedded).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _results import machine, write_section
from _revision import extract_revision

ROOT = Path(__file__).resolve().parents[1]
SUITES = ("smoke", "core")
#: report CPU over the floor's CPU (same window), and the core report's size in bytes
RATIO_TARGET, SIZE_TARGET = 1.5, 1_500_000
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


def _measure(cmds: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU seconds of each command, run by run, the commands interleaved run by run."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            samples[name].append(_timed(cmd, env))
    return samples


def _medians(samples: dict[str, list[tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each command."""
    return {name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
            for name, s in samples.items()}


def ratio_interval(numerator: list[float], denominator: list[float], *, resamples: int = 4000,
                   seed: int = 1) -> tuple[float, float]:
    """A percentile-bootstrap 95% interval of median(numerator) / median(denominator): whole rounds
    resampled (a round ran each command once, interleaved), so a round's load stays paired."""
    import numpy as np

    top, bottom = np.asarray(numerator), np.asarray(denominator)
    rng = np.random.default_rng(seed)
    rounds = rng.integers(0, len(top), size=(resamples, len(top)))
    ratios = np.median(top[rounds], axis=1) / np.median(bottom[rounds], axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def _install_state() -> None:
    """Byte-compile the project as an install would; site-packages was compiled by the install."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "aeh")], check=True,
                   stdout=subprocess.DEVNULL)


def _report_as_of(path: Path, argv: list[str]) -> list[str]:
    """`aeh report …` run by the aeh in `path` instead of the installed one, entered as the `aeh`
    command enters it (`aeh.cli:console`, where that revision has it: it exits without the
    interpreter's teardown; `sys.exit(main(…))` paid ~0.2-0.3 s more CPU for the same code)."""
    code = (f"import sys; sys.path.insert(0, {str(path)!r}); sys.argv = ['aeh', *{argv!r}]; import aeh.cli as cli; "
            f"cli.console() if hasattr(cli, 'console') else sys.exit(cli.main({argv!r}))")
    return [sys.executable, "-c", code]


def _compiled_at_import(cmd: list[str], env: dict[str, str]) -> list[str]:
    """Modules the command compiled from source (`python -v` says `code object from <file>.py`)."""
    verbose = {**env, "PYTHONVERBOSE": "1"}
    done = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=verbose)
    return [line.split("from", 1)[1].strip(" '") for line in done.stderr.splitlines()
            if line.startswith("# code object from") and line.rstrip("'").endswith(".py")]


def phases_child(run_id: str, db: str, out: str) -> None:
    """Run `aeh report` in this process with timers around its phases; print them as JSON."""
    start = time.perf_counter()
    phases: dict[str, float] = {}

    def timer(label: str, fn: Any, main_only: bool = False) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if main_only and threading.current_thread() is not threading.main_thread():
                return fn(*args, **kwargs)  # a cell's own redaction (trace pages) counts in its cell
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
    # First, as `aeh report` does (its later call returns at once): imported after nbclient,
    # jsonschema would build its IRI grammar, a cost the real command never pays.
    t = time.perf_counter()
    lean.import_lean()
    phases["import papermill"] = time.perf_counter() - t
    render.export_node = timer("HTML export (nbconvert import + render)", render.export_node)
    render.run_notebook = timer("papermill execute (total)", render.run_notebook)
    render.Redactor.redact_text = timer("redaction of the HTML and notebook", render.Redactor.redact_text, True)
    main(["report", "--run-id", run_id, "--db", db, "--out", out, "--keep-ipynb"])
    phases["total"] = time.perf_counter() - start
    cells = []
    for cell in json.loads(Path(out).with_suffix(".ipynb").read_text())["cells"]:
        if cell["cell_type"] == "code":
            lines = [ln for ln in "".join(cell["source"]).splitlines() if ln.strip() and not ln.startswith("#")]
            cells.append([lines[0][:48] if lines else "", cell["metadata"]["papermill"]["duration"]])
    print(json.dumps({"phases": phases, "cells": cells}))


#: The mechanism alone: papermill running a one-cell notebook that imports what the floor imports,
#: in process as `aeh report` does, and nbconvert exporting it (the same export, the same redaction).
_MECHANISM = """
import sys
from pathlib import Path
from aeh.report import import_lean
import_lean()  # first, as `aeh report` does: nbformat imported before it would pull in every format checker
import nbformat
from aeh.report import execute_notebook, export_html
from aeh.store import Redactor
tmp = Path(sys.argv[1])
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("run_id = None"),
                                     nbformat.v4.new_code_cell(sys.argv[2])])
nb.cells[0].metadata["tags"] = ["parameters"]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbformat.write(nb, tmp / "floor.ipynb")
execute_notebook(tmp / "floor.ipynb", {"run_id": "x"}, tmp / "floor-out.ipynb")
(tmp / "floor.html").write_text(Redactor().redact_text(export_html(tmp / "floor-out.ipynb")))
"""
#: The imports alone: the floor's, then papermill's (lean, as `aeh report` imports it) and nbconvert's.
_IMPORTS = ("import aeh, pandas, matplotlib.pyplot; from aeh.report import import_lean; import_lean(); "
            "import nbconvert")


def _phases(run_id: str, db: Path, out: Path, env: dict[str, str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--phases-child", run_id, str(db), str(out)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _phase_rows(found: dict[str, dict[str, Any]]) -> list[str]:
    suites = list(found)
    rows = [f"| phase (in-process, as installed) | {' | '.join(f'{s} (s)' for s in suites)} |",
            "| --- |" + " ---: |" * len(suites)]
    order = ["start-up imports (aeh CLI, store, report)", "import papermill"]
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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    parser.add_argument("--cold", action="store_true", help="also measure with no byte-compiled file at all")
    parser.add_argument("--kernel-process", action="store_true", help="also measure `--kernel python3`")
    parser.add_argument("--before", metavar="REV", help="also measure the reports of git revision REV")
    parser.add_argument("--phases-child", nargs=3, metavar=("RUN_ID", "DB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases_child:
        phases_child(*args.phases_child)
        return
    import aeh

    _install_state()
    kernels = {k: v for k, v in KERNELS.items() if args.kernel_process or not v}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        installed = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
        installed.update(AEH_DB=str(db), PYTHONDONTWRITEBYTECODE="1")
        runs = {suite: aeh.run(suite, attempts=5, seed=1, db=db, progress=False).run_id
                for suite in SUITES}
        cmds = {"floor": [sys.executable, "-c", "import aeh, pandas, matplotlib.pyplot"],
                # the floor as `aeh report` loads numpy: OpenBLAS with one thread (aeh._util.blas_threads)
                "floor-1blas": [sys.executable, "-c", "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; "
                                                      "import aeh, pandas, matplotlib.pyplot"],
                "imports": [sys.executable, "-c", _IMPORTS],
                "mechanism": [sys.executable, "-c", _MECHANISM, tmp, "import aeh, pandas, matplotlib.pyplot"],
                # what a run report's cells import now that it draws no figure
                "mechanism-nompl": [sys.executable, "-c", _MECHANISM, tmp, "import aeh, pandas"]}
        for suite, rid in runs.items():
            for kernel, extra in kernels.items():
                cmds[f"{suite}/{kernel}"] = [*_aeh(), "report", "--run-id", rid,
                                             "--out", str(Path(tmp) / f"{suite}.html"), *extra]
        if args.before:
            old = extract_revision(args.before, Path(tmp) / "before")
            for suite, rid in runs.items():
                cmds[f"{suite}/before"] = _report_as_of(old, ["report", "--run-id", rid, "--out",
                                                              str(Path(tmp) / f"{suite}-before.html")])
        compiled = _compiled_at_import(cmds["smoke/in-process"], installed)
        print(f"modules compiled from source while a smoke report ran: {len(compiled)}", *compiled[:20], sep="\n  ")
        states = {"as installed": installed}
        if args.cold:
            states["cold"] = {**installed, "PYTHONPYCACHEPREFIX": str(Path(tmp) / "empty-pycache")}
        loads = [_load()]
        samples = {state: _measure(cmds, args.runs, env) for state, env in states.items()}
        figures = {state: _medians(measured) for state, measured in samples.items()}
        cpu = {state: {name: [c for _, c in runs_of] for name, runs_of in measured.items()}
               for state, measured in samples.items()}
        loads.append(_load())
        found = {suite: _phases(rid, db, Path(tmp) / f"phases-{suite}.html", installed) for suite, rid in runs.items()}
        loads.append(_load())
        sizes = {suite: (Path(tmp) / f"{suite}.html").stat().st_size for suite in runs}

    head = ("| run | bytecode | in-process: wall (s) | CPU (s) | CPU × floor | its bootstrap 95% interval "
            "| report size |")
    if args.kernel_process:
        head += " `--kernel python3`: wall (s) | CPU (s) |"
    rows = [head + " target | |", "| --- | --- |" + " ---: |" * (2 * len(kernels) + 4) + " --- |"]
    for suite in SUITES:
        for state, figs in figures.items():
            floor_cpu = figs["floor"][1]
            wall, cpu_s = figs[f"{suite}/in-process"]
            ratio = cpu_s / floor_cpu
            extra = "".join(f" {figs[f'{suite}/{k}'][0]:.2f} | {figs[f'{suite}/{k}'][1]:.2f} |"
                            for k in kernels if k != "in-process")
            size_ok = suite != "core" or sizes[suite] <= SIZE_TARGET
            target = f"≤ {RATIO_TARGET} × floor" + (f", ≤ {SIZE_TARGET / 1e6:.1f} MB" if suite == "core" else "")
            verdict = "ok" if ratio <= RATIO_TARGET and size_ok else "missed"
            low, high = ratio_interval(cpu[state][f"{suite}/in-process"], cpu[state]["floor"])
            rows.append(f"| {suite} (5 attempts/task) | {state} | {wall:.2f} | {cpu_s:.2f} | {ratio:.2f} | "
                        f"[{low:.2f}, {high:.2f}] | {sizes[suite] / 1e6:.2f} MB |{extra} {target} | {verdict} |")
            print(f"{suite} × 5 ({state}): CPU {cpu_s:.2f} s = {ratio:.2f} × [{low:.2f}, {high:.2f}] the floor "
                  f"({floor_cpu:.2f} s; bootstrap 95% over rounds); "
                  f"report {sizes[suite] / 1e6:.2f} MB; {cpu_s / figs['floor-1blas'][1]:.2f} × the floor with "
                  f"one BLAS thread ({figs['floor-1blas'][1]:.2f} s)")
            if args.before:
                old_wall, old_cpu = figs[f"{suite}/before"]
                old_low, old_high = ratio_interval(cpu[state][f"{suite}/before"], cpu[state]["floor"])
                rows.append(f"| {suite}, aeh as of `{args.before}` | {state} | {old_wall:.2f} | {old_cpu:.2f} | "
                            f"{old_cpu / floor_cpu:.2f} | [{old_low:.2f}, {old_high:.2f}] | |"
                            + " |" * (2 * len(kernels) - 2) + " | before |")
    floor = "; ".join(f"{state} {figs['floor'][0]:.2f} s wall, {figs['floor'][1]:.2f} s CPU"
                      for state, figs in figures.items())
    below = ["| what runs (fresh process, in-process engine) | bytecode | CPU (s) | CPU × floor |",
             "| --- | --- | ---: | ---: |"]
    for state, figs in figures.items():
        floor_cpu = figs["floor"][1]
        for name, label in (("floor", "`import aeh, pandas, matplotlib.pyplot` (the floor)"),
                            ("floor-1blas", "the same with OpenBLAS loaded with one thread, as `aeh report` loads "
                                            "it (its second thread only spins)"),
                            ("imports", "the floor's imports + papermill (lean) + nbconvert, nothing run"),
                            ("mechanism", "papermill runs a one-cell notebook importing the floor's modules; "
                                          "nbconvert exports it; redaction"),
                            ("mechanism-nompl", "the same, the cell importing `aeh, pandas` (a run report draws "
                                                "no figure: matplotlib is not imported)")):
            below.append(f"| {label} | {state} | {figs[name][1]:.2f} | {figs[name][1] / floor_cpu:.2f} |")
        print(f"mechanism alone ({state}): {figs['mechanism'][1]:.2f} s = "
              f"{figs['mechanism'][1] / floor_cpu:.2f} × the floor ({figs['mechanism-nompl'][1] / floor_cpu:.2f} × "
              "without matplotlib); imports alone "
              f"{figs['imports'][1] / floor_cpu:.2f} ×")
    body = "\n".join([
        f"## report_time — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/report_time.py --runs {args.runs}`: fresh processes, median of {args.runs}, the commands "
        f"interleaved run by run. As installed = `uv pip install --compile-bytecode` (site-packages compiled "
        f"in place, stdlib as shipped) and the project byte-compiled; modules compiled from source while a "
        f"smoke report ran (`python -v`): {len(compiled)}. Load average (1 min) at start / after timing / "
        f"after phases: {' / '.join(loads)}.", "", *rows, "",
        f"Floor in the same window: `import aeh, pandas, matplotlib.pyplot` in a fresh process: {floor}.", "",
        "What the product's design costs before any chart or table (same window, same processes "
        "interleaved): executing a notebook with papermill and exporting it with nbconvert.", "",
        *below, "",
        "Where an in-process report's time goes (one run each, as installed, wall seconds timed inside the "
        "process; a cell's time includes what it imports first):", "",
        *_phase_rows(found)])
    print(body)
    if args.write:
        write_section("report_time", body)


if __name__ == "__main__":
    main()

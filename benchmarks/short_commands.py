"""CPU of a whole short command against the CPU of importing the libraries it uses, in fresh processes.

    .venv/bin/python benchmarks/short_commands.py [--runs 5] [--before REV] [--write]

Commands: a one-attempt `aeh run --suite toy_math --adapter mock --attempts 1`, and `aeh compare`
and `aeh gate` of two stored toy_math runs (the gate's baseline saved from the first). Each runs
in a fresh process through `aeh.cli.main`, its output discarded; the figure is the process's CPU
when the command returns (`time.process_time()`, interpreter start included).

Floors, in the same window: a process that only imports libraries. "deps + pandas" is aeh's own
dependencies (pydantic, yaml, regex, orjson, sqlite3, asyncio) and pandas; "+ what the command
uses" adds the other third-party modules the command is found to load (polars, scipy.special for
the Wilson and t quantiles, statsmodels' multiple-testing module for compare's and gate's
Benjamini–Hochberg). Warm bytecode: everything is byte-compiled first into a private
PYTHONPYCACHEPREFIX (as `import_time.py` does). Every program runs once per round, rounds
interleaved, so a load change hits each alike; the table gives medians and the median of each
round's ratio. `--before REV` also times each command with aeh as of git revision REV, in the same
rounds. Target: each command ≤ 1.5× its floor.
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
from pathlib import Path

from _results import machine, publish
from _revision import extract_revision
from import_time import ROOT, _env, _warm

_REPORT = ("import json, sys, time\n"
           "def report():\n"
           "    top = sorted({m.partition('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))\n"
           "    print(json.dumps({'cpu': time.process_time(), 'modules': top}), flush=True)\n")
_COMMAND = _REPORT + ("import contextlib, io\nfrom aeh.cli import main\nsys.argv[0] = 'aeh'\n"
                      "with contextlib.redirect_stdout(io.StringIO()):\n"
                      "    code = main(ARGS)\n"
                      "if code not in (0, 1):  # 1: compare or gate found a regression\n"
                      "    raise SystemExit(f'the command exited {code}')\n"
                      "report()\n")
_DEPS = "import asyncio, sqlite3\nimport orjson, pydantic, regex, yaml\nfrom pydantic import BaseModel\nimport pandas\n"
_RUN_USES = "import polars\nfrom scipy import special\n"
_TEST_USES = "from statsmodels.stats.multitest import multipletests\n"

FLOORS = {
    "deps + pandas": _DEPS,
    "deps + pandas + polars + scipy.special (what a run uses)": _DEPS + _RUN_USES,
    "… + statsmodels.stats.multitest (what compare and gate use)": _DEPS + _RUN_USES + _TEST_USES,
}
#: Each command and the floor that holds exactly the libraries it uses.
COMMANDS = {
    "aeh run toy_math, mock, 1 attempt": "deps + pandas + polars + scipy.special (what a run uses)",
    "aeh compare A B": "… + statsmodels.stats.multitest (what compare and gate use)",
    "aeh gate --baseline A --run B": "… + statsmodels.stats.multitest (what compare and gate use)",
}


def _args(label: str, tmp: Path, n: int, a: str, b: str) -> list[str]:
    if label.startswith("aeh run"):
        return ["run", "--suite", "toy_math", "--adapter", "mock", "--attempts", "1", "--seed", "1",
                "--db", str(tmp / f"run-{n}.db")]
    if label.startswith("aeh compare"):
        return ["compare", a, b, "--db", str(tmp / "two.db")]
    return ["gate", "--baseline", str(tmp / "baseline.json"), "--run", b, "--db", str(tmp / "two.db")]


def _measure(code: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:  # a command that failed early would time as a fast one
        raise RuntimeError(f"a measured program failed ({done.returncode}): {done.stderr[-2000:]}")
    out = done.stdout
    last: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return last


def _stored_runs(tmp: Path, env: dict[str, str]) -> tuple[str, str]:
    code = ("import aeh, sys\nfrom aeh.cli import main\n"
            f"a = aeh.run('toy_math', adapter='mock', attempts=2, seed=1, db={str(tmp / 'two.db')!r}).run_id\n"
            f"b = aeh.run('toy_math', adapter='mock', attempts=2, seed=2, db={str(tmp / 'two.db')!r}).run_id\n"
            f"main(['baseline', 'save', a, '--out', {str(tmp / 'baseline.json')!r}, '--db', {str(tmp / 'two.db')!r}])\n"
            "print(a, b)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    a, b = out.stdout.strip().splitlines()[-1].split()
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds of fresh processes (default 5)")
    parser.add_argument("--before", metavar="REV", help="also time the commands with aeh as of this git revision")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as prefix, tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        _warm(prefix)
        env = _env(prefix)
        old = None
        if args.before:
            old = extract_revision(args.before, tmp / "before")
            # The shipped suites (aeh/_bundled/suites links to ../../suites) come along.
            suites = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "suites"], check=True,
                                    capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=suites, check=True)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(old / "aeh")],
                           env={**env, "PYTHONDONTWRITEBYTECODE": ""}, check=True, stdout=subprocess.DEVNULL)
        a, b = _stored_runs(tmp, env)
        load = os.getloadavg()[0]
        cpu: dict[str, list[float]] = {label: [] for label in [*FLOORS, *COMMANDS]}
        modules: dict[str, list[str]] = {}
        ratios: dict[str, list[float]] = {label: [] for label in COMMANDS}
        then: dict[str, list[float]] = {label: [] for label in COMMANDS}
        for n in range(args.runs):
            found: dict[str, float] = {}
            for label, program in FLOORS.items():
                found[label] = float(_measure(_REPORT + program + "report()\n", env)["cpu"])  # type: ignore[arg-type]
            for label in COMMANDS:
                code = _COMMAND.replace("ARGS", repr(_args(label, tmp, n, a, b)))
                result = _measure(code, env)
                found[label] = float(result["cpu"])  # type: ignore[arg-type]
                modules[label] = result["modules"]  # type: ignore[assignment]
                if old is not None:  # the same command, aeh as of --before, first on sys.path
                    boot = f"import sys; sys.path[:0] = [{str(old)!r}]\n"
                    then[label].append(float(_measure(boot + code, env)["cpu"]))  # type: ignore[arg-type]
            for label, value in found.items():
                cpu[label].append(value)
            for label, floor in COMMANDS.items():
                ratios[label].append(found[label] / found[floor])
        load_after = os.getloadavg()[0]
    deps = "deps + pandas"
    rows = ["| process | CPU median (s) | min–max (s) | ÷ deps + pandas | ÷ the libraries it uses "
            "| third-party modules loaded |",
            "| --- | ---: | ---: | ---: | ---: | --- |"]
    for label, values in cpu.items():
        med = statistics.median(values)
        to_deps = f"{med / statistics.median(cpu[deps]):.2f}"
        to_uses = f"{statistics.median(ratios[label]):.2f}" if label in COMMANDS else ""
        mods = ", ".join(m for m in modules.get(label, []) if not m.startswith("_")) if label in COMMANDS else ""
        rows.append(f"| {label} | {med:.3f} | {min(values):.3f}–{max(values):.3f} | {to_deps} | {to_uses} | {mods} |")
    body = "\n".join([
        f"## short_commands — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/short_commands.py --runs {args.runs}`: fresh processes with warm bytecode, rounds interleaved; "
        "process CPU (`time.process_time()`, interpreter start included) when the command returns. "
        f"Load average {load:.1f} before, {load_after:.1f} after. \"÷ the libraries it uses\" is the median of each "
        "round's ratio to the floor that imports exactly the third-party libraries the command loads. "
        "Target: ≤ 1.5×.", "", *rows])
    if old is not None:
        body += "\n".join(["", "", f"The same commands with aeh as of `{args.before}`, in the same rounds:", "",
                           "| command | then: CPU median (s) | ÷ deps + pandas | today (s) | today ÷ then |",
                           "| --- | ---: | ---: | ---: | ---: |",
                           *(f"| {label} | {statistics.median(values):.3f} | "
                             f"{statistics.median(values) / statistics.median(cpu[deps]):.2f} | "
                             f"{statistics.median(cpu[label]):.3f} | "
                             f"{statistics.median(cpu[label]) / statistics.median(values):.2f} |"
                             for label, values in then.items())])
    publish("short_commands", body, args.write)


if __name__ == "__main__":
    main()

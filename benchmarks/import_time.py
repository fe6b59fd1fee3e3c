"""How long `import aeh` and `aeh --help` take, in fresh processes, cold and warm.

    .venv/bin/python benchmarks/import_time.py [--runs 7]

Cold: no bytecode cache at all (an empty PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE=1), the
state of a machine that never byte-compiles. Warm: every module byte-compiled first
(`compileall` into a private PYTHONPYCACHEPREFIX), the state after a normal pip install. Nothing
is written into the repository or the virtualenv. Prints the median wall time of `--runs`
fresh processes for each, then the slowest entries of `python -X importtime -c "import aeh"`.
Targets: `import aeh` ≤ 0.5 s, `aeh --help` ≤ 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "python -c pass (interpreter start)": [sys.executable, "-c", "pass"],
    "import aeh": [sys.executable, "-c", "import aeh"],
    "aeh --help": [sys.executable, "-c", "import sys; from aeh.cli import main; sys.argv[0] = 'aeh'; main(['--help'])"],
}


def _env(prefix: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPYCACHEPREFIX": prefix, "PYTHONDONTWRITEBYTECODE": "1"}


def _median_s(cmd: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _warm(prefix: str) -> None:
    paths = [str(ROOT / "aeh"), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"]]
    env = {**os.environ, "PYTHONPYCACHEPREFIX": prefix, "PYTHONDONTWRITEBYTECODE": ""}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *paths], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _top_imports(env: dict[str, str], n: int) -> list[tuple[int, str]]:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import aeh"], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True).stderr
    rows = []
    for line in out.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per measurement (default 7)")
    parser.add_argument("--top", type=int, default=15, help="-X importtime entries to show (default 15)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cold, tempfile.TemporaryDirectory() as warm:
        _warm(warm)
        print(f"median of {args.runs} fresh processes, Python {sys.version.split()[0]}")
        print(f"{'':38} {'cold (no .pyc)':>15} {'warm (.pyc)':>12}")
        for label, cmd in COMMANDS.items():
            cold_s = _median_s(cmd, _env(cold), args.runs)
            warm_s = _median_s(cmd, _env(warm), args.runs)
            print(f"{label:38} {cold_s:>13.3f} s {warm_s:>10.3f} s")
        heavy = subprocess.run(
            [sys.executable, "-c", "import sys, aeh; print(sorted(m for m in ('pandas', 'polars', 'pyarrow', "
             "'numpy', 'scipy', 'statsmodels', 'matplotlib', 'seaborn', 'nbformat', 'papermill', 'ipywidgets', "
             "'openai', 'httpx') if m in sys.modules))"], env=_env(warm), cwd=ROOT, capture_output=True,
            text=True, check=True).stdout.strip()
        print(f"heavy modules after `import aeh`: {heavy}")
        print("\nslowest imports under `import aeh` (cumulative µs, warm):")
        for cumulative, name in _top_imports(_env(warm), args.top):
            print(f"{cumulative:>10}  {name}")


if __name__ == "__main__":
    main()

"""Verdicts that do not depend on machine load: the same seed of core, idle and under CPU hogs.

    .venv/bin/python benchmarks/load_verdicts.py [--rounds 2] [--hogs 6] [--baseline-src DIR] [--write]

Each round runs `aeh run --suite core --adapter mock --attempts 10 --concurrency 8 --seed 1`
twice, interleaved: once with the machine as idle as it gets (a shared machine: the load
average is recorded beside every figure), once with `--hogs` busy-loop processes competing for
the cores (each bounded by `timeout`). Every attempt of the loaded run is compared with the same
(task, attempt) of the idle run of that round: a difference must be flagged as a harness error,
or it is counted as UNFLAGGED — a verdict the machine's load decided.

`--baseline-src DIR` runs another aeh source tree (e.g. `git archive` of an older commit unpacked
in DIR) the same way, interleaved, to show what the same load did before. `--write` records the
table in benchmarks/RESULTS.md (section `load_verdicts`).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import machine, publish  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUN = ["run", "--suite", "core", "--adapter", "mock", "--attempts", "10", "--concurrency", "8", "--seed", "1"]
RUN_TIMEOUT_S = 600
HOG = "while True: pass"


@contextlib.contextmanager
def hogs(n: int, bound_s: int) -> Iterator[None]:
    """`n` busy loops, each killed by `timeout` after `bound_s` at the latest (and on exit here)."""
    procs = [subprocess.Popen(["timeout", str(bound_s), sys.executable, "-c", HOG]) for _ in range(n)]
    try:
        time.sleep(1.0)  # let them take the cores before the run starts
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


def run_once(db: Path, src: Path | None) -> tuple[float, float]:
    """One `aeh run` into `db` (with `src` first on the path when given); (wall s, load before)."""
    env = dict(os.environ)
    flags = []
    if src is not None:  # -P: the working directory's aeh must not shadow the baseline's
        env["PYTHONPATH"], flags = str(src), ["-P"]
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    started = time.monotonic()
    entry = "import sys; from aeh.cli import main; sys.exit(main())"
    cmd = [sys.executable, *flags, "-c", entry, *RUN, "--db", str(db)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if done.returncode not in (0, 3):
        raise SystemExit(f"aeh run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.monotonic() - started, load


def verdicts(db: Path) -> tuple[dict[tuple[str, int], tuple[bool, str | None, str]], dict[str, Any]]:
    """The run's verdicts per (task, attempt), and its stored harness health (if any)."""
    import json

    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT task_id, attempt, success, failure_bucket, status FROM attempts").fetchall()
        config = json.loads(conn.execute("SELECT config FROM runs").fetchone()[0] or "{}")
    return ({(t, a): (bool(s), b, st) for t, a, s, b, st in rows}, config.get("harness_health") or {})


def figures(label: str, db: Path, wall: float, load: float, idle: dict[Any, Any] | None) -> dict[str, Any]:
    got, health = verdicts(db)
    tasks = sorted({t for t, _ in got})
    rates = [sum(got[(t, a)][0] for a in range(10) if (t, a) in got)
             / max(1, sum((t, a) in got and got[(t, a)][2] != "harness_error" for a in range(10))) for t in tasks]
    buckets = Counter(b for _, b, _ in got.values() if b)
    row: dict[str, Any] = {
        "label": label, "rate": sum(rates) / len(rates), "wall": wall, "load": load,
        "harness_errors": sum(st == "harness_error" for _, _, st in got.values()),
        "tool_error": buckets.get("tool_error", 0), "buckets": buckets, "health": health,
        "changed": 0, "unflagged": 0,
    }
    if idle is not None:
        for key, (ok, bucket, _) in idle.items():
            other = got.get(key)
            if other is None or (other[0], other[1]) == (ok, bucket):
                continue
            row["changed"] += 1
            row["unflagged"] += other[2] != "harness_error"
    return row


def table(rows: list[dict[str, Any]], hogs_n: int) -> str:
    today = dt.date.today().isoformat()
    lines = [f"## load_verdicts — {today}", "", machine() + " Load = 1-minute load average when the run started.", "",
             f"`aeh {' '.join(RUN)}`, idle vs under {hogs_n} CPU hogs (`python -c \"{HOG}\"`), interleaved; "
             "each loaded run compared attempt by attempt with the idle run of its round.", "",
             "| run | suite rate | tool_error | harness errors | verdicts changed | of them unflagged | "
             "stall s (longest) | extended timeouts | wall s | load |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for r in rows:
        h = r["health"]
        stall = f"{h.get('stall_s', 0):g} ({h.get('max_loop_lag_s', 0):g})" if h else "not measured"
        lines.append(f"| {r['label']} | {r['rate']:.3f} | {r['tool_error']} | {r['harness_errors']} | "
                     f"{r['changed'] if 'idle' not in r['label'] else '—'} | "
                     f"{r['unflagged'] if 'idle' not in r['label'] else '—'} | {stall} | "
                     f"{h.get('extended_tool_timeouts', 0) if h else '—'} | {r['wall']:.1f} | {r['load']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hogs", type=int, default=6)
    parser.add_argument("--baseline-src", type=Path, help="another aeh source tree to run the same way")
    parser.add_argument("--write", action="store_true", help="record the table in benchmarks/RESULTS.md")
    parser.add_argument("--keep", type=Path, help="keep the runs' stores in this folder")
    args = parser.parse_args()
    sources: list[tuple[str, Path | None]] = [("this", None)]
    if args.baseline_src:
        sources.append(("baseline", args.baseline_src.resolve()))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="aeh-load-") as scratch:
        tmp = str(args.keep or scratch)
        Path(tmp).mkdir(parents=True, exist_ok=True)
        for rnd in range(1, max(1, args.rounds) + 1):
            for name, src in sources:
                idle_db, load_db = Path(tmp) / f"{name}-{rnd}-idle.db", Path(tmp) / f"{name}-{rnd}-load.db"
                wall, load = run_once(idle_db, src)
                idle_row = figures(f"{name} idle, round {rnd}", idle_db, wall, load, None)
                with hogs(args.hogs, RUN_TIMEOUT_S):
                    wall, load = run_once(load_db, src)
                idle, _ = verdicts(idle_db)
                rows += [idle_row, figures(f"{name} {args.hogs} hogs, round {rnd}", load_db, wall, load, idle)]
                print(f"round {rnd} {name}: idle {idle_row['rate']:.3f}, loaded {rows[-1]['rate']:.3f} "
                      f"({rows[-1]['changed']} changed, {rows[-1]['unflagged']} unflagged)", file=sys.stderr)
    publish("load_verdicts", table(rows, args.hogs), args.write)


if __name__ == "__main__":
    main()

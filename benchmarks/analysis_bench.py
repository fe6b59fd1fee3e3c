"""Analysis benchmark: 100,000 attempts and 1,000,000 spans, then time the public readers.

    .venv/bin/python benchmarks/analysis_bench.py            # build (a few minutes) and time
    .venv/bin/python benchmarks/analysis_bench.py --db /tmp/bench.db   # another store file

Store layout (decided here, documented in RESULTS.md):
- run A ("bench-a"): 1,000 tasks × 100 attempts = 100,000 attempts, 10 spans each = 1,000,000
  spans, one exact grader per attempt, realistic tool calls and a redacting store;
- run B ("bench-b"): the same 100,000 attempts (another seed, a slightly lower success rate)
  with one root span each. `compare` reads only attempts, so B's spans would not change its
  time; they would only double the build time.

Timed (each 3×; first = cold in-process, best = warm): `aeh.load_run(A)`, `aeh.attempts(A)`,
`aeh.compare(A, B)` (target ≤ 0.3 s), plus `aeh.spans(A, one attempt)` and `aeh.pass_k(A)` for
context; beside them, the same way, what SQLite alone costs for each (the floors: the
statements they run, with no frame built) and the row-level fetch `load_run` made before it
aggregated in SQL. Then whole-run `aeh.spans(A)` (target ≤ 1 s and ≤ 300 MB peak RSS added), each read in
a fresh process, beside baselines from the same run: SQLite's own scan of the columns, a plain
sqlite3 fetch of them, and the reader before Arrow columns (dicts parsed from every span).
The built store is kept (default /tmp/aeh-analysis-bench/bench.db) so reruns only time.
Writes the figures into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _results import write_section

import aeh
from aeh.analysis._task_totals import _COUNTS, _TOTALS
from aeh.models import Attempt, GraderResult, RunInfo, Span, ToolCall
from aeh.store import ATTEMPTS_SCHEMA, Store

TASKS, ATTEMPTS, SPANS = 1_000, 100, 10
TARGET_S = 0.3
SPANS_TARGET_S, SPANS_TARGET_MB = 1.0, 300
DEFAULT_DB = Path("/tmp/aeh-analysis-bench/bench.db")


def _info(run_id: str) -> RunInfo:
    return RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T01:00:00Z",
                   aeh_version="0.1.0", suite="bench", suite_hash="b" * 16, adapter="mock", model="mock-strong",
                   seed=1, attempts=ATTEMPTS, concurrency=8, price_table_version="2026.11.1",
                   price_table_date="2026-11-01", status="finished")


def _attempt(run_id: str, task: int, k: int, p: float, spans: int, rng: random.Random) -> tuple[Attempt, list[Span]]:
    task_id = f"task_{task:04d}"
    ok = rng.random() < p
    calls = [ToolCall(name="read_file", args={"path": f"/data/{i}.txt"}, result="ok " * 5, latency_s=0.01,
                      span_id=f"{task_id}-{k}-{2 * i + 1}") for i in range(3)]
    attempt = Attempt(
        run_id=run_id, task_id=task_id, attempt=k, seed=k, success=ok, status="answered",
        failure_bucket=None if ok else "wrong_answer", final_output=f"The answer is {task * k}.",
        tokens_in=rng.randint(100, 5000), tokens_out=rng.randint(10, 500), cost_usd=rng.random() / 100,
        latency_s=rng.random() * 5, steps=3, tool_calls=calls, root_span_id=f"{task_id}-{k}-0",
        grader_results=[GraderResult(kind="exact", name="exact", passed=ok, evidence={"expected": "x"})],
    )
    out = [Span(run_id=run_id, task_id=task_id, attempt=k, span_id=f"{task_id}-{k}-{i}",
                parent_span_id=None if i == 0 else f"{task_id}-{k}-0",
                category="scheduler" if i == 0 else ("tools" if i % 2 else "model"),
                name="attempt" if i == 0 else ("tool:read_file" if i % 2 else "model:call"),
                start_ts=float(i), end_ts=i + 0.5,
                attributes={"gen_ai.request.model": "mock-strong", "gen_ai.usage.input_tokens": 100 * i})
           for i in range(spans)]
    return attempt, out


def build(store: Store, run_id: str, p_base: float, spans: int, seed: int) -> float:
    """Write one run in bulk (10 transactions of 10,000 attempts); returns seconds."""
    rng = random.Random(seed)
    store.create_run(_info(run_id))
    t0 = time.perf_counter()
    batch: list[tuple[Attempt, list[Span]]] = []
    for task in range(TASKS):
        p = min(0.98, max(0.02, p_base + (task % 10 - 5) / 20))  # tasks differ in difficulty
        for k in range(ATTEMPTS):
            batch.append(_attempt(run_id, task, k, p, spans, rng))
        if len(batch) >= 10_000:
            store.write_attempts(batch)
            batch = []
    if batch:
        store.write_attempts(batch)
    return time.perf_counter() - t0


def timeit(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times[0], min(times), out


# One measurement in a fresh interpreter: imports done first, so the figures are the call's own.
# Peak RSS added = the peak RSS during the call (VmHWM, reset just before it) minus the RSS before it.
_PROBE = """
import json, sys, time
import aeh, pandas, polars, pyarrow, sqlite3
from aeh.analysis import _spans
from aeh.store import Store

db, what = sys.argv[1], sys.argv[2]
def status_mb(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024
def reset_peak():  # Linux: writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
COLS = "run_id, task_id, attempt, span_id, parent_span_id, category, name, start_ts, end_ts, status, attributes"
def sqlite_floor():  # SQLite alone touching every value of the columns: no Python object per value
    agg = "+".join(f"length({c})" for c in COLS.split(", "))
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT count(*), sum({agg}) FROM spans WHERE run_id = 'bench-a'").fetchone()[0]
def sqlite_fetch():  # every value fetched as a Python object, nothing built from them
    with sqlite3.connect(db) as conn:
        cur, n = conn.execute(f"SELECT {COLS} FROM spans WHERE run_id = 'bench-a'"), 0
        while chunk := cur.fetchmany(50_000):
            n += len(chunk)
        return n
def old_spans():  # the reader before this change: a frame, then json.loads of every attributes text
    with Store(db) as store:
        frame = store.spans_frame("bench-a").to_pandas()
    frame["attributes"] = [json.loads(a) if a else {} for a in frame["attributes"]]
    return len(frame)
calls = {
    "sqlite_floor": sqlite_floor, "sqlite_fetch": sqlite_fetch, "old_spans": old_spans,
    "spans": lambda: len(aeh.spans("bench-a", db=db)),
    "spans_no_attributes": lambda: len(aeh.spans("bench-a", db=db, columns=[
        "task_id", "attempt", "span_id", "parent_span_id", "category", "name", "start_ts", "end_ts", "status"])),
    "spans_two_keys": lambda: len(aeh.spans("bench-a", db=db, columns=["task_id", "attempt", "name"],
                                            attributes=["gen_ai.request.model", "gen_ai.usage.input_tokens"])),
}
reset_peak()
before, t0 = status_mb("VmRSS"), time.perf_counter()
cpu0 = time.process_time()
rows = calls[what]()
wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
peak = status_mb("VmHWM")
print(json.dumps({"rows": rows, "wall": wall, "cpu": cpu, "rss_added": peak - before}))
"""

SPAN_CASES = [  # (probe name, label, targeted)
    ("sqlite_floor", "baseline: SQLite scan of the 11 columns (no Python objects)", False),
    ("sqlite_fetch", "baseline: sqlite3 fetch of the 11 columns (Python objects, no frame)", False),
    ("old_spans", "before: frame + json.loads of every attributes text", False),
    ("spans", "`aeh.spans(A)` (all columns, attributes as JSON text)", True),
    ("spans_no_attributes", "`aeh.spans(A, columns=[9 columns, no attributes])`", False),
    ("spans_two_keys", "`aeh.spans(A, columns=[3], attributes=[2 keys])`", False),
]


# The columns the per-task table fetched per attempt before it aggregated in SQL.
ROW_LEVEL_COLUMNS = ("attempt", "success", "clean_success", "failure_bucket", "tokens_in", "tokens_out",
                     "cost_usd", "latency_s", "n_injected_faults", "needs_human_review", "error",
                     "n_tool_calls", "queue_s", "grading_s")
ATTEMPTS_COLUMNS = [c for c in ATTEMPTS_SCHEMA if c not in ("run_id", "task_id", "tool_calls", "invariant_results")]


def _grouped(aggregates: dict[str, tuple[str, Any]]) -> str:
    exprs = ", ".join(sql for sql, _ in aggregates.values())
    return f"SELECT task_id, {exprs} FROM attempts WHERE run_id = ? GROUP BY task_id ORDER BY task_id"


def sqlite_floors(db: str) -> list[tuple[str, Callable[[], int]]]:
    """What SQLite alone costs for each targeted call: its statements, every row fetched, no frame."""
    def fetch(*statements: tuple[str, str]) -> int:
        with sqlite3.connect(db) as conn:
            return sum(len(conn.execute(sql, (run,)).fetchall()) for sql, run in statements)

    latency = "SELECT latency_s FROM attempts WHERE run_id = ? ORDER BY task_id, attempt"
    scan = "+".join(f"coalesce(length({c}), 0)" for c in ATTEMPTS_COLUMNS)
    return [
        ("SQLite for `load_run(A)`: per-task aggregates + the latency column",
         lambda: fetch((_grouped(_TOTALS), "bench-a"), (latency, "bench-a"))),
        ("before: sqlite3 fetch of the 14 attempt columns the row-level table read",
         lambda: fetch((f"SELECT {', '.join(ROW_LEVEL_COLUMNS)} FROM attempts WHERE run_id = ? "
                        "ORDER BY task_id, attempt", "bench-a"))),
        (f"SQLite scan of the {len(ATTEMPTS_COLUMNS)} columns `attempts(A)` reads (no Python objects)",
         lambda: fetch((f"SELECT count(*), sum({scan}) FROM attempts WHERE run_id = ?", "bench-a"))),
        (f"sqlite3 fetch for `attempts(A)`: the {len(ATTEMPTS_COLUMNS)} columns + tier-0 verdicts, no frame",
         lambda: fetch((f"SELECT {', '.join(ATTEMPTS_COLUMNS)} FROM attempts WHERE run_id = ? "
                        "ORDER BY task_id, attempt", "bench-a"),
                       ("SELECT attempt, name, passed FROM grader_results WHERE run_id = ? AND tier = 0 "
                        "ORDER BY task_id, attempt, rowid", "bench-a"))),
        ("SQLite for `compare(A, B)`: per-task counts of both runs",
         lambda: fetch((_grouped(_COUNTS), "bench-a"), (_grouped(_COUNTS), "bench-b"))),
    ]


def load() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def probe(db: Path, what: str, repeat: int) -> dict[str, float]:
    """Best wall time (with its CPU time) and the largest RSS added over `repeat` fresh processes."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _PROBE, str(db), what], capture_output=True, text=True,
                             check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda r: r["wall"])
    return {**best, "rss_added": max(r["rss_added"] for r in runs), "load": load()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=DEFAULT_DB,
                        help=f"store file, built if it lacks the runs (default {DEFAULT_DB}, kept for reruns)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per whole-run spans figure")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args()
    db = args.db
    builds: dict[str, float] = {}
    with Store(db) as store:
        have = {r.run_id for r in store.runs()}
        if "bench-a" not in have:
            builds["A (100k attempts, 1M spans)"] = build(store, "bench-a", 0.7, SPANS, 1)
            print(f"built A in {builds['A (100k attempts, 1M spans)']:.1f} s", flush=True)
        if "bench-b" not in have:
            builds["B (100k attempts, 100k spans)"] = build(store, "bench-b", 0.65, 1, 2)
            print(f"built B in {builds['B (100k attempts, 100k spans)']:.1f} s", flush=True)
    size_mb = db.stat().st_size / 1e6
    dbs = str(db)
    cases = [
        ("aeh.load_run(A)", lambda: aeh.load_run("bench-a", db=dbs), True),
        ("aeh.attempts(A)", lambda: aeh.attempts("bench-a", db=dbs), True),
        ("aeh.compare(A, B)", lambda: aeh.compare("bench-a", "bench-b", db=dbs), True),
        ("aeh.spans(A, one attempt)", lambda: aeh.spans("bench-a", db=dbs, task_id="task_0007", attempt=3), False),
        ("aeh.pass_k(A)", lambda: aeh.pass_k("bench-a", db=dbs), False),
    ]
    rows = []
    for name, fn, targeted in cases:
        first, best, out = timeit(fn)
        verdict = ("ok" if best <= TARGET_S else "MISSED") if targeted else "(context)"
        rows.append((name, len(out), first, best, verdict, load()))
        print(f"{name:<28} {len(out):>9,} rows  first {first:6.3f} s  best {best:6.3f} s  {verdict}  "
              f"load {rows[-1][5]:.2f}", flush=True)
    floors = []
    for label, fn in sqlite_floors(dbs):
        first, best, out = timeit(fn)
        floors.append((label, out, first, best, load()))
        print(f"{label:<88} {out:>9,} rows  first {first:6.3f} s  best {best:6.3f} s  load {floors[-1][4]:.2f}",
              flush=True)
    span_rows = []
    for what, label, targeted in SPAN_CASES:
        r = probe(db, what, args.repeat)
        ok = r["wall"] <= SPANS_TARGET_S and r["rss_added"] <= SPANS_TARGET_MB
        span_rows.append((label, r, ("ok" if ok else "MISSED") if targeted else "(baseline)"))
        print(f"{label:<72} wall {r['wall']:6.2f} s  cpu {r['cpu']:6.2f} s  +{r['rss_added']:6.0f} MB  "
              f"load {r['load']:.2f}", flush=True)
    if not args.no_write:
        write_results(rows, floors, span_rows, builds, size_mb, args.repeat)


def write_results(rows: list[tuple[str, int, float, float, str, float]],
                  floors: list[tuple[str, int, float, float, float]],
                  span_rows: list[tuple[str, dict[str, float], str]], builds: dict[str, float],
                  size_mb: float, repeat: int) -> None:
    today = dt.date.today().isoformat()
    lines = [f"## analysis_bench — {today}", "",
             f"Machine: {os.cpu_count()} cores (shared), {platform.python_implementation()} "
             f"{platform.python_version()}, {platform.system()} {platform.release()}; store {size_mb:.0f} MB "
             "on local disk. Load = 1-minute load average when the figure was taken.", "",
             "Data: run A 1,000 tasks × 100 attempts = 100,000 attempts, 10 spans each (1,000,000 spans); "
             "run B 100,000 attempts, 1 span each (compare reads only attempts). Redacting store.", ""]
    if builds:
        lines += [f"Bulk write {k}: {v:.1f} s." for k, v in builds.items()] + [""]
    lines += [f"| call | rows | first (s) | best of 3 (s) | target ≤ {TARGET_S} s | load |",
              "| --- | ---: | ---: | ---: | --- | ---: |"]
    lines += [f"| `{n}` | {r:,} | {f:.3f} | {b:.3f} | {v} | {ld:.2f} |" for n, r, f, b, v, ld in rows]
    lines += ["", "Beside them, in the same run: SQLite alone (plain `sqlite3`, a fresh connection, rows "
              "fetched as tuples, no frame built) for each call's statements, and the row-level fetch the "
              "per-task table made before it aggregated in SQL:", "",
              "| baseline | rows | first (s) | best of 3 (s) | load |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {n} | {r:,} | {f:.3f} | {b:.3f} | {ld:.2f} |" for n, r, f, b, ld in floors]
    lines += ["", f"Whole-run spans of A (1,000,000 rows), each in a fresh process after its imports; best wall "
              f"of {repeat} (with that run's CPU time), largest peak RSS added:", "",
              f"| read | wall (s) | CPU (s) | peak RSS added (MB) | target ≤ {SPANS_TARGET_S:g} s, "
              f"≤ {SPANS_TARGET_MB} MB | load |", "| --- | ---: | ---: | ---: | --- | ---: |"]
    lines += [f"| {label} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_added']:.0f} | {v} | {r['load']:.2f} |"
              for label, r, v in span_rows]
    write_section("analysis_bench", "\n".join(lines))


if __name__ == "__main__":
    main()

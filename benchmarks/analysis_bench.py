"""Analysis benchmark: 100,000 attempts and 1,000,000 spans, then time the public readers.

    .venv/bin/python benchmarks/analysis_bench.py            # build (a few minutes) and time
    .venv/bin/python benchmarks/analysis_bench.py --db /tmp/bench.db   # reuse a built store

Store layout (decided here, documented in RESULTS.md):
- run A ("bench-a"): 1,000 tasks × 100 attempts = 100,000 attempts, 10 spans each = 1,000,000
  spans, one exact grader per attempt, realistic tool calls and a redacting store;
- run B ("bench-b"): the same 100,000 attempts (another seed, a slightly lower success rate)
  with one root span each. `compare` reads only attempts, so B's spans would not change its
  time; they would only double the build time.

Timed (each 3×; first = cold in-process, best = warm): `aeh.load_run(A)`, `aeh.attempts(A)`,
`aeh.compare(A, B)`, plus `aeh.spans(A, one attempt)` and `aeh.pass_k(A)` for context. Target:
< 2 s each. Writes the figures into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aeh
from aeh.models import Attempt, GraderResult, RunInfo, Span, ToolCall
from aeh.store import Store

TASKS, ATTEMPTS, SPANS = 1_000, 100, 10
TARGET_S = 2.0
RESULTS = Path(__file__).with_name("RESULTS.md")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="store file (built if empty); default: a temp file")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp(prefix="aeh-bench-")) / "bench.db"
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
        verdict = ("ok" if best < TARGET_S else "MISSED") if targeted else "(context)"
        rows.append((name, len(out), first, best, verdict))
        print(f"{name:<28} {len(out):>9,} rows  first {first:6.3f} s  best {best:6.3f} s  {verdict}", flush=True)
    if not args.no_write:
        write_results(rows, builds, size_mb)


def write_results(rows: list[tuple[str, int, float, float, str]], builds: dict[str, float], size_mb: float) -> None:
    today = dt.date.today().isoformat()
    lines = [f"## analysis_bench — {today}", "",
             f"Machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}, "
             f"{platform.system()} {platform.release()}; store {size_mb:.0f} MB on local disk.", "",
             "Data: run A 1,000 tasks × 100 attempts = 100,000 attempts, 10 spans each (1,000,000 spans); "
             "run B 100,000 attempts, 1 span each (compare reads only attempts). Redacting store.", ""]
    if builds:
        lines += [f"Bulk write {k}: {v:.1f} s." for k, v in builds.items()] + [""]
    lines += ["| call | rows | first (s) | best of 3 (s) | target < 2 s |", "| --- | ---: | ---: | ---: | --- |"]
    lines += [f"| `{n}` | {r:,} | {f:.3f} | {b:.3f} | {v} |" for n, r, f, b, v in rows]
    section = "\n".join(lines) + "\n"
    marker = "<!-- analysis_bench -->"
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    if marker in old:
        head, _, tail = old.partition(marker)
        rest = tail.split("<!-- /analysis_bench -->", 1)[-1]
        text = f"{head}{marker}\n{section}<!-- /analysis_bench -->{rest}"
    else:
        text = f"{old.rstrip()}\n\n{marker}\n{section}<!-- /analysis_bench -->\n"
    RESULTS.write_text(text)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

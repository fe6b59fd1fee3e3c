"""Quick store benchmark: bulk-write N attempts with S spans each, then time the readers.

    .venv/bin/python benchmarks/store_bench.py --attempts 100000 --spans-per-attempt 10

Prints write throughput and the time of attempts_frame / spans_frame / grader_frame on the
biggest run. The main benchmark lives elsewhere; this one checks the store alone.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from aeh.models import Attempt, GraderResult, InvariantResult, RunInfo, Span, ToolCall
from aeh.store import Redactor, Store


def _run_info(run_id: str, attempts: int) -> RunInfo:
    return RunInfo(
        run_id=run_id, created_at="2025-01-01T00:00:00Z", aeh_version="0.1.0", suite="core",
        suite_hash="abc", adapter="mock", model="mock-1", seed=1, attempts=attempts,
        concurrency=8, price_table_version="1", price_table_date="2025-01-01",
    )  # fmt: skip


def _attempt(run_id: str, task: int, k: int, spans: int, rng: random.Random) -> tuple:
    task_id = f"task_{task:04d}"
    calls = [
        ToolCall(name="read_file", args={"path": f"/data/{i}.txt"}, result="ok " * 5)
        for i in range(3)
    ]
    ok = rng.random() < 0.7
    a = Attempt(
        run_id=run_id, task_id=task_id, attempt=k, seed=k, success=ok, status="answered",
        failure_bucket=None if ok else "wrong_answer", final_output=f"The answer is {task * k}.",
        tokens_in=rng.randint(100, 5000), tokens_out=rng.randint(10, 500),
        cost_usd=None if task % 50 == 0 else rng.random() / 100, latency_s=rng.random() * 5,
        steps=5, tool_calls=calls,
        grader_results=[GraderResult(kind="exact", name="exact", passed=ok, evidence={"x": 1})],
        invariant_results=[InvariantResult(name="no_secret_leak", passed=True)],
        root_span_id=f"{task_id}-{k}-0",
    )  # fmt: skip
    ss = [
        Span(
            run_id=run_id, task_id=task_id, attempt=k, span_id=f"{task_id}-{k}-{i}",
            parent_span_id=None if i == 0 else f"{task_id}-{k}-0",
            category="tools" if i % 2 else "model", name=f"step{i}", start_ts=float(i),
            end_ts=i + 0.5, attributes={"gen_ai.request.model": "mock-1", "i": i},
        )  # fmt: skip
        for i in range(spans)
    ]
    return a, ss


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--attempts", type=int, default=100_000)
    p.add_argument("--spans-per-attempt", type=int, default=10)
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--db", type=Path, default=None)
    p.add_argument("--no-redact", action="store_true")
    args = p.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "bench.db"
    store = Store(db, redactor=Redactor(enabled=not args.no_redact))
    if store.latest_run_id() is None:
        rng = random.Random(0)
        store.create_run(_run_info("bench-run", args.attempts // args.tasks))
        t0 = time.perf_counter()
        per_task = args.attempts // args.tasks
        batch = []
        for n in range(args.attempts):
            batch.append(_attempt("bench-run", n // per_task, n % per_task, args.spans_per_attempt, rng))
            if len(batch) == 1000:
                store.write_attempts(batch)
                batch = []
        if batch:
            store.write_attempts(batch)
        dt = time.perf_counter() - t0
        print(f"write: {args.attempts} attempts in {dt:.1f} s ({args.attempts / dt:,.0f}/s, "
              "including model building)")  # fmt: skip
    for name, fn in [
        ("attempts_frame", lambda: store.attempts_frame("bench-run")),
        ("grader_frame", lambda: store.grader_frame("bench-run")),
        ("spans_frame(one attempt)", lambda: store.spans_frame("bench-run", "task_0007", 3)),
        ("spans_frame(run)", lambda: store.spans_frame("bench-run")),
    ]:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            frame = fn()
            times.append(time.perf_counter() - t0)
        print(f"{name}: {frame.height:,} rows, best {min(times):.3f} s, first {times[0]:.3f} s")
    store.close()
    print(f"db: {db} ({db.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()

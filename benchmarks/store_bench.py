"""Quick store benchmark: bulk-write N attempts with S spans each, then time the readers.

    .venv/bin/python benchmarks/store_bench.py --attempts 100000 --spans-per-attempt 10
    .venv/bin/python benchmarks/store_bench.py --writer [--before REV] [--rounds 5] [--write]

Prints write throughput and the time of attempts_frame / spans_frame / grader_frame on the
biggest run. The main benchmark lives elsewhere; this one checks the store alone.

`--writer`: the store writer's CPU per attempt against SQLite's floor. The attempts (and their
spans) a mock run of `benchmarks/attempt_suite` hands the writer are captured once; each round
then writes all of them into a fresh store with `Store.write_attempts`, 64 a transaction, as the
writer thread does (thread CPU: building, redacting, encoding, compressing and inserting the
rows), and inserts the rows that run stored into the same schema, 64 attempts a transaction
(`attempt_cpu.store_floor_ms`: SQLite alone). `--before REV` also writes the same captured
attempts with aeh as of git revision REV, in the same rounds. Medians of `--rounds`.
Target: the writer ≤ 1.5× the floor.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

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


_WRITE_ALL = """
import json, pickle, sys, tempfile, time
from pathlib import Path
from aeh.store import Store
data = pickle.loads(Path(sys.argv[1]).read_bytes())
out = {}
with tempfile.TemporaryDirectory() as tmp:
    for task, (info, captured) in data.items():
        store = Store(Path(tmp) / f"{task}.db")
        store.create_run(info)
        cpu = time.thread_time()
        for start in range(0, len(captured), 64):
            store.write_attempts(captured[start:start + 64])
        out[task] = (time.thread_time() - cpu) / len(captured) * 1000
        store.close()
print(json.dumps(out))
"""


def _capture(tmp: Path, n: int) -> tuple[Path, dict[str, Path]]:
    """The (attempt, spans) pairs a mock run of each attempt_suite task hands the writer, pickled,
    and each run's store (for the floor's rows)."""
    import pickle

    import aeh
    from aeh.store import _writer

    suite = str(Path(__file__).resolve().with_name("attempt_suite"))
    data, stores = {}, {}
    submit = _writer.AttemptWriter.submit
    for task in ("one_turn", "tool_loop"):
        captured: list[tuple[Attempt, list[Span]]] = []

        def keep(self: _writer.AttemptWriter, attempt: Attempt, spans: Any = (), _into: list = captured) -> None:
            _into.append((attempt, list(spans)))
            submit(self, attempt, spans)

        _writer.AttemptWriter.submit = keep  # type: ignore[method-assign]
        try:
            stores[task] = tmp / f"source-{task}.db"
            aeh.run(suite, adapter="mock", attempts=n, concurrency=4, seed=1, db=stores[task], tasks=[task],
                    progress=False, adapter_options={"latency_s": 0})
        finally:
            _writer.AttemptWriter.submit = submit  # type: ignore[method-assign]
        with Store(stores[task]) as source:
            data[task] = (source.runs()[0], captured)
    path = tmp / "captured.pkl"
    path.write_bytes(pickle.dumps(data))
    return path, stores


def _write_ms(source: Path, captured: Path) -> dict[str, float]:
    """Writer CPU per attempt (ms) of each task, in a fresh process importing aeh from `source`."""
    import json
    import subprocess
    import sys

    boot = f"import sys; sys.path[:0] = [{str(source)!r}]\n{_WRITE_ALL}"
    out = subprocess.run([sys.executable, "-c", boot, str(captured)], capture_output=True, text=True,
                         check=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def writer_main(args: argparse.Namespace) -> None:
    import os
    import statistics
    import sys

    from _results import machine, publish
    from _revision import ROOT, extract_revision
    from attempt_cpu import store_floor_ms, stored_rows

    with tempfile.TemporaryDirectory() as work:
        tmp = Path(work)
        captured, stores = _capture(tmp, args.attempts_captured)
        old = extract_revision(args.before, tmp / "before") if args.before else None
        load = os.getloadavg()[0]
        tasks = list(stores)
        today: dict[str, list[float]] = {t: [] for t in tasks}
        before: dict[str, list[float]] = {t: [] for t in tasks}
        floor: dict[str, list[float]] = {t: [] for t in tasks}
        rows = {t: stored_rows(stores[t], t) for t in tasks}
        for n in range(args.rounds):  # today, the old revision (first every other round) and the floor in turn
            sources = [(ROOT, today), *([(old, before)] if old is not None else [])]
            for source, into in sources if n % 2 == 0 else sources[::-1]:
                for t, v in _write_ms(source, captured).items():
                    into[t].append(v)
            for t in tasks:
                floor[t].append(store_floor_ms(*rows[t]))
        load_after = os.getloadavg()[0]
    med = statistics.median
    head = "| task | rows an attempt | writer CPU (ms) | SQLite floor (ms) | writer ÷ floor |"
    line = "| --- | ---: | ---: | ---: | ---: |"
    if old is not None:
        head += f" as of `{args.before}` (ms) | ÷ floor |"
        line += " ---: | ---: |"
    table = [head, line]
    for t in tasks:
        n_rows = sum(len(v) for v in rows[t][0].values())
        ratio = med(today[t]) / med(floor[t])
        cells = f"| `{t}` | {n_rows} | {med(today[t]):.3f} | {med(floor[t]):.3f} | {ratio:.2f} |"
        if old is not None:
            cells += f" {med(before[t]):.3f} | {med(before[t]) / med(floor[t]):.2f} |"
        table.append(cells)
    body = "\n".join([
        f"## store_writer — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/store_bench.py --writer --rounds {args.rounds}"
        + (f" --before {args.before}`" if args.before else "`")
        + f": {args.attempts_captured} captured mock attempts of each task written afresh each round (thread CPU per "
        "attempt, redaction on, 64 attempts a transaction) beside SQLite's floor (the rows that run stored, inserted "
        f"into the same schema, 64 attempts a transaction); medians of {args.rounds} rounds, interleaved. Load "
        f"average {load:.1f} before, {load_after:.1f} after. Target: writer ≤ 1.5× floor. "
        f"Python {sys.version.split()[0]}.",
        "", *table])
    publish("store_writer", body, args.write)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--writer", action="store_true", help="the writer's CPU per attempt against SQLite's floor")
    p.add_argument("--before", metavar="REV", help="with --writer: also aeh as of this git revision")
    p.add_argument("--rounds", type=int, default=5, help="with --writer: rounds (default 5)")
    p.add_argument("--attempts-captured", type=int, default=640, help="with --writer: attempts per task")
    p.add_argument("--write", action="store_true", help="with --writer: record the figures in RESULTS.md")
    p.add_argument("--attempts", type=int, default=100_000)
    p.add_argument("--spans-per-attempt", type=int, default=10)
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--db", type=Path, default=None)
    p.add_argument("--no-redact", action="store_true")
    args = p.parse_args()
    if args.writer:
        writer_main(args)
        return
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

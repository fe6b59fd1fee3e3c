"""Store size per attempt beside Inspect AI's log of the same run.

    .venv/bin/python benchmarks/store_size.py                 # 50 samples × 4 epochs
    .venv/bin/python benchmarks/store_size.py --samples 20 --epochs 2 --no-write

One run is made once, by Inspect AI (its `mockllm/model`, `generate()` then `match()`), and its
`.eval` log is imported with `aeh.importers.import_inspect_logs` into a fresh store, so both
files hold the same attempts. The store is checkpointed and vacuumed before it is measured
(the size a finished run leaves on disk). Where the store's bytes go comes from SQLite's
`dbstat` table (pages per table and index) and, for the spans, the summed byte length of each
column. Writes the figures into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sqlite3
import tempfile
import time
from pathlib import Path

from _results import machine, write_section

from aeh.importers import import_inspect_logs
from aeh.store import Store

SPAN_COLUMNS = ("run_id", "task_id", "attempt", "span_id", "parent_span_id", "category", "name", "start_ts",
                "end_ts", "status", "attributes")


def inspect_run(samples: int, epochs: int, log_dir: Path) -> Path:
    """Run a mock task through Inspect AI; the path of its `.eval` log."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    dataset = [Sample(input=f"What is {i} + {i}? Answer with the number only.", target=str(2 * i), id=f"s{i:03d}")
               for i in range(samples)]
    task = Task(dataset=dataset, solver=[generate()], scorer=match(), epochs=epochs, name="size_bench")
    logs = eval(task, model="mockllm/model", log_dir=str(log_dir), display="none", log_format="eval")
    if logs[0].status != "success":  # the samples it finished are still the same run in both files
        print(f"Inspect's run ended with status {logs[0].status!r}: comparing the samples it logged")
    return Path(logs[0].location)


def breakdown(db: Path) -> list[tuple[str, int]]:
    """Bytes per table and index (dbstat pages × page size), largest first."""
    with sqlite3.connect(db) as conn:
        return [(n, int(b)) for n, b in conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")]


def span_columns(db: Path) -> list[tuple[str, int]]:
    """Summed byte length of each spans column (text as UTF-8; numbers as their 8-byte width)."""
    exprs = ", ".join(f"coalesce(sum(length(CAST({c} AS BLOB))), 0)" for c in SPAN_COLUMNS)
    with sqlite3.connect(db) as conn:
        sums = conn.execute(f"SELECT {exprs} FROM spans").fetchone()
    return sorted(zip(SPAN_COLUMNS, (int(s) for s in sums), strict=True), key=lambda kv: -kv[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = inspect_run(args.samples, args.epochs, Path(tmp) / "logs")
        db = Path(tmp) / "runs.db"
        cpu0 = time.process_time()
        run_id = import_inspect_logs([log], db=str(db))
        import_cpu = time.process_time() - cpu0
        with Store(db) as store:
            n = store.attempts_frame(run_id, ["attempt"]).height
            n_spans = store.spans_frame(run_id, columns=["span_id"]).height
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
        aeh_bytes, eval_bytes = db.stat().st_size, log.stat().st_size
        parts, cols = breakdown(db), span_columns(db)
    ratio = aeh_bytes / eval_bytes
    print(f"{n} attempts, {n_spans} spans: aeh store {aeh_bytes:,} B ({aeh_bytes / n:,.0f} B/attempt), "
          f"Inspect .eval {eval_bytes:,} B ({eval_bytes / n:,.0f} B/attempt), ratio {ratio:.2f}")
    for name, b in parts:
        print(f"  {name:<36} {b:>10,} B")
    for name, b in cols:
        print(f"  spans.{name:<30} {b:>10,} B")
    if args.no_write:
        return
    lines = [f"## store_size — {dt.date.today().isoformat()}", "", machine(), "",
             f"One run made by Inspect AI {_inspect_version()} (`mockllm/model`, `generate()` + `match()`, "
             f"{args.samples} samples × {args.epochs} epochs asked, {n} attempts logged), "
             f"its `.eval` log imported with `aeh import inspect` ({n_spans} spans) "
             "into a fresh store, checkpointed and vacuumed.", "",
             "| file | bytes | bytes per attempt |", "| --- | ---: | ---: |",
             f"| Inspect `.eval` log | {eval_bytes:,} | {eval_bytes / n:,.0f} |",
             f"| aeh store (`runs.db`) | {aeh_bytes:,} | {aeh_bytes / n:,.0f} |",
             f"| ratio aeh / Inspect | {ratio:.2f} | |", "",
             f"Import CPU time (read, redact, write): {import_cpu:.2f} s, {1000 * import_cpu / n:.1f} ms per attempt.",
             "", "Where the store's bytes go (SQLite `dbstat`, whole pages):", "",
             "| table or index | bytes | share |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {b:,} | {b / aeh_bytes:.0%} |" for name, b in parts]
    lines += ["", "Span columns, summed value lengths (before SQLite's record headers):", "",
              "| column | bytes |", "| --- | ---: |"]
    lines += [f"| {name} | {b:,} |" for name, b in cols]
    write_section("store_size", "\n".join(lines))


def _inspect_version() -> str:
    import inspect_ai

    return str(inspect_ai.__version__)


if __name__ == "__main__":
    main()

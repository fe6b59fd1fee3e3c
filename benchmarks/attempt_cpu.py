"""Per-attempt CPU of a whole aeh run, beside the floors of what it stores and records.

    .venv/bin/python benchmarks/attempt_cpu.py [--sizes 400 2000] [--repeats 3] [--before REV] [--no-inspect] [--write]

The agent is the mock adapter with `latency_s=0` on `benchmarks/attempt_suite`: `one_turn` (no
tools) and `tool_loop` (one pure tool called between model turns). Every span, grader verdict
and trajectory score is stored, with redaction on, as in any run. Each repeat is a fresh process
that measures process CPU at two sizes; the per-attempt figure is the slope (the run's fixed
start cancels out), best of `--repeats`; the main thread's CPU (`time.thread_time` around the
run) and the store writer thread's are split out.

Floors, measured in the same window:
- store: the rows one attempt of the task stores (its attempt, spans, verdicts, scores, as read
  back from a run), inserted afresh into the same schema, 64 attempts a transaction — SQLite's
  share, without building, encoding or redacting anything;
- spans: the same number of spans built as plain tuples with a fresh id and two clock reads —
  what recording costs with no model class, no sinks and no context variable;
- Inspect AI (`mockllm/model`, `generate()` and `match()`, its `.eval` log): the same one-turn
  question, per sample (its token counter given four characters a token: offline, tiktoken
  cannot fetch the encoding it needs).
`--before REV` measures aeh as of git revision REV the same way, each repeat interleaved with
today's, so a before/after comparison shares one window: on a shared
machine the absolute figures move with the host's load, their ratio much less.
Targets: ≤ 0.3 ms CPU per attempt on the tool loop, ≤ 0.2 ms on one turn.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _inspect_offline import count_tokens_offline
from _results import machine, publish
from _revision import ROOT, extract_revision

import aeh
from aeh.store import _writer

SUITE = str(Path(__file__).resolve().with_name("attempt_suite"))
TASKS = {"one_turn": 0.2, "tool_loop": 0.3}
TABLES = ("attempts", "spans", "grader_results", "dimension_scores")


@contextlib.contextmanager
def _writer_cpu(acc: list[float]) -> Iterator[None]:
    """Add the store writer thread's CPU to `acc` while the block runs."""
    drain = _writer.AttemptWriter._drain

    def timed(self: Any) -> None:
        start = time.thread_time()
        try:
            drain(self)
        finally:
            acc.append(time.thread_time() - start)

    _writer.AttemptWriter._drain = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        _writer.AttemptWriter._drain = drain  # type: ignore[method-assign]


def run_cost(task: str, n: int, db: Path) -> tuple[float, float, float]:
    """(process CPU, main-thread CPU, writer-thread CPU) of one run of `n` attempts, in seconds."""
    acc: list[float] = []
    with _writer_cpu(acc):
        cpu, main = time.process_time(), time.thread_time()
        aeh.run(SUITE, adapter="mock", attempts=n, concurrency=4, seed=1, db=db, tasks=[task], progress=False,
                adapter_options={"latency_s": 0})
        return time.process_time() - cpu, time.thread_time() - main, sum(acc)


def slope(sizes: tuple[int, int], low: tuple[float, ...], high: tuple[float, ...]) -> list[float]:
    """Per-attempt milliseconds of each figure between the two sizes."""
    return [(h - lo) / (sizes[1] - sizes[0]) * 1000 for lo, h in zip(low, high, strict=True)]


def stored_rows(db: Path, task: str) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, str]]:
    """One attempt's rows of every table (the first successful attempt of `task`), and each CREATE."""
    with sqlite3.connect(db) as conn:
        run_id = conn.execute("SELECT run_id FROM attempts WHERE task_id = ? LIMIT 1", (task,)).fetchone()[0]
        attempt = conn.execute("SELECT attempt FROM attempts WHERE run_id = ? AND task_id = ? AND success = 1 "
                               "ORDER BY attempt LIMIT 1", (run_id, task)).fetchone()[0]
        rows = {t: conn.execute(f"SELECT * FROM {t} WHERE run_id = ? AND task_id = ? AND attempt = ?",
                                (run_id, task, attempt)).fetchall() for t in TABLES}
        schema = {name: sql for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('table', 'index')")}
    return rows, schema


def store_floor_ms(rows: dict[str, list[tuple[Any, ...]]], schema: dict[str, str], n: int = 1280) -> float:
    """SQLite CPU per attempt to insert `rows` as `n` fresh attempts, 64 a transaction (WAL, no FKs to runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "floor.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        for name, sql in schema.items():
            if name in TABLES or any(f"ON {t} " in sql or f"ON {t}(" in sql for t in TABLES):
                conn.execute(sql)
        placeholders = {t: ", ".join("?" * len(rows[t][0])) for t in TABLES if rows[t]}
        batches = []
        for start in range(0, n, 64):  # the attempt number is the third column of every table
            batch: dict[str, list[tuple[Any, ...]]] = {t: [] for t in placeholders}
            for attempt in range(start, start + 64):
                for t in placeholders:
                    batch[t].extend((*r[:2], attempt, *r[3:]) if t != "spans" else
                                    (*r[:2], attempt, f"{attempt:08x}{r[3][8:]}", *r[4:]) for r in rows[t])
            batches.append(batch)
        cpu = time.thread_time()
        for batch in batches:
            conn.execute("BEGIN")
            for t, values in batch.items():
                conn.executemany(f"INSERT INTO {t} VALUES ({placeholders[t]})", values)
            conn.execute("COMMIT")
        spent = time.thread_time() - cpu
        conn.close()
    return spent / n * 1000


def span_floor_ms(spans_per_attempt: int, n: int = 20_000) -> float:
    """CPU per attempt to record `spans_per_attempt` spans as plain tuples."""
    import random

    ids = random.Random(0)
    cpu = time.thread_time()
    kept = []
    for _ in range(n):
        kept.append([(f"{ids.getrandbits(64):016x}", "name", time.time(), time.time(), {})
                     for _ in range(spans_per_attempt)])
    spent = time.thread_time() - cpu
    return spent / n * 1000


def inspect_ms(sizes: tuple[int, int]) -> tuple[float | None, str]:
    """Inspect AI's process CPU per sample for the one-turn question, or None with the reason."""
    try:
        from inspect_ai import Task, eval
        from inspect_ai.dataset import Sample
        from inspect_ai.scorer import match
        from inspect_ai.solver import generate
    except ImportError as exc:
        return None, f"not installed ({exc})"
    import inspect_ai

    count_tokens_offline()

    def one(n: int) -> float:
        task = Task(dataset=[Sample(input="What is the capital of Kenya? Reply with the city name only.",
                                    target="Nairobi", id=i) for i in range(n)],
                    solver=[generate()], scorer=match(), name="attempt_cpu")
        with tempfile.TemporaryDirectory() as tmp:
            cpu = time.process_time()
            logs = eval(task, model="mockllm/model", log_dir=tmp, display="none", log_format="eval")
            spent = time.process_time() - cpu
        if logs[0].status != "success":
            raise RuntimeError(f"Inspect's run ended {logs[0].status!r}")
        return spent

    try:
        one(10)  # warm its imports and caches
        low, high = min(one(sizes[0]) for _ in range(2)), min(one(sizes[1]) for _ in range(2))
    except Exception as exc:  # noqa: BLE001 - a peer that cannot run here is reported, not fatal
        return None, f"{type(exc).__name__}: {exc}"
    return (high - low) / (sizes[1] - sizes[0]) * 1000, f"Inspect AI {inspect_ai.__version__}"


def child(task: str, sizes: tuple[int, int]) -> None:
    """Print one repeat's per-attempt figures as JSON (run in a fresh process by `in_process`)."""
    with tempfile.TemporaryDirectory() as tmp:
        run_cost(task, 50, Path(tmp) / "warm.db")
        low = run_cost(task, sizes[0], Path(tmp) / "a.db")
        high = run_cost(task, sizes[1], Path(tmp) / "b.db")
    print(json.dumps(slope(sizes, low, high)))


def in_process(source: Path, task: str, sizes: tuple[int, int]) -> tuple[float, ...]:
    """One repeat in a fresh process importing aeh from `source` (an extracted revision or this one)."""
    # Ahead of the working directory and the editable install's finder (which comes after sys.path).
    boot = (f"import sys; sys.path[:0] = [{str(source)!r}, {str(Path(__file__).parent)!r}]; import attempt_cpu; "
            f"attempt_cpu.child({task!r}, {sizes!r})")
    out = subprocess.run([sys.executable, "-c", boot], capture_output=True, text=True, check=True).stdout
    return tuple(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[400, 2000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-inspect", action="store_true")
    parser.add_argument("--before", metavar="REV", help="also measure aeh as of this git revision, interleaved")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    sizes = (args.sizes[0], args.sizes[1])
    load = os.getloadavg()[0]
    rows_out = ["| task | spans / attempt | model calls | aeh CPU (ms) | main thread | store writer | "
                "store floor | span floor | target | |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    before_rows = [f"| task | aeh as of `{args.before}`: CPU (ms) | main thread | store writer | today, same window: "
                   "CPU (ms) | ratio |", "| --- | ---: | ---: | ---: | ---: | ---: |"] if args.before else []
    with tempfile.TemporaryDirectory() as tmp:
        old = extract_revision(args.before, Path(tmp) / "before") if args.before else None
        warm = Path(tmp) / "warm.db"
        figures = {}
        for task, target in TASKS.items():
            run_cost(task, 50, warm)  # the stored attempt the floors insert again
            pairs = [(in_process(ROOT, task, sizes), in_process(old, task, sizes) if old else None)
                     for _ in range(args.repeats)]  # today's and the old revision's repeats interleaved
            total, main_ms, writer_ms = min((p[0] for p in pairs), key=lambda r: r[0])
            rows, schema = stored_rows(warm, task)
            n_spans = len(rows["spans"])
            n_model = sum(1 for r in rows["spans"] if r[5] == "model")
            floor = statistics.median(store_floor_ms(rows, schema) for _ in range(3))
            spans = statistics.median(span_floor_ms(n_spans) for _ in range(3))
            figures[task] = total
            verdict = "met" if total <= target else "missed"
            rows_out.append(f"| `{task}` | {n_spans} | {n_model} | **{total:.3f}** | {main_ms:.3f} | {writer_ms:.3f} | "
                            f"{floor:.3f} | {spans:.3f} | ≤ {target} | {verdict} |")
            print(rows_out[-1], flush=True)
            if old is not None:
                then = min((p[1] for p in pairs if p[1] is not None), key=lambda r: r[0])
                before_rows.append(f"| `{task}` | {then[0]:.3f} | {then[1]:.3f} | {then[2]:.3f} | {total:.3f} | "
                                   f"{then[0] / total:.1f}× less |")
    peer, who = (None, "skipped (--no-inspect)") if args.no_inspect else inspect_ms((50, 250))
    load_after = os.getloadavg()[0]
    peer_line = (f"{who}, one-turn question, in the same window: **{peer:.2f} ms** CPU per sample "
                 f"({peer / figures['one_turn']:.0f}× aeh's `one_turn`)." if peer is not None
                 else f"Inspect AI in the same window: not measured — {who}.")
    body = "\n".join([
        f"## attempt_cpu — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/attempt_cpu.py --sizes {sizes[0]} {sizes[1]} --repeats {args.repeats}`: mock adapter with "
        f"`latency_s=0`, concurrency 4, redaction on, every span, verdict and trajectory score stored. CPU is the "
        f"slope of process CPU between the two sizes, best of {args.repeats}; load average {load:.1f} before, "
        f"{load_after:.1f} after (on 2 cores: other work ran beside it, which inflates CPU figures too).", "",
        *rows_out, "", peer_line, "",
        *([f"Before and after, their repeats interleaved (best of {args.repeats}):", "",
           *before_rows, ""] if before_rows else []),
        f"Python {sys.version.split()[0]}.",
    ])
    publish("attempt_cpu", body, args.write)


if __name__ == "__main__":
    main()

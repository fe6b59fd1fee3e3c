"""Store size per attempt beside Inspect AI's log of the same run.

    .venv/bin/python benchmarks/store_size.py                 # 50 samples × 4 epochs
    .venv/bin/python benchmarks/store_size.py --samples 20 --epochs 2 --no-write

One run is made once, by Inspect AI (its `mockllm/model`, `generate()` then `match()`), and its
`.eval` log is imported with `aeh.importers.import_inspect_logs` into a fresh store, so both
files hold the same attempts (Inspect's token counter offline: `_inspect_offline`). A second
store imports the same log with every span's attributes as text, the format before long values
were compressed (`aeh.store._packed`). The store is checkpointed and vacuumed before it is measured
(the size a finished run leaves on disk). Where the store's bytes go comes from SQLite's
`dbstat` table (pages per table and index) and, for the spans, the summed byte length of each
column. Writes the figures into benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sqlite3
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from _inspect_offline import count_tokens_offline
from _results import machine, write_section

from aeh.importers import import_inspect_logs
from aeh.store import Store, _packed

SPAN_COLUMNS = ("run_id", "task_id", "attempt", "span_id", "parent_span_id", "category", "name", "start_ts",
                "end_ts", "status", "attributes")


def context_text(chars: int, i: int) -> str:
    """A document of about `chars` characters to put before sample `i`'s question: varied lines
    (numbers, names) as a retrieved file or a long conversation gives, not one repeated string."""
    lines, size, k = [], 0, 0
    while size < chars:
        line = (f"{i}.{k}: the handler in src/service_{(i * 31 + k) % 97}.py returned status "
                f"{200 + (k * 17) % 300} after {(k * 7919) % 1000} ms for user {(i * k * 104729) % 10007}.")
        lines.append(line)
        size, k = size + len(line) + 1, k + 1
    return "\n".join(lines)


def inspect_run(samples: int, epochs: int, log_dir: Path, context_chars: int = 0) -> Path:
    """Run a mock task through Inspect AI; the path of its `.eval` log. `context_chars`: a document of
    that size before each question (the model's input, stored by both tools)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    count_tokens_offline()

    def question(i: int) -> str:
        asked = f"What is {i} + {i}? Answer with the number only."
        return f"{context_text(context_chars, i)}\n\n{asked}" if context_chars else asked

    dataset = [Sample(input=question(i), target=str(2 * i), id=f"s{i:03d}") for i in range(samples)]
    task = Task(dataset=dataset, solver=[generate()], scorer=match(), epochs=epochs, name="size_bench")
    logs = eval(task, model="mockllm/model", log_dir=str(log_dir), display="none", log_format="eval")
    if logs[0].status != "success":  # the samples it finished are still the same run in both files
        print(f"Inspect's run ended with status {logs[0].status!r}: comparing the samples it logged")
    return Path(logs[0].location)


@dataclass
class Sizes:
    """One workload's files and what the store's bytes are."""

    label: str
    attempts: int
    spans: int
    inspect: int
    aeh: int
    as_text: int
    floor: int
    import_cpu: float
    parts: list[tuple[str, int]]
    columns: list[tuple[str, int]]
    layouts: list[tuple[str, int]]


def measure(label: str, samples: int, epochs: int, context_chars: int, tmp: Path) -> Sizes:
    """Inspect's log and aeh's store of one run: packed, attributes as text, and the archive floor."""
    log = inspect_run(samples, epochs, tmp / f"logs-{context_chars}", context_chars)
    db, plain_db = tmp / f"runs-{context_chars}.db", tmp / f"plain-{context_chars}.db"
    n, n_spans, import_cpu = imported(log, db)
    with mock.patch.object(_packed, "PACK_AT", 1 << 62):  # every attributes value stored as text
        imported(log, plain_db)
    found = Sizes(label, n, n_spans, log.stat().st_size, db.stat().st_size, plain_db.stat().st_size,
                  archive_bytes(db), import_cpu, breakdown(db), span_columns(db), layouts(db, tmp / "layouts.db"))
    print(f"{label}: {n} attempts, {n_spans} spans: aeh store {found.aeh:,} B, Inspect .eval {found.inspect:,} B "
          f"(ratio {found.aeh / found.inspect:.2f}); attributes as text {found.as_text:,} B "
          f"({found.as_text / found.inspect:.2f}); per-attempt archive {found.floor:,} B "
          f"({found.floor / found.inspect:.2f})")
    return found


def imported(log: Path, db: Path) -> tuple[int, int, float]:
    """Import `log` into a fresh store at `db`, checkpoint and vacuum it: (attempts, spans, import CPU s)."""
    cpu0 = time.process_time()
    run_id = import_inspect_logs([log], db=str(db))
    import_cpu = time.process_time() - cpu0
    with Store(db) as store:
        n = store.attempts_frame(run_id, ["attempt"]).height
        n_spans = store.spans_frame(run_id, columns=["span_id"]).height
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    conn.close()
    return n, n_spans, import_cpu


def archive_bytes(db: Path) -> int:
    """Bytes of the store's own rows kept Inspect's way: one zlib-compressed JSON document per
    attempt (its attempt row, verdicts and spans), no SQL rows and no indexes."""
    total = 0
    with sqlite3.connect(db) as conn:
        keys = conn.execute("SELECT run_id, task_id, attempt FROM attempts").fetchall()
        for key in keys:
            where = "WHERE run_id = ? AND task_id = ? AND attempt = ?"
            document = {
                "attempt": conn.execute(f"SELECT * FROM attempts {where}", key).fetchall(),
                "verdicts": conn.execute(f"SELECT * FROM grader_results {where}", key).fetchall(),
                "scores": conn.execute(f"SELECT * FROM dimension_scores {where}", key).fetchall(),
                "spans": [(*row[:-1], _packed.unpack(row[-1])) for row in conn.execute(
                    f"SELECT {', '.join(SPAN_COLUMNS)} FROM spans {where}", key)],
            }
            total += len(zlib.compress(json.dumps(document, separators=(",", ":")).encode()))
    conn.close()
    return total


#: Cuts of the spans table a migration could make, each on top of the ones before it:
#: (what it is, the SQL that makes it from the stored table).
LAYOUTS = (
    ("spans keyed by their attempt, one b-tree (no rowid, no second index)", """
        CREATE TABLE spans_new (run_id TEXT NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,
            span_id TEXT NOT NULL, parent_span_id TEXT, category TEXT NOT NULL, name TEXT NOT NULL,
            start_ts REAL NOT NULL, end_ts REAL, status TEXT NOT NULL, attributes TEXT NOT NULL,
            PRIMARY KEY (run_id, task_id, attempt, span_id)) WITHOUT ROWID;
        INSERT INTO spans_new SELECT run_id, task_id, attempt, span_id, parent_span_id, category, name,
            start_ts, end_ts, status, attributes FROM spans;
        DROP TABLE spans; ALTER TABLE spans_new RENAME TO spans;"""),
    ("+ the run as a number, not its id's text on every span", """
        CREATE TABLE spans_new (run INTEGER NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,
            span_id TEXT NOT NULL, parent_span_id TEXT, category TEXT NOT NULL, name TEXT NOT NULL,
            start_ts REAL NOT NULL, end_ts REAL, status TEXT NOT NULL, attributes TEXT NOT NULL,
            PRIMARY KEY (run, task_id, attempt, span_id)) WITHOUT ROWID;
        INSERT INTO spans_new SELECT 1, task_id, attempt, span_id, parent_span_id, category, name,
            start_ts, end_ts, status, attributes FROM spans;
        DROP TABLE spans; ALTER TABLE spans_new RENAME TO spans;"""),
    ("+ times as whole microseconds from the attempt's first span", """
        CREATE TABLE spans_new (run INTEGER NOT NULL, task_id TEXT NOT NULL, attempt INTEGER NOT NULL,
            span_id TEXT NOT NULL, parent_span_id TEXT, category TEXT NOT NULL, name TEXT NOT NULL,
            start_us INTEGER NOT NULL, duration_us INTEGER, status TEXT NOT NULL, attributes TEXT NOT NULL,
            PRIMARY KEY (run, task_id, attempt, span_id)) WITHOUT ROWID;
        INSERT INTO spans_new SELECT s.run, s.task_id, s.attempt, s.span_id, s.parent_span_id, s.category, s.name,
            CAST((s.start_ts - f.first) * 1e6 AS INTEGER), CAST((s.end_ts - s.start_ts) * 1e6 AS INTEGER),
            s.status, s.attributes
        FROM spans s JOIN (SELECT task_id, attempt, min(start_ts) AS first FROM spans GROUP BY task_id, attempt) f
            USING (task_id, attempt);
        DROP TABLE spans; ALTER TABLE spans_new RENAME TO spans;"""),
)


def layouts(db: Path, work: Path) -> list[tuple[str, int]]:
    """The store's vacuumed size after each cut of `LAYOUTS` in turn (on a copy)."""
    work.unlink(missing_ok=True)
    with sqlite3.connect(db) as source, sqlite3.connect(work) as target:
        source.backup(target)
    out = []
    conn = sqlite3.connect(work, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")  # in WAL mode the file's size lags the vacuum
        conn.execute("PRAGMA foreign_keys = OFF")
        for label, sql in LAYOUTS:
            conn.executescript(f"BEGIN; {sql} COMMIT;")
            conn.execute("VACUUM")
            out.append((label, work.stat().st_size))
    finally:
        conn.close()
    return out


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
    parser.add_argument("--context-chars", type=int, default=4000,
                        help="size of the document before each question in the long-input run")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [measure("one short question", args.samples, args.epochs, 0, Path(tmp)),
                measure(f"a {args.context_chars:,}-character document, then the question", args.samples,
                        args.epochs, args.context_chars, Path(tmp))]
    if args.no_write:
        return
    lines = [f"## store_size — {dt.date.today().isoformat()}", "", machine(), "",
             f"Runs made by Inspect AI {_inspect_version()} (`mockllm/model`, `generate()` + `match()`, "
             f"{args.samples} samples × {args.epochs} epochs), each `.eval` log imported with "
             "`aeh import inspect` into a fresh store, checkpointed and vacuumed. \"as text\": the same "
             f"import with every span's attributes as JSON text (before values of {_packed.PACK_AT} bytes "
             "or more were stored compressed). Floor: the store's own rows (attempt, verdicts, scores, "
             "spans) as one zlib-compressed JSON document per attempt — Inspect's layout, no SQL rows and "
             "no indexes.", "",
             "| run | attempts | spans | Inspect `.eval` (B/attempt) | aeh store (B/attempt) | aeh / Inspect "
             "| as text (B/attempt) | as text / Inspect | floor (B/attempt) | floor / Inspect "
             "| import CPU (ms/attempt) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r.label} | {r.attempts} | {r.spans} | {r.inspect / r.attempts:,.0f} | {r.aeh / r.attempts:,.0f} "
              f"| **{r.aeh / r.inspect:.2f}** | {r.as_text / r.attempts:,.0f} | {r.as_text / r.inspect:.2f} "
              f"| {r.floor / r.attempts:,.0f} | {r.floor / r.inspect:.2f} | {1000 * r.import_cpu / r.attempts:.1f} |"
              for r in runs]
    for r in runs:
        lines += ["", f"Where the store's bytes go, {r.label} (SQLite `dbstat`, whole pages):", "",
                  "| table or index | bytes | share |", "| --- | ---: | ---: |"]
        lines += [f"| {name} | {b:,} | {b / r.aeh:.0%} |" for name, b in r.parts if b / r.aeh >= 0.02]
        lines += [f"| (the other {sum(b / r.aeh < 0.02 for _, b in r.parts)} tables and indexes) "
                  f"| {sum(b for _, b in r.parts if b / r.aeh < 0.02):,} | |"]
        lines += ["", "Largest span columns (summed value lengths, before SQLite's record headers): "
                  + ", ".join(f"`{name}` {b:,} B" for name, b in r.columns[:4]) + "."]
        lines += ["", f"What a migration of the spans table could save, {r.label} (each cut on top of the ones "
                  "above, measured on a vacuumed copy of the store):", "",
                  "| spans layout | store (B/attempt) | / Inspect |", "| --- | ---: | ---: |",
                  f"| as stored (schema 7) | {r.aeh / r.attempts:,.0f} | {r.aeh / r.inspect:.2f} |"]
        lines += [f"| {label} | {b / r.attempts:,.0f} | {b / r.inspect:.2f} |" for label, b in r.layouts]
    write_section("store_size", "\n".join(lines))


def _inspect_version() -> str:
    import inspect_ai

    return str(inspect_ai.__version__)


if __name__ == "__main__":
    main()
